"""How sessions end: a stop cancels what is live, a task reaching its final step completes them."""

from __future__ import annotations

from typing import Any, cast

from sqlalchemy import exists, select, update
from sqlalchemy.engine import CursorResult

from kandev.domain.context import ServiceContext, UnitOfWork
from kandev.domain.events import SessionEnded
from kandev.domain.feeds import emit_session_event
from kandev.domain.session_rows import is_terminal, lock_session, task_sessions
from kandev.domain.sessions.parent_questions import after_session_ended
from kandev.domain.sessions.prompts import cancel_queued
from kandev.domain.sessions.transcript import append_message
from kandev.models import Clarification, ParentQuestion, QueuedPrompt, Session, Task, Turn, WorkflowStep
from kandev.models.base import utcnow
from kandev.models.enums import MessageKind, PromptState, SessionState, TurnState
from kandev.platform.event_bus import StateChange, clarification_channel

# A session in one of these states has an agent execution under way (or about to start).
_ACTIVE_STATES = (SessionState.STARTING, SessionState.RUNNING)


async def request_turn_cancel(uow: UnitOfWork, session_id: str, *, note: str | None = None) -> bool:
    """Flag the session's running turn for cancellation; `note` (who stopped it and why) goes into the
    transcript as a SYSTEM message when a turn was running."""
    running = Turn.session_id == session_id, Turn.state == TurnState.RUNNING, Turn.cancel_requested_at.is_(None)
    turn_id = await uow.db.scalar(select(Turn.id).where(*running))
    result = cast(
        CursorResult[Any],
        await uow.db.execute(
            update(Turn)
            .where(*running)
            .values(cancel_requested_at=utcnow())
            .execution_options(synchronize_session=False)
        ),
    )
    if not result.rowcount:
        return False
    session = await uow.db.get(Session, session_id)
    if note is not None and session is not None:
        await append_message(uow, session, MessageKind.SYSTEM, note, turn_id=turn_id, data={"stopped": True})
    return True


async def cancel_running_turn(
    ctx: ServiceContext, uow: UnitOfWork, session_id: str, *, note: str | None = None
) -> bool:
    """The one cancellation path: the durable flag, then (after commit) a Redis nudge to the worker."""
    if not await request_turn_cancel(uow, session_id, note=note):
        return False
    uow.then(lambda: ctx.jobs.nudge_cancel(session_id))
    return True


async def has_live_execution(uow: UnitOfWork, session: Session) -> bool:
    """Kandev still observes something live: a starting or running turn (a queued prompt a worker will
    claim counts as starting), or a wait on a clarification or a parent's answer."""
    if is_terminal(session):
        return False
    if SessionState(session.state) in _ACTIVE_STATES:
        return True
    checks = (
        select(Turn.id).where(Turn.session_id == session.id, Turn.state == TurnState.RUNNING),
        select(QueuedPrompt.id).where(QueuedPrompt.session_id == session.id, QueuedPrompt.state == PromptState.QUEUED),
        select(Clarification.id).where(Clarification.session_id == session.id, Clarification.state == "PENDING"),
        select(ParentQuestion.id).where(
            ParentQuestion.child_session_id == session.id, ParentQuestion.state == "PENDING"
        ),
    )
    for query in checks:
        if await uow.db.scalar(select(exists(query))):
            return True
    return False


async def cancel_clarifications(uow: UnitOfWork, session_id: str, actor: str) -> None:
    """Pending operator questions of an ended session can no longer resume it; a waiting call wakes."""
    rows = await uow.db.scalars(
        select(Clarification).where(Clarification.session_id == session_id, Clarification.state == "PENDING")
    )
    for row in rows:
        row.state = "CANCELLED"
        row.resolved_at = utcnow()
        row.resolved_by = actor
        uow.emit(clarification_channel(row.id), StateChange(state=row.state))
        uow.note_pending_action(row.task_id)


async def end_session(
    ctx: ServiceContext, uow: UnitOfWork, session: Session, state: SessionState, why: str, *, note: str | None = None
) -> None:
    """Make a (locked) session terminal: its waits end, its running turn is cancelled (with `note` in the
    transcript), its tokens die."""
    await after_session_ended(ctx, uow, session, reason=why)
    await cancel_clarifications(uow, session.id, ctx.principal.actor)
    await cancel_running_turn(ctx, uow, session.id, note=note)
    session.state = state
    session.ended_at = session.updated_at = utcnow()
    emit_session_event(uow, "STATE_CHANGED", session)
    await ctx.publish(uow, SessionEnded(session.id, stopped=state == SessionState.CANCELLED))


async def complete_task_sessions(ctx: ServiceContext, uow: UnitOfWork, task: Task, step: WorkflowStep) -> None:
    """The task entered its final step: a running turn is cancelled first, then every live session is
    COMPLETED (its queued prompts dropped: the work is done; a new session starts from startTask)."""
    for session in await task_sessions(uow.db, task.id):
        locked = await lock_session(uow.db, session.id)
        if locked is None or is_terminal(locked):
            continue
        running = await uow.db.scalar(
            select(Turn.id).where(Turn.session_id == locked.id, Turn.state == TurnState.RUNNING)
        )
        cancelled = "the running turn was cancelled and " if running is not None else ""
        await append_message(
            uow,
            locked,
            MessageKind.SYSTEM,
            f"The task reached its final step '{step.name}' (moved by {ctx.principal.actor}): "
            f"{cancelled}this session completed.",
            turn_id=running,
            data={"session_completed": True, "cancelled_turn_id": running, "by": ctx.principal.actor},
        )
        await cancel_queued(uow.db, locked.id)
        await end_session(ctx, uow, locked, SessionState.COMPLETED, "the task reached its final step")
