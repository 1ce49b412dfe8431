"""ask_user_question_kandev: durable questions to the operator, the wait for an answer, and the hard
pause when the wait ends without one."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, or_, select

from kandev.domain.access.scope import load_task, load_workspace
from kandev.domain.automations.pending import pending_changed
from kandev.domain.context import ServiceContext
from kandev.domain.errors import ConflictError, NotFoundError, PermissionDeniedError, ValidationError
from kandev.domain.events import TaskNeedsPerson
from kandev.domain.sessions.ends import cancel_running_turn
from kandev.domain.sessions.person_waits import deliver_or_continue
from kandev.domain.sessions.prompts import PromptSpec, enqueue_prompt, lock_session
from kandev.domain.sessions.questions import normalize_questions
from kandev.domain.sessions.transcript import append_message
from kandev.domain.workflow.transitions import emit_task_event
from kandev.models import Clarification, Session, Task, Turn
from kandev.models.base import new_id, utcnow
from kandev.models.enums import MessageKind
from kandev.platform.event_bus import WAITING, ControlMessage, StateChange, clarification_channel, control_channel

PENDING, ANSWERED, REJECTED, EXPIRED, CANCELLED = "PENDING", "ANSWERED", "REJECTED", "EXPIRED", "CANCELLED"


@dataclass(frozen=True)
class Answer:
    question_id: str
    selected_options: list[str]
    custom_text: str | None = None


@dataclass(frozen=True)
class AnswerWait:
    """How an agent's wait for its answer ended: answered, rejected, or waiting_for_user (the turn paused)."""

    row: Clarification
    status: str


@dataclass(frozen=True)
class QuestionPage:
    rows: list[Clarification]
    next_cursor: str | None


def render_answers(row: Clarification) -> str:
    """The answer as the agent reads it (a continuation prompt or the tool result)."""
    by_id = {q["id"]: q for q in row.questions}
    lines = ["The user answered your question(s):"]
    for answer in row.answers:
        prompt = by_id.get(answer["question_id"], {}).get("prompt", answer["question_id"])
        chosen = ", ".join(answer.get("selected_options") or [])
        custom = answer.get("custom_text") or ""
        reply = "; ".join(p for p in (chosen, custom) if p) or "(no answer)"
        lines.append(f"- {prompt}: {reply}")
    return "\n".join(lines)


def continuation_of(row: Clarification) -> PromptSpec:
    """The answer as the prompt that continues the session when the asking turn no longer waits."""
    text = render_answers(row) if row.state == ANSWERED else "The user declined to answer your question."
    return PromptSpec(
        text=text,
        source="clarification_answer",
        idempotency_key=f"clarification:{row.id}",
        reply_to_question_id=row.id,
    )


class ClarificationService:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    async def ask(self, questions: list[dict[str, Any]], context: str | None) -> Clarification:
        """Record the agent's questions, tied to its current turn; only an agent may ask."""
        session_id = self.ctx.principal.session_id
        if session_id is None:
            raise PermissionDeniedError("only an agent in a task session can ask the user")
        normalized = normalize_questions(questions)
        async with self.ctx.unit_of_work() as uow:
            session = await lock_session(uow.db, session_id)
            assert session is not None
            turn = await uow.db.scalar(
                select(Turn).where(Turn.session_id == session_id).order_by(Turn.seq.desc()).limit(1)
            )
            row = Clarification(
                id=new_id(),
                session_id=session_id,
                task_id=session.task_id,
                turn_id=turn.id if turn else None,
                questions=normalized,
                context=context or "",
                state=PENDING,
                created_at=utcnow(),
            )
            uow.db.add(row)
            await append_message(
                uow,
                session,
                MessageKind.SYSTEM,
                "The agent asked a question.",
                turn_id=row.turn_id,
                data={"clarification_id": row.id, "questions": normalized},
            )
            task = await uow.db.get(Task, session.task_id)
            assert task is not None
            emit_task_event(uow, "UPDATED", task)  # pendingAction is now CLARIFICATION
            pending_changed(uow, task.id)
            asked = "; ".join(str(q["prompt"]) for q in normalized)
            await self.ctx.publish(uow, TaskNeedsPerson(task.id, f"question:{row.id}", "question", asked))
            # The turn's job in the worker ends; the agent stays alive with this MCP call open.
            uow.emit(control_channel(session_id), ControlMessage(action=WAITING))
            return row

    async def wait(self, clarification_id: str, timeout: float) -> Clarification:
        """Until the question is no longer pending or `timeout` passes; then the row as it is."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        async with self.ctx.bus.subscribe(clarification_channel(clarification_id)) as events:
            while True:
                async with self.ctx.read() as db:
                    row = await db.get(Clarification, clarification_id)
                assert row is not None
                remaining = deadline - loop.time()
                if row.state != PENDING or remaining <= 0:
                    return row
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(min(remaining, 2.0)):
                        await anext(events)

    async def wait_for_answer(self, clarification_id: str) -> AnswerWait:
        """The asking agent waits for the user up to the configured time; a wait that ends without an
        answer (in time, or cut short: the client went away) pauses the turn, the question stays answerable."""
        try:
            row = await self.wait(clarification_id, self.ctx.settings.clarification_timeout_s)
        except BaseException:
            await self.hard_pause(clarification_id)
            raise
        if row.state in (ANSWERED, REJECTED):
            return AnswerWait(row, row.state.lower())
        await self.hard_pause(row.id)
        return AnswerWait(row, "waiting_for_user")

    async def hard_pause(self, clarification_id: str) -> Clarification:
        """The wait ended unanswered: keep the question answerable, end the turn quietly (no
        turn-complete triggers: the pending question is the barrier) and wait for the user."""
        async with self.ctx.unit_of_work() as uow:
            row = await uow.db.get(Clarification, clarification_id)
            assert row is not None
            if row.state != PENDING:
                return row
            row.detached = True
            await cancel_running_turn(self.ctx, uow, row.session_id)
            return row

    async def answer(self, clarification_id: str, answers: list[Answer]) -> Clarification:
        return await self._resolve(clarification_id, ANSWERED, answers)

    async def reject(self, clarification_id: str) -> Clarification:
        return await self._resolve(clarification_id, REJECTED, [])

    async def _resolve(self, clarification_id: str, state: str, answers: list[Answer]) -> Clarification:
        async with self.ctx.unit_of_work() as uow:
            row = await uow.db.get(Clarification, clarification_id)
            if row is None:
                raise NotFoundError("question", clarification_id)
            try:
                task = await load_task(uow.db, self.ctx.principal, row.task_id)
            except NotFoundError:
                raise NotFoundError("question", clarification_id) from None
            self.ctx.principal.refuse_own_run_task(task.id, "answer a question of")
            if row.state != PENDING:
                raise ConflictError(f"the question is already {row.state.lower()}", state=row.state)
            known = {q["id"]: q for q in row.questions}
            for answer in answers:
                question = known.get(answer.question_id)
                if question is None:
                    raise ValidationError("an answer names a question that was not asked", field="answers")
                labels = {o.get("label") for o in question.get("options") or []}
                if any(option not in labels for option in answer.selected_options):
                    raise ValidationError("a selected option is not one the question offered", field="answers")
            row.state = state
            row.answers = [
                {
                    "question_id": a.question_id,
                    "selected_options": a.selected_options,
                    "custom_text": a.custom_text,
                }
                for a in answers
            ]
            row.resolved_at = task.updated_at = utcnow()
            row.resolved_by = self.ctx.principal.actor
            uow.emit(clarification_channel(row.id), StateChange(state=state))
            emit_task_event(uow, "UPDATED", task)
            pending_changed(uow, task.id)
            if row.detached:
                await self._resume(uow, row)
            else:  # the asking turn still waits on its worker (the MCP call hands the agent the answer)
                await deliver_or_continue(
                    self.ctx, uow, row.session_id, row.turn_id, continuation_of(row), after_end=True
                )
            return row

    async def _resume(self, uow: Any, row: Clarification) -> None:
        """A hard-paused question answered while its turn is still current resumes the same session."""
        session = await uow.db.get(Session, row.session_id)
        newest = await uow.db.scalar(
            select(Turn.id).where(Turn.session_id == row.session_id).order_by(Turn.seq.desc()).limit(1)
        )
        if session is None or newest != row.turn_id:
            return
        await enqueue_prompt(self.ctx, uow, session, continuation_of(row))

    async def pending(
        self,
        workspace_id: str,
        *,
        since: datetime | None = None,
        after: str | None = None,
        limit: int = 50,
        task_id: str | None = None,
    ) -> QuestionPage:
        if not 1 <= limit <= 200:
            raise ValidationError("limit must be between 1 and 200", field="limit")
        async with self.ctx.read() as db:
            await load_workspace(db, self.ctx.principal, workspace_id)
            query = (
                select(Clarification)
                .join(Task, Task.id == Clarification.task_id)
                .where(
                    Task.workspace_id == workspace_id,
                    Task.deleted_at.is_(None),
                    Clarification.state == PENDING,
                )
            )
            if since is not None:
                query = query.where(Clarification.created_at >= since)
            if task_id is not None:
                query = query.where(Clarification.task_id == task_id)
            if (own := self.ctx.principal.own_run_task_id) is not None:
                query = query.where(Clarification.task_id != own)  # none it could answer: left out
            if after:
                anchor = await db.get(Clarification, after)
                if anchor is None:
                    raise ValidationError("cursor is not a question id from this list", field="cursor")
                query = query.where(
                    or_(
                        Clarification.created_at > anchor.created_at,
                        and_(Clarification.created_at == anchor.created_at, Clarification.id > anchor.id),
                    )
                )
            rows = list(await db.scalars(query.order_by(Clarification.created_at, Clarification.id).limit(limit + 1)))
        page = rows[:limit]
        return QuestionPage(page, page[-1].id if len(rows) > limit else None)

    async def get(self, clarification_id: str) -> Clarification:
        async with self.ctx.read() as db:
            row = await db.get(Clarification, clarification_id)
            if row is None:
                raise NotFoundError("question", clarification_id)
            try:
                await load_task(db, self.ctx.principal, row.task_id)
            except NotFoundError:
                raise NotFoundError("question", clarification_id) from None
            return row
