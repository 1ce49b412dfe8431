"""Workflow set-up shared by tests."""

from __future__ import annotations

from kandev.domain.services import Services
from kandev.domain.workflows import StepFields


async def gate_in_progress(services: Services, workspace_id: str) -> str:
    """Opt the default workflow's In Progress step in to waiting for the completion signal; its id."""
    workflow = (await services.workflows.list_for_workspace(workspace_id))[0]
    steps = (await services.lookups.steps_by_workflow([workflow.id]))[0]
    step = next(s for s in steps if s.name == "In Progress")
    await services.workflows.update_step(step.id, StepFields(auto_advance_requires_signal=True))
    return step.id
