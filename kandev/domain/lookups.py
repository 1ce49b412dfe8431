"""Batch reads behind the API's DataLoaders: one statement per batch, whatever its size.

Callers have already authorized the parent objects whose ids they pass in.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from sqlalchemy import select

from kandev.domain.context import ServiceContext
from kandev.models import PermissionRequest, Session, WorkflowStep
from kandev.models.enums import PendingAction


class Lookups:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    async def steps_by_workflow(self, workflow_ids: Sequence[str]) -> list[list[WorkflowStep]]:
        async with self.ctx.read() as session:
            rows = await session.scalars(
                select(WorkflowStep)
                .where(WorkflowStep.workflow_id.in_(workflow_ids))
                .order_by(WorkflowStep.position)
            )
            grouped: dict[str, list[WorkflowStep]] = defaultdict(list)
            for step in rows:
                grouped[step.workflow_id].append(step)
        return [grouped[i] for i in workflow_ids]

    async def steps_by_id(self, step_ids: Sequence[str]) -> list[WorkflowStep | None]:
        async with self.ctx.read() as session:
            rows = await session.scalars(select(WorkflowStep).where(WorkflowStep.id.in_(step_ids)))
            by_id = {s.id: s for s in rows}
        return [by_id.get(i) for i in step_ids]

    async def sessions_by_task(self, task_ids: Sequence[str]) -> list[list[Session]]:
        """Each task's sessions, primary first, then oldest first."""
        async with self.ctx.read() as session:
            rows = await session.scalars(
                select(Session)
                .where(Session.task_id.in_(task_ids))
                .order_by(Session.is_primary.desc(), Session.created_at, Session.id)
            )
            grouped: dict[str, list[Session]] = defaultdict(list)
            for row in rows:
                grouped[row.task_id].append(row)
        return [grouped[i] for i in task_ids]

    async def pending_actions(self, task_ids: Sequence[str]) -> list[PendingAction]:
        """Derived from durable waits, most urgent first: PERMISSION, CLARIFICATION, COMPLETION_PENDING.

        Permission requests exist now; questions and completion signals join this one query as
        their tables arrive.
        """
        async with self.ctx.read() as session:
            waiting = set(
                await session.scalars(
                    select(PermissionRequest.task_id)
                    .where(PermissionRequest.task_id.in_(task_ids), PermissionRequest.state == "PENDING")
                    .distinct()
                )
            )
        return [PendingAction.PERMISSION if i in waiting else PendingAction.NONE for i in task_ids]
