"""The parent-question protocol: an autopilot child asks its direct parent, the parent answers with a
correlated message, and the child resumes with exactly that answer.

Every state change is a conditional UPDATE on a PENDING row under the child session's lock, so an
answer racing a supersede (or a terminal transition) has exactly one winner and the loser changes
nothing.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy import CursorResult, select, update
from sqlalchemy.exc import IntegrityError

from kandev.domain.context import ServiceContext, UnitOfWork
from kandev.domain.errors import ConflictError, NotFoundError, PermissionDeniedError, ValidationError
from kandev.domain.feeds import emit_session_event, emit_task_event
from kandev.domain.scope import load_task
from kandev.domain.session_rows import is_terminal, lock_session
from kandev.domain.sessions.prompts import PARENT_STALE, PromptSpec, enqueue_prompt, open_session
from kandev.domain.sessions.questions import normalize_questions
from kandev.domain.workspace.agent_profiles import ensure_available, resolve_agent_profile
from kandev.models import ParentQuestion, QueuedPrompt, Session, Task, Turn
from kandev.models.base import new_id, utcnow

PENDING, ANSWERED, SUPERSEDED, STALE = "PENDING", "ANSWERED", "SUPERSEDED", "STALE"
TOOL = "ask_parent_question_kandev"


@dataclass(frozen=True)
class Asked:
    question: ParentQuestion
    parent_task_id: str


@dataclass(frozen=True)
class Answered:
    question: ParentQuestion
    prompt: QueuedPrompt | None  # None on a retry: the answer was already delivered


def call_identity(session_id: str, turn_id: str | None, arguments: dict[str, Any]) -> str:
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(f"{session_id}|{turn_id}|{TOOL}|{canonical}".encode()).hexdigest()


def parent_prompt(child: Task, child_session_id: str, question: ParentQuestion) -> str:
    """What the parent's agent reads: who asks, what exactly, and the exact call that answers."""
    lines = [
        f'Your autopilot subtask "{child.title}" (task {child.id}, session {child_session_id}) is blocked and '
        "asks you, its parent, to decide. It waits and does nothing else until you answer.",
    ]
    if question.context:
        lines.append(f"Why it asks / what is blocked: {question.context}")
    for index, item in enumerate(question.questions, 1):
        title = f" — {item['title']}" if item.get("title") else ""
        lines.append(f"Question {index} [{item['id']}]{title}: {item['prompt']}")
        for option in item.get("options") or []:
            detail = f": {option['description']}" if option.get("description") else ""
            lines.append(f'  - option "{option["label"]}"{detail}')
    lines.append(f"Question id: {question.id}")
    lines.append("Answer with exactly this call (put your answer in prompt):")
    reply = {"task_id": child.id, "reply_to_question_id": question.id, "prompt": "<your answer>"}
    lines.append(f"message_task_kandev {json.dumps(reply)}")
    return "\n".join(lines)


def answer_prompt(question: ParentQuestion, text: str) -> str:
    return f"Your parent answered your question ({question.id}):\n{text}"


async def pending_for_session(uow: UnitOfWork, session_id: str) -> ParentQuestion | None:
    return await uow.db.scalar(
        select(ParentQuestion).where(ParentQuestion.child_session_id == session_id, ParentQuestion.state == PENDING)
    )


async def _transition(uow: UnitOfWork, question_id: str, state: str, resolution: str, **values: Any) -> bool:
    """PENDING -> `state`, only if still pending: the one place where a race is decided."""
    result: CursorResult[Any] = await uow.db.execute(  # type: ignore[assignment]  # an UPDATE has a rowcount
        update(ParentQuestion)
        .where(ParentQuestion.id == question_id, ParentQuestion.state == PENDING)
        .values(state=state, resolution=resolution, resolved_at=utcnow(), **values)
        .execution_options(synchronize_session=False)
    )
    return bool(result.rowcount)


async def _announce(uow: UnitOfWork, session_id: str, task_id: str) -> None:
    session = await uow.db.get(Session, session_id)
    task = await uow.db.get(Task, task_id)
    uow.note_pending_action(task_id)
    if session is not None:
        emit_session_event(uow, "STATE_CHANGED", session)
    if task is not None:
        task.updated_at = utcnow()
        emit_task_event(uow, "UPDATED", task)  # pendingAction changed


async def supersede(uow: UnitOfWork, session: Session, reason: str) -> bool:
    """A new explicit prompt that is not the answer supersedes the pending question first."""
    pending = await pending_for_session(uow, session.id)
    if pending is None or not await _transition(uow, pending.id, SUPERSEDED, reason):
        return False
    await _announce(uow, session.id, pending.child_task_id)
    return True


async def make_stale(
    uow: UnitOfWork, *, task_id: str | None = None, session_id: str | None = None, reason: str
) -> None:
    """Archive, delete, cancellation or a terminal session: the question can no longer be answered."""
    query = select(ParentQuestion).where(ParentQuestion.state == PENDING)
    query = (
        query.where(ParentQuestion.child_task_id == task_id)
        if task_id
        else query.where(ParentQuestion.child_session_id == session_id)
    )
    for row in list(await uow.db.scalars(query)):
        if await _transition(uow, row.id, STALE, reason):
            await _announce(uow, row.child_session_id, row.child_task_id)


def stale_prompt(question: ParentQuestion, reason: str) -> str:
    return (
        f"Your question to your parent ({question.id}) will not be answered: {reason}. Do not wait for it. "
        "Proceed under the autopilot contract: make safe, reversible assumptions, continue with your best "
        "judgment, and disclose material assumptions in your result."
    )


async def parent_gone(ctx: ServiceContext, uow: UnitOfWork, parent_task_id: str, reason: str) -> None:
    """The parent can no longer answer (archived, deleted, cancelled, or its last session ended): each
    child's pending question goes stale, its gate lifts and a SYSTEM prompt tells it to proceed."""
    rows = await uow.db.scalars(
        select(ParentQuestion).where(ParentQuestion.parent_task_id == parent_task_id, ParentQuestion.state == PENDING)
    )
    for row in list(rows):
        session = await lock_session(uow.db, row.child_session_id)
        if session is None or not await _transition(uow, row.id, STALE, reason):
            continue
        await _announce(uow, session.id, row.child_task_id)
        if is_terminal(session):
            continue
        await enqueue_prompt(
            ctx,
            uow,
            session,
            PromptSpec(
                text=stale_prompt(row, reason),
                source=PARENT_STALE,
                idempotency_key=f"{PARENT_STALE}:{row.id}",
                sender={"kind": "system"},
            ),
        )


async def after_session_ended(ctx: ServiceContext, uow: UnitOfWork, session: Session, reason: str) -> None:
    """A session became terminal: its own pending question is stale, and when it was its task's last live
    session, the questions its task's children asked it are too."""
    await make_stale(uow, session_id=session.id, reason=reason)
    others = await uow.db.scalars(select(Session).where(Session.task_id == session.task_id, Session.id != session.id))
    if all(is_terminal(other) for other in others):
        await parent_gone(ctx, uow, session.task_id, "the parent's last session ended")


class ParentQuestionService:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    async def ask(self, questions: list[dict[str, Any]], context: str | None) -> Asked:
        session_id = self.ctx.principal.session_id
        if session_id is None:
            raise PermissionDeniedError("only an agent in a task session can ask its parent")
        questions = normalize_questions(questions)
        try:
            async with self.ctx.unit_of_work() as uow:
                return await self._ask(uow, session_id, questions, context)
        except IntegrityError:
            # A concurrent identical call (or a second question) committed first: answer with it.
            async with self.ctx.unit_of_work() as uow:
                return await self._ask(uow, session_id, questions, context)

    async def _ask(
        self, uow: UnitOfWork, session_id: str, questions: list[dict[str, Any]], context: str | None
    ) -> Asked:
        session = await lock_session(uow.db, session_id)
        assert session is not None
        child = await uow.db.get(Task, session.task_id)
        assert child is not None
        if child.parent_id is None:
            raise ValidationError("this task has no parent to ask", field="parent", reason="no_parent")
        turn_id = await uow.db.scalar(
            select(Turn.id).where(Turn.session_id == session_id).order_by(Turn.seq.desc()).limit(1)
        )
        identity = call_identity(session_id, turn_id, {"questions": questions, "context": context})
        existing = await uow.db.scalar(select(ParentQuestion).where(ParentQuestion.call_identity == identity))
        if existing is not None:
            return Asked(existing, existing.parent_task_id)
        pending = await pending_for_session(uow, session_id)
        if pending is not None:
            return Asked(pending, pending.parent_task_id)
        parent = await uow.db.get(Task, child.parent_id)
        if parent is None or parent.deleted_at is not None:
            raise ValidationError("this task has no parent to ask", field="parent", reason="no_parent")
        question = ParentQuestion(
            id=new_id(),
            child_task_id=child.id,
            child_session_id=session_id,
            parent_task_id=parent.id,
            turn_id=turn_id,
            call_identity=identity,
            questions=questions,
            context=context or "",
            state=PENDING,
            created_at=utcnow(),
        )
        uow.db.add(question)
        await uow.db.flush()  # committed with the prompt below, never after it
        parent_session = await self._parent_session(uow, parent)
        prompt = await enqueue_prompt(
            self.ctx,
            uow,
            parent_session,
            PromptSpec(
                text=parent_prompt(child, session_id, question),
                source="parent_question",
                idempotency_key=f"parent_question:{question.id}",
                sender={"kind": "child", "task_id": child.id, "session_id": session_id},
            ),
        )
        question.parent_prompt_id = prompt.id
        await _announce(uow, session_id, child.id)
        return Asked(question, parent.id)

    async def _parent_session(self, uow: UnitOfWork, parent: Task) -> Session:
        """The parent's session to deliver to (a busy one queues it); a parent without one gets one."""
        profile = await resolve_agent_profile(uow.db, parent)
        ensure_available(profile)
        return await open_session(uow, parent, profile.id)

    async def answer(
        self, child_task_id: str, question_id: str, text: str, session_id: str | None
    ) -> tuple[Session, Answered]:
        """The parent's correlated reply: accepted only from the child's current direct parent, for the
        recorded child task and session, while pending. A retry returns the outcome and delivers nothing."""
        principal = self.ctx.principal
        async with self.ctx.unit_of_work() as uow:
            child = await load_task(uow.db, principal, child_task_id)
            principal.refuse_own_run_task(child.id, "message")
            question = await uow.db.get(ParentQuestion, question_id)
            if question is None or question.child_task_id != child.id:
                raise NotFoundError("question", question_id)
            if session_id is not None and session_id != question.child_session_id:
                raise ConflictError("the question belongs to another session of this task", reason="wrong_session")
            if principal.task_id is None or principal.task_id != child.parent_id:
                raise PermissionDeniedError(
                    "only the task's direct parent can answer its question", reason="not_parent"
                )
            session = await lock_session(uow.db, question.child_session_id)
            assert session is not None
            await uow.db.refresh(question)
            if question.state == ANSWERED and question.answered_by_session_id == principal.session_id:
                return session, Answered(question, None)
            if question.state != PENDING:
                raise ConflictError(f"the question is {question.state.lower()}", reason=question.state.lower())
            if is_terminal(session):
                raise ConflictError("the child session has ended", reason="stale")
            won = await _transition(
                uow,
                question.id,
                ANSWERED,
                "answered",
                answer=text,
                answered_by_session_id=principal.session_id,
            )
            if not won:
                await uow.db.refresh(question)
                raise ConflictError(f"the question is {question.state.lower()}", reason=question.state.lower())
            prompt = await enqueue_prompt(
                self.ctx,
                uow,
                session,
                PromptSpec(
                    text=answer_prompt(question, text),
                    source="parent_answer",
                    idempotency_key=f"parent_answer:{question.id}",
                    reply_to_question_id=question.id,
                    sender={
                        "kind": "parent",
                        "task_id": principal.task_id,
                        "session_id": principal.session_id,
                    },
                ),
            )
            await uow.db.execute(
                update(ParentQuestion).where(ParentQuestion.id == question.id).values(answer_prompt_id=prompt.id)
            )
            await _announce(uow, session.id, child.id)
            await uow.db.refresh(question)
            return session, Answered(question, prompt)

    async def list(self, task_id: str, state: str | None = None) -> list[ParentQuestion]:
        async with self.ctx.read() as db:
            await load_task(db, self.ctx.principal, task_id)
            query = select(ParentQuestion).where(ParentQuestion.child_task_id == task_id)
            if state:
                query = query.where(ParentQuestion.state == state.upper())
            return list(await db.scalars(query.order_by(ParentQuestion.created_at)))
