"""Turns from the worker's side: claim, lease, finish and reap; the database is the source of truth."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from functools import partial

from sqlalchemy import func, select

from kandev.domain.attachments.service import prompt_attachments
from kandev.domain.context import ServiceContext, UnitOfWork
from kandev.domain.events import SessionEnded, TurnEnded, TurnFailed, TurnStarted
from kandev.domain.feeds import emit_session_event
from kandev.domain.session_rows import is_terminal, lock_session
from kandev.domain.sessions.parent_questions import after_session_ended
from kandev.domain.sessions.permissions import note_in_transcript
from kandev.domain.sessions.placement import clear_waiting
from kandev.domain.sessions.prompts import REVIEW_SOURCE, SYSTEM_SOURCES, claim_next_prompt
from kandev.domain.sessions.transcript import append_message
from kandev.domain.usage.recording import mark_if_spent
from kandev.domain.workflow.engine import change_task_state, on_turn_completed, on_turn_started
from kandev.models import (
    AgentProfile,
    Clarification,
    ParentQuestion,
    PermissionRequest,
    QueuedPrompt,
    Session,
    Task,
    Turn,
)
from kandev.models.base import new_id, utcnow
from kandev.models.enums import MessageKind, PromptState, SessionState, TaskState, TurnState


@dataclass(frozen=True)
class ClaimedTurn:
    turn_id: str
    turn_seq: int
    session_id: str
    task_id: str
    workspace_id: str
    prompt_text: str
    prompt_source: str
    agent_profile_id: str | None
    # The attachments the prompt carries, in order.
    attachment_ids: tuple[str, ...] = ()


async def _emit_task(ctx: ServiceContext, uow: UnitOfWork, task: Task, state: TaskState) -> None:
    """A turn's effect on its task, through the one state-change path (a completed task stays so)."""
    if task.state != TaskState.COMPLETED:
        await change_task_state(ctx, uow, task, state)


async def claim_turn(
    ctx: ServiceContext, session_id: str, *, worker_name: str, job_id: str | None, lease_seconds: float
) -> ClaimedTurn | None:
    """Start the session's next turn if it has a queued prompt and no running turn; else None."""
    async with ctx.unit_of_work() as uow:
        session = await lock_session(uow.db, session_id)
        if session is None or is_terminal(session):
            return None
        running = await uow.db.scalar(
            select(Turn.id).where(Turn.session_id == session_id, Turn.state == TurnState.RUNNING)
        )
        if running is not None:
            return None
        # While a parent question is pending, everything queued is held until the answer arrives.
        held = await uow.db.scalar(
            select(ParentQuestion.id).where(
                ParentQuestion.child_session_id == session_id, ParentQuestion.state == "PENDING"
            )
        )
        if held is not None:
            return None
        if await mark_if_spent(uow, session.task_id):
            return None  # the task's budget is spent: its prompts wait until a person raises it
        turn_id = new_id()
        prompt = await claim_next_prompt(uow.db, session_id, turn_id)
        if prompt is None:
            return None
        last_seq = await uow.db.scalar(select(func.max(Turn.seq)).where(Turn.session_id == session_id))
        now = utcnow()
        turn = Turn(
            id=turn_id,
            session_id=session_id,
            seq=(last_seq or 0) + 1,
            prompt_id=prompt.id,
            state=TurnState.RUNNING,
            worker_name=worker_name,
            job_id=job_id,
            lease_expires_at=now + timedelta(seconds=lease_seconds),
            started_at=now,
        )
        uow.db.add(turn)
        await uow.db.flush()
        session.state = SessionState.RUNNING
        session.updated_at = now
        await clear_waiting(uow, session)
        emit_session_event(uow, "TURN_STARTED", session, turn=turn)
        kind, data = _prompt_message(prompt)
        carried = await prompt_attachments(uow.db, prompt.id)
        if carried:
            data["attachments"] = [a.summary() for a in carried]
        await append_message(uow, session, kind, prompt.text, turn_id=turn.id, data=data)
        task = await uow.db.get(Task, session.task_id)
        assert task is not None
        await _supersede_questions(uow, session, turn, prompt)
        await ctx.publish(uow, TurnStarted(turn.id, session.id, prompt.source, prompt.idempotency_key))
        if session.completion_pending:
            session.completion_pending = False
            uow.note_pending_action(task.id)
        await _emit_task(ctx, uow, task, TaskState.IN_PROGRESS)
        await on_turn_started(ctx, uow, session, task, prompt.source)
        # After the turn-start actions: a move they made is the step this turn works on (and may signal).
        turn.step_id = task.workflow_step_id
        return ClaimedTurn(
            turn_id=turn.id,
            turn_seq=turn.seq,
            session_id=session.id,
            task_id=task.id,
            workspace_id=task.workspace_id,
            prompt_text=prompt.text,
            prompt_source=prompt.source,
            agent_profile_id=session.agent_profile_id,
            attachment_ids=tuple(a.id for a in carried),
        )


def _prompt_message(prompt: QueuedPrompt) -> tuple[MessageKind, dict[str, object]]:
    """How a claimed prompt shows in the transcript: the system's as SYSTEM, a sent review as one REVIEW message
    listing its threads (the prompt's sender carries them), anything else as USER."""
    data: dict[str, object] = {"source": prompt.source}
    if prompt.source in SYSTEM_SOURCES:
        return MessageKind.SYSTEM, data
    if prompt.source == REVIEW_SOURCE:
        return MessageKind.REVIEW, {**data, "review": (prompt.sender or {}).get("review")}
    return MessageKind.USER, data


async def renew_lease(ctx: ServiceContext, turn_id: str, lease_seconds: float) -> bool:
    """Extend the running turn's lease; True when the turn should stop (cancel asked, session ended)."""
    async with ctx.unit_of_work() as uow:
        turn = await uow.db.get(Turn, turn_id)
        if turn is None or turn.state != TurnState.RUNNING:
            return True
        turn.lease_expires_at = utcnow() + timedelta(seconds=lease_seconds)
        session = await uow.db.get(Session, turn.session_id)
        return turn.cancel_requested_at is not None or session is None or is_terminal(session)


async def finish_turn(
    ctx: ServiceContext,
    turn_id: str,
    *,
    stop_reason: str,
    error: str | None = None,
    timings: dict[str, float] | None = None,
) -> None:
    """Record how the turn ended; a failed turn leaves the session waiting for input with the error shown."""
    async with ctx.unit_of_work() as uow:
        turn = await uow.db.get(Turn, turn_id)
        if turn is None or turn.state != TurnState.RUNNING:
            return  # already reaped
        if timings:
            turn.timings = dict(timings)
        session = await lock_session(uow.db, turn.session_id)
        assert session is not None
        await _end_turn(ctx, uow, session, turn, stop_reason=stop_reason, error=error)


async def _supersede_questions(uow: UnitOfWork, session: Session, turn: Turn, prompt: QueuedPrompt) -> None:
    """Accepting newer work supersedes pending questions of older turns (an answer resumes nothing now)."""
    rows = await uow.db.scalars(
        select(Clarification).where(
            Clarification.session_id == session.id,
            Clarification.state == "PENDING",
            Clarification.turn_id != turn.id,
        )
    )
    for row in rows:
        if prompt.reply_to_question_id == row.id:
            continue
        row.state = "CANCELLED"
        row.resolved_at = utcnow()
        row.resolved_by = "superseded"
        uow.note_pending_action(row.task_id)


async def _end_turn(
    ctx: ServiceContext,
    uow: UnitOfWork,
    session: Session,
    turn: Turn,
    *,
    stop_reason: str,
    error: str | None,
) -> None:
    now = utcnow()
    if stop_reason == "cancelled":
        turn.state = TurnState.CANCELLED
    elif error is not None or stop_reason == "failed":
        turn.state = TurnState.FAILED
    else:
        turn.state = TurnState.COMPLETED
    turn.stop_reason = stop_reason
    turn.error = error
    turn.ended_at = now
    turn.lease_expires_at = None
    if error:
        await append_message(uow, session, MessageKind.ERROR, error, turn_id=turn.id)
    if turn.state == TurnState.FAILED:
        await ctx.publish(uow, TurnFailed(session.task_id, turn.id, error or "the turn failed"))
    await _cancel_open_permissions(uow, session, turn.id)
    if not is_terminal(session):
        session.state = SessionState.WAITING_FOR_INPUT
    session.updated_at = now
    emit_session_event(uow, "TURN_ENDED", session, turn=turn)
    await ctx.publish(uow, TurnEnded(turn.id, turn.state, turn.error))
    task = await uow.db.get(Task, session.task_id)
    assert task is not None
    if not is_terminal(session):
        await _emit_task(
            ctx, uow, task, TaskState.REVIEW if turn.state == TurnState.COMPLETED else TaskState.WAITING_FOR_INPUT
        )
        if turn.state == TurnState.COMPLETED:
            await on_turn_completed(ctx, uow, session, task, turn)


async def _cancel_open_permissions(uow: UnitOfWork, session: Session, turn_id: str) -> None:
    rows = await uow.db.scalars(
        select(PermissionRequest).where(PermissionRequest.turn_id == turn_id, PermissionRequest.state == "PENDING")
    )
    for row in list(rows):
        row.state = "CANCELLED"
        row.resolved_at = utcnow()
        uow.note_pending_action(row.task_id)
        await note_in_transcript(uow, session, row, "Permission request withdrawn: the turn ended before an answer")


async def reap_expired_turns(ctx: ServiceContext) -> list[str]:
    """Fail turns whose worker stopped renewing the lease; their prompts are never re-sent."""
    async with ctx.read() as db:
        expired = list(
            await db.scalars(select(Turn.id).where(Turn.state == TurnState.RUNNING, Turn.lease_expires_at < utcnow()))
        )
    reaped: list[str] = []
    for turn_id in expired:
        async with ctx.unit_of_work() as uow:
            turn = await uow.db.get(Turn, turn_id, populate_existing=True)
            if turn is None or turn.state != TurnState.RUNNING or turn.lease_expires_at is None:
                continue
            if turn.lease_expires_at >= utcnow():
                continue
            session = await lock_session(uow.db, turn.session_id)
            assert session is not None
            await _end_turn(
                ctx,
                uow,
                session,
                turn,
                stop_reason="failed",
                error="The worker running this turn stopped responding; the turn was ended. "
                "Its prompt is not sent again: send a new message to continue.",
            )
            reaped.append(turn_id)
            session_id = session.id
            uow.then(partial(ctx.jobs.enqueue_turn, session_id))
    return reaped


async def sessions_with_pending_work(ctx: ServiceContext) -> list[str]:
    """Live sessions with queued prompts and no running turn: what a restart must enqueue again, since
    the Redis queue may have lost it."""
    running = select(Turn.session_id).where(Turn.state == TurnState.RUNNING)
    async with ctx.read() as db:
        rows = await db.execute(
            select(Session.id)
            .join(QueuedPrompt, QueuedPrompt.session_id == Session.id)
            .where(
                QueuedPrompt.state == PromptState.QUEUED,
                Session.state.not_in(
                    [s.value for s in (SessionState.COMPLETED, SessionState.FAILED, SessionState.CANCELLED)]
                ),
                Session.id.not_in(running),
            )
            .distinct()
        )
        return list(rows.scalars())


async def profile_of(ctx: ServiceContext, profile_id: str | None) -> AgentProfile | None:
    if profile_id is None:
        return None
    async with ctx.read() as db:
        return await db.get(AgentProfile, profile_id)


async def fail_session_launch(ctx: ServiceContext, turn_id: str, error: str) -> None:
    """The agent could not be launched at all: the turn fails and the session becomes FAILED."""
    async with ctx.unit_of_work() as uow:
        turn = await uow.db.get(Turn, turn_id)
        if turn is None or turn.state != TurnState.RUNNING:
            return
        session = await lock_session(uow.db, turn.session_id)
        assert session is not None
        session.state = SessionState.FAILED
        session.ended_at = utcnow()
        await after_session_ended(ctx, uow, session, reason="the session failed")
        await _end_turn(ctx, uow, session, turn, stop_reason="failed", error=error)
        emit_session_event(uow, "STATE_CHANGED", session)
        await ctx.publish(uow, SessionEnded(session.id))
        task = await uow.db.get(Task, session.task_id)
        assert task is not None
        # The same path as every state change: dependents see "failed", a parent's children may be done.
        await _emit_task(ctx, uow, task, TaskState.FAILED)
