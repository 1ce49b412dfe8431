"""Workflow set-up shared by tests."""

from __future__ import annotations

from kandev.domain.services import Services
from kandev.domain.tasks import CreateTask
from kandev.domain.workflows import StepFields


async def gate_in_progress(services: Services, workspace_id: str) -> str:
    """Opt the default workflow's In Progress step in to waiting for the completion signal; its id."""
    workflow = (await services.workflows.list_for_workspace(workspace_id))[0]
    steps = (await services.lookups.steps_by_workflow([workflow.id]))[0]
    step = next(s for s in steps if s.name == "In Progress")
    await services.workflows.update_step(step.id, StepFields(auto_advance_requires_signal=True))
    return step.id


async def full_review_step(services: Services, workspace_id: str) -> tuple[str, str]:
    """A Review step at its WIP limit of 1 (one task in it) and a second task outside: (task id, step id)."""
    workflow = (await services.workflows.list_for_workspace(workspace_id))[0]
    steps = (await services.lookups.steps_by_workflow([workflow.id]))[0]
    review = next(s for s in steps if s.name == "Review")
    await services.workflows.update_step(review.id, StepFields(wip_limit=1))
    inside, outside = [
        (await services.tasks.create(CreateTask(workspace_id=workspace_id, title=title))).task.id
        for title in ("In review", "Waiting")
    ]
    await services.tasks.move(inside, review.id)
    return outside, review.id
