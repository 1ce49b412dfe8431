"""Workspace MCP servers: definitions, their selection at each scope, and the revisions sessions run with."""
