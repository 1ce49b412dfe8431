"""The workflow engine: workflows and steps, moves, starts and step rules.

Front door: `service.WorkflowService`."""
