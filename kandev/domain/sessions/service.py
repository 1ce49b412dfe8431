"""Sessions from the operator's side: start a task, send messages, stop, and read transcripts."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from sqlalchemy import func, select

from kandev.domain.access.scope import load_session, load_task, owner_wide
from kandev.domain.attachments.content import AttachmentRefused
from kandev.domain.attachments.service import bind
from kandev.domain.automations.pending import pending_changed
from kandev.domain.context import ServiceContext, UnitOfWork
from kandev.domain.errors import ConflictError, NotFoundError, PermissionDeniedError, ValidationError
from kandev.domain.records import MessageRecord, TaskRecord
from kandev.domain.sessions.ends import cancel_running_turn, end_session, has_live_execution
from kandev.domain.sessions.parent_questions import ParentQuestionService, supersede
from kandev.domain.sessions.prompts import (
    PromptSpec,
    enqueue_prompt,
    is_terminal,
    lock_session,
    task_sessions,
)
from kandev.domain.sessions.tool_profiles import McpProfile, session_profile
from kandev.domain.sessions.transcript import emit_session_event
from kandev.domain.validation import PAGE_SIZE_LIMIT, check_prompt
from kandev.domain.workflow.starts import begin_task
from kandev.domain.workflow.transitions import emit_task_event
from kandev.domain.workspace.agent_profiles import ensure_autopilot_capable, ensure_available, resolve_agent_profile
from kandev.models import Message, QueuedPrompt, Session, Task, Turn
from kandev.models.base import new_id, utcnow
from kandev.models.enums import MessageKind, PromptState, SessionState, TaskState

MAX_MESSAGES_PAGE = PAGE_SIZE_LIMIT
MAX_SESSION_NAME_LENGTH = 200  # longer names are cut


class MessageOrder(StrEnum):
    ASC = "ASC"
    DESC = "DESC"


class DeliveryMode(StrEnum):
    QUEUED = "QUEUED"
    INTERRUPT = "INTERRUPT"


@dataclass(frozen=True)
class Delivery:
    task: TaskRecord
    session: Session
    prompt: QueuedPrompt


@dataclass(frozen=True)
class StopResult:
    task: TaskRecord
    stopped_sessions: list[Session]

    @property
    def status(self) -> str:
        return "stopped" if self.stopped_sessions else "not_running"


@dataclass(frozen=True)
class MessagePage:
    messages: list[MessageRecord]
    has_next_page: bool


def _clean_prompt(prompt: str | None) -> str:
    check_prompt(prompt)
    text = (prompt or "").strip()
    if not text:
        raise ValidationError("prompt must not be empty", field="prompt")
    return prompt or ""


async def reopen_step(uow: UnitOfWork, session: Session) -> None:
    """A new message before the move re-opens the step: the pending signal is dropped, and no turn that
    started before this message may signal again (an in-flight call can't re-arm the step)."""
    await lock_session(uow.db, session.id)
    newest = await uow.db.scalar(select(func.max(Turn.seq)).where(Turn.session_id == session.id))
    session.pending_signal = None
    if session.completion_pending:
        session.completion_pending = False
        pending_changed(uow, session.task_id)
    session.signal_floor_turn_seq = newest or 0


class SessionService:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    async def start_task(self, task_id: str, prompt: str | None, agent_profile_id: str | None) -> Delivery:
        check_prompt(prompt)
        async with self.ctx.unit_of_work() as uow:
            task = await load_task(uow.db, self.ctx.principal, task_id)
            session, queued = await begin_task(self.ctx, uow, task, prompt, agent_profile_id)
            return Delivery(TaskRecord.of(task), session, queued)

    async def send_message(
        self,
        task_id: str,
        prompt: str,
        *,
        session_id: str | None = None,
        delivery_mode: DeliveryMode = DeliveryMode.QUEUED,
        reply_to_question_id: str | None = None,
        attachment_ids: Sequence[str] = (),
    ) -> Delivery:
        text = _clean_prompt(prompt)
        if reply_to_question_id is not None:
            if attachment_ids:
                raise AttachmentRefused("an answer to a question carries no attachments", "answer", "attachmentIds")
            return await self._answer_parent_question(task_id, reply_to_question_id, text, session_id)
        async with self.ctx.unit_of_work() as uow:
            # The spec's one way out of an agent's workspace: a message naming a task by its full id may
            # reach another workspace of the same owner.
            task = await load_task(uow.db, owner_wide(self.ctx.principal), task_id)
            self.ctx.principal.refuse_own_run_task(task.id, "message")
            self._check_agent_message(task, session_id, delivery_mode)
            session = await self._target_session(uow, task, session_id)
            attached = await bind(uow.db, self.ctx.principal, task, list(attachment_ids))
            await reopen_step(uow, session)
            # Operator input and the parent's messages supersede a pending parent question; a peer's
            # message queues behind the question's gate.
            caller = self.ctx.principal
            if caller.session_id is None or (task.parent_id is not None and caller.task_id == task.parent_id):
                await supersede(uow, session, reason=f"new prompt from {caller.actor}")
            queued = await enqueue_prompt(
                self.ctx,
                uow,
                session,
                PromptSpec(
                    text=text,
                    source=self._source(),
                    sender={"actor": self.ctx.principal.actor},
                    attachment_ids=tuple(attached),
                ),
            )
            if delivery_mode == DeliveryMode.INTERRUPT:
                interrupted = (
                    f"Interrupted by {self.ctx.principal.actor}: the running turn was cancelled for a new prompt."
                )
                await cancel_running_turn(self.ctx, uow, session.id, note=interrupted)
            emit_session_event(uow, "PROMPT_QUEUED", session)
            return Delivery(TaskRecord.of(task), session, queued)

    def _check_agent_message(self, task: Task, session_id: str | None, delivery_mode: DeliveryMode) -> None:
        """Rules for agents messaging tasks (operators are not bound by them)."""
        caller = self.ctx.principal
        if caller.session_id is None:
            return
        if caller.task_id == task.id and session_id is None:
            raise ValidationError("messaging your own task needs the sibling session's session_id", field="session_id")
        if delivery_mode == DeliveryMode.INTERRUPT and task.parent_id != caller.task_id and not caller.coordinates:
            raise PermissionDeniedError("only the task's direct parent may interrupt it", reason="not_parent")

    def _source(self) -> str:
        return "peer" if self.ctx.principal.session_id else "user"

    async def _answer_parent_question(
        self, task_id: str, question_id: str, text: str, session_id: str | None
    ) -> Delivery:
        session, answered = await ParentQuestionService(self.ctx).answer(task_id, question_id, text, session_id)
        async with self.ctx.read() as db:
            prompt = answered.prompt or await db.get(QueuedPrompt, answered.question.answer_prompt_id or "")
            task = await db.get(Task, task_id)
        assert prompt is not None and task is not None
        return Delivery(TaskRecord.of(task), session, prompt)

    async def _target_session(self, uow: UnitOfWork, task: Task, session_id: str | None) -> Session:
        sessions = await task_sessions(uow.db, task.id)
        if session_id is not None:
            session = next((s for s in sessions if s.id == session_id), None)
            if session is None:
                raise NotFoundError("session", session_id)
            if is_terminal(session):
                raise ConflictError(
                    f"the session is {session.state.lower()} and takes no more messages; send without a "
                    f"session id or {self._how_to_open()}",
                    session_id=session.id,
                )
            return session
        live = [s for s in sessions if not is_terminal(s)]
        if not live:
            ended = "has no session yet" if not sessions else "has no session that can take a message"
            raise ConflictError(f"the task {ended}; {self._how_to_open()}", task_id=task.id)
        primary = next((s for s in live if s.is_primary), None)
        return primary or max(live, key=lambda s: (s.created_at, s.id))

    def _how_to_open(self) -> str:
        """The way to a new session on the caller's own surface: agents reach Kandev over MCP."""
        if self.ctx.principal.session_id is not None:
            return "open a new session with spawn_session_kandev"
        return "open a new session with startTask"

    async def stop_task(self, task_id: str) -> StopResult:
        """Stop what is live on the task (running or starting turns, question waits); nothing live answers
        not_running and changes nothing. Queued prompts stay for the session the next start opens.
        An agent may stop only its direct children; an automation run's agent, any other task."""
        async with self.ctx.unit_of_work() as uow:
            task = await load_task(uow.db, self.ctx.principal, task_id)
            caller = self.ctx.principal
            caller.refuse_own_run_task(task.id, "stop")
            if caller.session_id is not None and task.parent_id != caller.task_id and not caller.coordinates:
                raise PermissionDeniedError("only the task's direct parent may stop it", reason="not_parent")
            stopped: list[Session] = []
            for session in await task_sessions(uow.db, task.id):
                locked = await lock_session(uow.db, session.id)
                if locked is None or not await has_live_execution(uow, locked):
                    continue
                stopped_by = f"Stopped by {caller.actor}: the running turn was cancelled and the session ended."
                await end_session(
                    self.ctx, uow, locked, SessionState.CANCELLED, "the session was stopped", note=stopped_by
                )
                stopped.append(locked)
            # Stopping halts the agent, not the work: a running task goes to review (its step unchanged),
            # others keep their state.
            active = (TaskState.IN_PROGRESS, TaskState.SCHEDULING)
            if stopped and task.archived_at is None and task.state in active:
                task.state = TaskState.REVIEW
                task.updated_at = utcnow()
                emit_task_event(uow, "UPDATED", task)
            return StopResult(TaskRecord.of(task), stopped)

    # -- reads -----------------------------------------------------------------------------

    async def get(self, session_id: str) -> Session:
        async with self.ctx.read() as db:
            return await load_session(db, self.ctx.principal, session_id)

    async def mcp_profile(self, session_id: str) -> McpProfile:
        session = await self.get(session_id)
        async with self.ctx.read() as db:
            task = await db.get(Task, session.task_id)
        assert task is not None
        return session_profile(session, task)

    async def mcp_tools(self, session_id: str) -> list[str]:
        return (await self.mcp_profile(session_id)).tool_names()

    async def turns(self, session_id: str) -> list[Turn]:
        await self.get(session_id)
        async with self.ctx.read() as db:
            return list(await db.scalars(select(Turn).where(Turn.session_id == session_id).order_by(Turn.seq)))

    async def queued_prompts(self, session_id: str) -> list[QueuedPrompt]:
        await self.get(session_id)
        async with self.ctx.read() as db:
            rows = await db.scalars(
                select(QueuedPrompt)
                .where(QueuedPrompt.session_id == session_id, QueuedPrompt.state == PromptState.QUEUED)
                .order_by(QueuedPrompt.seq)
            )
            return list(rows)


def _check_page(first: int, last: int | None, kinds: Sequence[str] | None) -> list[str] | None:
    for name, value in (("first", first), ("last", last)):
        if value is not None and not 0 <= value <= MAX_MESSAGES_PAGE:
            raise ValidationError(f"{name} must be between 0 and {MAX_MESSAGES_PAGE}", field=name)
    return _message_kinds(kinds)


async def read_messages(
    ctx: ServiceContext,
    session_id: str,
    *,
    first: int = 100,
    after: str | None = None,
    last: int | None = None,
    order: MessageOrder = MessageOrder.ASC,
    kinds: Sequence[str] | None = None,
    after_message_id: str | None = None,
    before_message_id: str | None = None,
) -> MessagePage:
    """SessionService.messages for a session the caller is known to see (not checked again here)."""
    wanted = _check_page(first, last, kinds)
    descending = order == MessageOrder.DESC
    conditions = [Message.session_id == session_id]
    if wanted is not None:
        conditions.append(Message.kind.in_(wanted))
    if after is not None:
        position = decode_message_cursor(after)
        conditions.append(Message.seq < position if descending else Message.seq > position)
    async with ctx.read() as db:
        for name, message_id, newer in (
            ("afterMessageId", after_message_id, True),
            ("beforeMessageId", before_message_id, False),
        ):
            if message_id is None:
                continue
            bound = await db.scalar(
                select(Message.seq).where(Message.id == message_id, Message.session_id == session_id)
            )
            if bound is None:
                side = "after" if newer else "before"
                raise ValidationError(f"the message to read {side} is not in this session", field=name)
            conditions.append(Message.seq > bound if newer else Message.seq < bound)
        columns = MessageRecord.columns()
        forward = Message.seq.desc() if descending else Message.seq.asc()
        if last is not None:
            backward = Message.seq.asc() if descending else Message.seq.desc()
            final = (await db.execute(select(*columns).where(*conditions).order_by(backward).limit(last))).all()
            return MessagePage([MessageRecord(*row) for row in reversed(final)], False)
        rows = (await db.execute(select(*columns).where(*conditions).order_by(forward).limit(first + 1))).all()
    return MessagePage([MessageRecord(*row) for row in rows[:first]], len(rows) > first)


def only_session(sessions: Sequence[Session], session_id: str | None) -> list[Session]:
    """A task's sessions, or the one session_id names; naming none of them is not found (never a quiet
    empty list), so every surface reading one session's conversation answers alike."""
    if session_id is None:
        return list(sessions)
    chosen = [s for s in sessions if s.id == session_id]
    if not chosen:
        raise NotFoundError("session")
    return chosen


def encode_message_cursor(seq: int) -> str:
    return base64.urlsafe_b64encode(f"m:{seq}".encode()).decode()


def decode_message_cursor(cursor: str) -> int:
    try:
        prefix, seq = base64.urlsafe_b64decode(cursor.encode()).decode().split(":", 1)
        if prefix != "m":
            raise ValueError
        return int(seq)
    except (ValueError, UnicodeDecodeError):
        raise ValidationError("the cursor is not one this API gave out", field="after") from None


def _message_kinds(kinds: Sequence[str] | None) -> list[str] | None:
    if kinds is None:
        return None
    wanted = [str(kind).upper() for kind in kinds]
    if not wanted:
        raise ValidationError("kinds must name at least one message kind", field="kinds")
    if any(kind not in MessageKind.__members__ for kind in wanted):
        raise ValidationError(f"kinds must be among: {', '.join(MessageKind)}", field="kinds")
    return wanted


@dataclass(frozen=True)
class Spawned:
    task: TaskRecord
    session: Session
    prompt: QueuedPrompt | None


async def spawn_session(
    ctx: ServiceContext,
    task_id: str | None,
    name: str | None,
    prompt: str | None,
    agent_profile_id: str | None,
) -> Spawned:
    """A new named sibling session on the caller's task (default) or another task of its workspace."""
    caller = ctx.principal
    if caller.session_id is None or caller.task_id is None:
        raise PermissionDeniedError("only an agent in a task session can spawn sessions")
    check_prompt(prompt)
    async with ctx.unit_of_work() as uow:
        own = await load_task(uow.db, caller, caller.task_id)
        task = await load_task(uow.db, caller, task_id or own.id)
        if task.workspace_id != own.workspace_id:
            raise NotFoundError("task", task_id)
        caller.refuse_own_run_task(task.id, "open a session on")
        profile = await resolve_agent_profile(uow.db, task, agent_profile_id)
        ensure_available(profile)
        ensure_autopilot_capable(task, profile)
        session = Session(
            id=new_id(),
            task_id=task.id,
            agent_profile_id=profile.id,
            executor_profile_id=task.executor_profile_id,
            name=(name or "").strip()[:MAX_SESSION_NAME_LENGTH],
            is_primary=False,
            state=SessionState.CREATED,
            created_at=utcnow(),
            updated_at=utcnow(),
        )
        uow.db.add(session)
        await uow.db.flush()
        queued = None
        if prompt and prompt.strip():
            queued = await enqueue_prompt(
                ctx, uow, session, PromptSpec(text=prompt, source="peer", sender={"actor": caller.actor})
            )
        emit_session_event(uow, "STATE_CHANGED", session)
        emit_task_event(uow, "UPDATED", task)
        return Spawned(TaskRecord.of(task), session, queued)
