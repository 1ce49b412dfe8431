"""Recording a turn's usage as its agent reports it (during the turn and at its end), and the task budget it may
spend: a spent budget marks the task (pendingAction BUDGET_REACHED) and holds its queue until a person raises it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.context import ServiceContext, UnitOfWork
from kandev.domain.usage import budgets
from kandev.domain.usage.figures import bound
from kandev.domain.workflow.transitions import emit_task_event
from kandev.models import AgentProfile, AutomationRun, Session, Task, Turn, TurnUsage
from kandev.models.base import utcnow


@dataclass(frozen=True)
class Recorded:
    """What a report changed: a note when figures were clamped, and whether the task's budget is now spent."""

    clamp_note: str | None
    budget_reached: bool


async def _new_row(db: AsyncSession, turn: Turn) -> TurnUsage | None:
    session = await db.get(Session, turn.session_id)
    task = await db.get(Task, session.task_id) if session is not None else None
    if session is None or task is None:
        return None
    profile = await db.get(AgentProfile, session.agent_profile_id) if session.agent_profile_id else None
    # The automation whose run the task worked for when the turn began (a continued session serves many runs).
    automation_id = await db.scalar(
        select(AutomationRun.automation_id)
        .where(AutomationRun.task_id == task.id, AutomationRun.created_at <= turn.started_at)
        .order_by(AutomationRun.created_at.desc(), AutomationRun.id.desc())
        .limit(1)
    )
    row = TurnUsage(
        turn_id=turn.id,
        session_id=session.id,
        task_id=task.id,
        workspace_id=task.workspace_id,
        automation_id=automation_id,
        agent_profile_id=session.agent_profile_id,
        agent_name=profile.name if profile is not None else "",
        input_tokens=0,
        output_tokens=0,
        cache_read_tokens=0,
        cache_write_tokens=0,
        clamped=False,
        recorded_at=turn.started_at,
    )
    db.add(row)
    return row


async def record_usage(ctx: ServiceContext, turn_id: str, report: Mapping[str, Any]) -> Recorded:
    """Merge a report into the turn's usage row (figures the report lacks keep their value), then check the
    task's budget. Never raises for the report's content: bad figures are clamped and noted."""
    figures = bound(report)
    async with ctx.unit_of_work() as uow:
        turn = await uow.db.get(Turn, turn_id)
        if turn is None:
            return Recorded(None, False)
        row = await uow.db.get(TurnUsage, turn_id) or await _new_row(uow.db, turn)
        if row is None:
            return Recorded(None, False)
        for name, value in figures.values.items():
            if value is not None:
                setattr(row, name, value)
        if figures.model:
            row.model = figures.model
        note = "; ".join(figures.notes) or None
        if note:
            row.clamped = True
            row.clamp_note = note[:2000]
        await uow.db.flush()
        reached = await mark_if_spent(uow, row.task_id)
    return Recorded(note, reached)


async def mark_if_spent(uow: UnitOfWork, task_id: str) -> bool:
    """True when the task has a budget and it is spent; the first time, the budget records when and the task's
    pendingAction (BUDGET_REACHED) is announced."""
    row = await budgets.budget_row(uow.db, budgets.TASK, task_id)
    if row is None:
        return False
    view = await budgets.view(uow.db, budgets.TASK, task_id, utcnow())
    if view is None or not view.reached:
        return False
    if row.reached_at is None:
        row.reached_at = utcnow()
        task = await uow.db.get(Task, task_id)
        if task is not None:
            emit_task_event(uow, "UPDATED", task)
    return True


async def ensure_turn_row(ctx: ServiceContext, turn_id: str) -> None:
    """Every ended turn has a usage row (zeros when its agent told nothing), so totals count its turns."""
    await record_usage(ctx, turn_id, {})
