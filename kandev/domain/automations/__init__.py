"""Workspace automations: definitions, triggers, schedules, templates and runs.

Front door: `service.AutomationService` (as its parts land)."""
