"""Workspaces and what runs in them: sources, repositories, agent and executor profiles, secrets.

Front door: `service.WorkspaceService`."""
