"""Everything people are waiting to answer in a workspace, as one list oldest first: agents' questions to the
operator, permission requests and autopilot children's questions to their parents, for ordinary tasks and
automation runs' hidden tasks alike."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, func, or_, select
from sqlalchemy.orm import InstrumentedAttribute

from kandev.domain.context import ServiceContext
from kandev.domain.pagination import decode_cursor, encode_cursor
from kandev.domain.scope import load_workspace
from kandev.domain.validation import check_first
from kandev.models import Clarification, ParentQuestion, PermissionRequest, Task

PendingRow = Clarification | PermissionRequest | ParentQuestion

# Each kind and the column naming the task that waits; every kind's pending state is spelled PENDING.
_KINDS: tuple[tuple[type[PendingRow], InstrumentedAttribute[str]], ...] = (
    (Clarification, Clarification.task_id),
    (PermissionRequest, PermissionRequest.task_id),
    (ParentQuestion, ParentQuestion.child_task_id),
)


@dataclass(frozen=True)
class PendingPage:
    rows: list[PendingRow]
    cursors: list[str]
    has_next_page: bool
    total_count: int | None


def _waiting(model: type[PendingRow], task_id: InstrumentedAttribute[str], workspace_id: str) -> list[Any]:
    """Pending items of the workspace's live tasks (neither deleted nor archived)."""
    live = select(Task.id).where(
        Task.workspace_id == workspace_id, Task.deleted_at.is_(None), Task.archived_at.is_(None)
    )
    return [model.state == "PENDING", task_id.in_(live)]


def _after(model: type[PendingRow], position: tuple[datetime, str]) -> Any:
    created_at, item_id = position
    return or_(model.created_at > created_at, and_(model.created_at == created_at, model.id > item_id))


class PendingActionService:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    async def in_workspace(
        self, workspace_id: str, *, first: int = 50, after: str | None = None, count: bool = False
    ) -> PendingPage:
        """Oldest first by (created_at, id) across the three kinds, keyset-paged; one statement per kind
        whatever the page size, and one more for the total when asked."""
        check_first(first)
        position = decode_cursor(after) if after else None
        async with self.ctx.read() as db:
            await load_workspace(db, self.ctx.principal, workspace_id)
            total = None
            if count:
                questions, permissions, parent_questions = (
                    select(func.count())
                    .select_from(model)
                    .where(*_waiting(model, task_id, workspace_id))
                    .scalar_subquery()
                    for model, task_id in _KINDS
                )
                total = await db.scalar(select(questions + permissions + parent_questions))
            rows: list[PendingRow] = []
            for model, task_id in _KINDS:
                conditions = _waiting(model, task_id, workspace_id)
                if position is not None:
                    conditions.append(_after(model, position))
                query = select(model).where(*conditions).order_by(model.created_at, model.id).limit(first + 1)
                rows.extend(await db.scalars(query))
        rows.sort(key=lambda row: (row.created_at, row.id))
        page = rows[:first]
        return PendingPage(
            rows=page,
            cursors=[encode_cursor(row.created_at, row.id) for row in page],
            has_next_page=len(rows) > first,
            total_count=total,
        )
