"""Workflow set-up shared by tests."""

from __future__ import annotations

from typing import Any

from sqlalchemy import update

from kandev.domain.services import Services
from kandev.domain.tasks.service import CreateTask
from kandev.domain.workflow.service import StepFields
from kandev.models import WorkflowStep


async def steps_by_name(services: Services, workspace_id: str) -> dict[str, WorkflowStep]:
    """The steps of the workspace's first (default) workflow, by name."""
    workflow = (await services.workflows.list_for_workspace(workspace_id))[0]
    return {s.name: s for s in (await services.lookups.steps_by_workflow([workflow.id]))[0]}


async def set_events(db: Any, step_id: str, events: dict[str, Any]) -> None:
    """Write a step's event actions straight into the database."""
    async with db.transaction() as s:
        await s.execute(update(WorkflowStep).where(WorkflowStep.id == step_id).values(events=events))


async def gate_in_progress(services: Services, workspace_id: str) -> str:
    """Opt the default workflow's In Progress step in to waiting for the completion signal; its id."""
    step = (await steps_by_name(services, workspace_id))["In Progress"]
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
