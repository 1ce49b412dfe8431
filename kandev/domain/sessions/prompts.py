"""The durable prompt queue: every prompt is a row first; a turn starts by claiming the next one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import CursorResult, case, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.attachments.service import link_to_prompt
from kandev.domain.context import ServiceContext, UnitOfWork
from kandev.domain.sessions.job_labels import describe_turn
from kandev.models import QueuedPrompt, Session, Task
from kandev.models.base import new_id, utcnow
from kandev.models.enums import TERMINAL_SESSION_STATES, PromptState, SessionState

# The notice that a parent question went stale; the system (not a person or an agent) sends it.
PARENT_STALE = "parent_stale"
# Prompts the system sends: shown as SYSTEM messages in the transcript.
SYSTEM_SOURCES = (PARENT_STALE,)
# Review comments sent to the agent (kandev.domain.reviews.sending): one REVIEW message in the transcript.
REVIEW_SOURCE = "review"


def is_terminal(session: Session) -> bool:
    return SessionState(session.state) in TERMINAL_SESSION_STATES


async def lock_session(db: AsyncSession, session_id: str) -> Session | None:
    """The session row, locked for this transaction (SQLite's BEGIN IMMEDIATE already serializes)."""
    return await db.scalar(
        select(Session).where(Session.id == session_id).with_for_update().execution_options(populate_existing=True)
    )


async def task_sessions(db: AsyncSession, task_id: str) -> list[Session]:
    """Primary first, then newest first."""
    rows = await db.scalars(
        select(Session)
        .where(Session.task_id == task_id)
        .order_by(Session.is_primary.desc(), Session.created_at.desc(), Session.id.desc())
    )
    return list(rows)


async def open_session(uow: UnitOfWork, task: Task, agent_profile_id: str | None) -> Session:
    """The task's session to talk to: its live primary, else its newest live one, else a new primary."""
    sessions = await task_sessions(uow.db, task.id)
    live = [s for s in sessions if not is_terminal(s)]
    if live:
        return live[0]
    for old in sessions:
        old.is_primary = False
    session = Session(
        id=new_id(),
        task_id=task.id,
        agent_profile_id=agent_profile_id,
        executor_profile_id=task.executor_profile_id,
        name="",
        is_primary=True,
        state=SessionState.CREATED,
        created_at=utcnow(),
        updated_at=utcnow(),
    )
    uow.db.add(session)
    await uow.db.flush()
    await _adopt_stopped_prompts(uow.db, sessions, session)
    return session


async def _adopt_stopped_prompts(db: AsyncSession, ended: list[Session], session: Session) -> None:
    """Prompts still queued when a stop cancelled their session move, in order, to the new session."""
    stopped = [s.id for s in ended if s.state == SessionState.CANCELLED]
    if not stopped:
        return
    rows = await db.scalars(
        select(QueuedPrompt)
        .where(QueuedPrompt.session_id.in_(stopped), QueuedPrompt.state == PromptState.QUEUED)
        .order_by(QueuedPrompt.created_at, QueuedPrompt.seq)
    )
    for seq, prompt in enumerate(rows, start=1):
        prompt.session_id = session.id
        prompt.seq = seq
    await db.flush()


@dataclass(frozen=True)
class PromptSpec:
    text: str
    source: str
    idempotency_key: str | None = None
    reply_to_question_id: str | None = None
    sender: dict[str, Any] | None = None
    # Attachments of the task the prompt carries to the agent (already bound to it).
    attachment_ids: tuple[str, ...] = ()


async def enqueue_prompt(ctx: ServiceContext, uow: UnitOfWork, session: Session, spec: PromptSpec) -> QueuedPrompt:
    """Store the prompt, then (after commit) ask a worker to drain the session's queue.

    A repeated idempotency key returns the prompt already stored and queues nothing.
    """
    if spec.idempotency_key:
        key = spec.idempotency_key
        existing = await uow.db.scalar(select(QueuedPrompt).where(QueuedPrompt.idempotency_key == key))
        if existing is not None:
            return existing
    else:
        key = f"{spec.source}:{new_id()}"  # fresh, so nothing can hold it yet
    await lock_session(uow.db, session.id)
    last = await uow.db.scalar(select(func.max(QueuedPrompt.seq)).where(QueuedPrompt.session_id == session.id))
    prompt = QueuedPrompt(
        id=new_id(),
        session_id=session.id,
        seq=(last or 0) + 1,
        idempotency_key=key,
        source=spec.source,
        text=spec.text,
        state=PromptState.QUEUED,
        reply_to_question_id=spec.reply_to_question_id,
        sender=spec.sender or {},
        created_at=utcnow(),
    )
    uow.db.add(prompt)
    await uow.db.flush()
    await link_to_prompt(uow.db, session.task_id, prompt.id, list(spec.attachment_ids))
    session_id = session.id
    # Usually already loaded by the caller: the job's label costs no read of its own.
    task = await uow.db.get(Task, session.task_id)
    description = describe_turn(session_id, task.id, task.title) if task is not None else None
    uow.then(lambda: ctx.jobs.enqueue_turn(session_id, description=description))
    return prompt


async def claim_next_prompt(db: AsyncSession, session_id: str, turn_id: str) -> QueuedPrompt | None:
    """Atomically mark the oldest queued prompt as claimed by `turn_id` (portable UPDATE … RETURNING)."""
    # A parent's answer is admitted ahead of prompts held while its question was pending.
    # So is the notice that the question went stale (the parent can't answer any more).
    answers_first = case((QueuedPrompt.source.in_(("parent_answer", PARENT_STALE)), 0), else_=1)
    oldest = (
        select(QueuedPrompt.id)
        .where(QueuedPrompt.session_id == session_id, QueuedPrompt.state == PromptState.QUEUED)
        .order_by(answers_first, QueuedPrompt.seq)
        .limit(1)
        .scalar_subquery()
    )
    claimed_id = await db.scalar(
        update(QueuedPrompt)
        .where(QueuedPrompt.id == oldest, QueuedPrompt.state == PromptState.QUEUED)
        .values(state=PromptState.CLAIMED, claimed_at=utcnow(), turn_id=turn_id)
        .returning(QueuedPrompt.id)
        .execution_options(synchronize_session=False)
    )
    if claimed_id is None:
        return None
    return await db.get(QueuedPrompt, claimed_id, populate_existing=True)


async def cancel_queued(db: AsyncSession, session_id: str) -> int:
    result: CursorResult[Any] = await db.execute(  # type: ignore[assignment]  # an UPDATE has a rowcount
        update(QueuedPrompt)
        .where(QueuedPrompt.session_id == session_id, QueuedPrompt.state == PromptState.QUEUED)
        .values(state=PromptState.CANCELLED)
        .execution_options(synchronize_session=False)
    )
    return result.rowcount or 0
