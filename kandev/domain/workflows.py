"""Workflows and steps: reads, the default Kanban workflow, and step lookups used by task moves."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.access import load_workflow, load_workspace
from kandev.domain.context import ServiceContext
from kandev.domain.errors import ConflictError
from kandev.models import Workflow, WorkflowStep
from kandev.models.base import new_id

# Step event actions (stored in WorkflowStep.events, executed by the runtime and workflow engine).
AUTO_START_AGENT = "auto_start_agent"
MOVE_TO_NEXT = "move_to_next"

DEFAULT_WORKFLOW_NAME = "Kanban"
DEFAULT_KANBAN_STEPS: list[dict[str, Any]] = [
    {"name": "Backlog", "is_start_step": True},
    {
        "name": "In Progress",
        "events": {
            "on_enter": [{"type": AUTO_START_AGENT}],
            "on_turn_complete": [{"type": MOVE_TO_NEXT}],
        },
        "auto_advance_requires_signal": True,
    },
    {"name": "Review"},
    {"name": "Done", "is_final_step": True},
]


def add_workflow(
    session: AsyncSession, workspace_id: str, name: str, steps: Sequence[dict[str, Any]]
) -> Workflow:
    """Stage a workflow and its steps, positioned in the given order."""
    workflow = Workflow(id=new_id(), workspace_id=workspace_id, name=name)
    session.add(workflow)
    for position, spec in enumerate(steps):
        session.add(
            WorkflowStep(
                workflow_id=workflow.id,
                position=position,
                name=spec["name"],
                is_start_step=spec.get("is_start_step", False),
                is_final_step=spec.get("is_final_step", False),
                prompt=spec.get("prompt", ""),
                events=spec.get("events", {}),
                auto_advance_requires_signal=spec.get("auto_advance_requires_signal", False),
            )
        )
    return workflow


async def ordered_steps(session: AsyncSession, workflow_id: str) -> list[WorkflowStep]:
    result = await session.scalars(
        select(WorkflowStep).where(WorkflowStep.workflow_id == workflow_id).order_by(WorkflowStep.position)
    )
    return list(result)


def start_step_of(steps: Sequence[WorkflowStep]) -> WorkflowStep:
    """The flagged start step, else the first one."""
    if not steps:
        raise ConflictError("the workflow has no steps")
    return next((s for s in steps if s.is_start_step), steps[0])


def final_step_of(steps: Sequence[WorkflowStep]) -> WorkflowStep:
    """The flagged final step, else the last one."""
    if not steps:
        raise ConflictError("the workflow has no steps")
    return next((s for s in steps if s.is_final_step), steps[-1])


class WorkflowService:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    async def list_for_workspace(self, workspace_id: str) -> list[Workflow]:
        async with self.ctx.read() as session:
            await load_workspace(session, self.ctx.principal, workspace_id)
            result = await session.scalars(
                select(Workflow)
                .where(Workflow.workspace_id == workspace_id)
                .order_by(Workflow.created_at, Workflow.id)
            )
            return list(result)

    async def get(self, workflow_id: str) -> Workflow:
        async with self.ctx.read() as session:
            return await load_workflow(session, self.ctx.principal, workflow_id)
