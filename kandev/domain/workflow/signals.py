"""step_complete_kandev and its manual fallback: the explicit signal that a step's work is done."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select

from kandev.domain.context import ServiceContext, UnitOfWork
from kandev.domain.errors import ConflictError, NotFoundError, PermissionDeniedError
from kandev.domain.feeds import emit_session_event
from kandev.domain.scope import load_task
from kandev.domain.session_rows import is_terminal, lock_session
from kandev.domain.workflow.engine import consume_signal, current_turn_question_pending, valid_signal
from kandev.models import AgentProfile, Clarification, Session, Task, Turn, WorkflowStep
from kandev.models.base import utcnow
from kandev.models.enums import TurnState

AGENT, MANUAL = "agent", "manual_fallback"

# Each text of a completion signal (summary, handoff, blockers) is at most this long.
MAX_SIGNAL_TEXT_LENGTH = 4000


@dataclass(frozen=True)
class SignalResult:
    accepted: bool
    reason: str | None = None


class SignalService:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    async def step_complete(
        self, summary: str, handoff: str | None = None, blockers: str | None = None
    ) -> SignalResult:
        """The agent says its step is done; only a session principal may, for its own session."""
        session_id = self.ctx.principal.session_id
        if session_id is None:
            raise PermissionDeniedError("only an agent in a task session can signal step completion")
        async with self.ctx.unit_of_work() as uow:
            session, task, step = await self._load(uow, session_id)
            turn = await _newest_turn(uow, session.id)
            if turn is None:
                return SignalResult(False, "no_turn")
            if turn.seq <= session.signal_floor_turn_seq:
                # The user replied after this turn began: the step was re-opened, the signal is stale.
                return SignalResult(False, "reopened")
            # One signal per (session, turn, step), consumed or not: a retry must never skip a step.
            if turn.signaled_at is not None or valid_signal(session, step.id) is not None:
                return SignalResult(False, "already_signaled")
            if (turn.step_id or step.id) != step.id:
                # The task left the step this turn worked on; only a new turn on the new step may signal it.
                return SignalResult(False, "step_changed")
            await self._write(uow, session, task, step, turn, AGENT, summary, handoff, blockers)
            agent = await self._agent_label(uow, session)
            uow.then(
                lambda: self.ctx.counters.increment("step_completion_signal_received_total", source=AGENT, agent=agent)
            )
            return SignalResult(True)

    async def mark_complete(self, session_id: str) -> Session:
        """The operator's 'Mark complete & advance': a manual_fallback signal, consumed now."""
        async with self.ctx.unit_of_work() as uow:
            session = await uow.db.get(Session, session_id)
            if session is None:
                raise NotFoundError("session", session_id)
            try:
                await load_task(uow.db, self.ctx.principal, session.task_id)
            except NotFoundError:
                raise NotFoundError("session", session_id) from None
            session, task, step = await self._load(uow, session_id)
            if is_terminal(session):
                raise ConflictError(f"the session is {session.state.lower()}")
            if not session.completion_pending:
                # The flag is cleared on every step change: it always names the step it was raised on.
                raise ConflictError("no completion is pending on this step; nothing to mark complete")
            if await _pending_question(uow, session.id):
                raise ConflictError("answer the pending question first; the step can't advance while it waits")
            turn = await _newest_turn(uow, session.id)
            if turn is not None and turn.state == TurnState.RUNNING:
                raise ConflictError("the agent is still working on this step; wait for its turn to end")
            await self._write(uow, session, task, step, turn, MANUAL, "Marked complete by the operator.", None, None)
            agent = await self._agent_label(uow, session)
            uow.then(
                lambda: self.ctx.counters.increment("step_completion_signal_received_total", source=MANUAL, agent=agent)
            )
            uow.then(lambda: self.ctx.counters.increment("step_completion_signal_fallback_used_total", agent=agent))
            return session

    async def _load(self, uow: UnitOfWork, session_id: str) -> tuple[Session, Task, WorkflowStep]:
        session = await lock_session(uow.db, session_id)
        if session is None:
            raise NotFoundError("session", session_id)
        task = await uow.db.get(Task, session.task_id)
        assert task is not None
        step = await uow.db.get(WorkflowStep, task.workflow_step_id)
        assert step is not None
        return session, task, step

    async def _write(
        self,
        uow: UnitOfWork,
        session: Session,
        task: Task,
        step: WorkflowStep,
        turn: Turn | None,
        source: str,
        summary: str,
        handoff: str | None,
        blockers: str | None,
    ) -> None:
        signal = {
            "step_id": step.id,
            "turn_id": turn.id if turn else None,
            "turn_seq": turn.seq if turn else 0,
            "source": source,
            "summary": summary,
            "handoff": handoff,
            "blockers": blockers,
            "signaled_at": utcnow().isoformat(),
        }
        session.pending_signal = signal
        session.updated_at = utcnow()
        if turn is not None:
            turn.signaled_at = session.updated_at
        emit_session_event(uow, "STATE_CHANGED", session)
        # A signal after the turn already ended (the common shape) advances now, unless the current
        # turn has a question pending (the hard-pause barrier blocks every turn-complete path).
        turn_over = turn is None or turn.state != TurnState.RUNNING
        advances = step.auto_advance_requires_signal or source == MANUAL
        if turn_over and advances and not await current_turn_question_pending(uow, session):
            await consume_signal(self.ctx, uow, session, task, step, signal)

    async def _agent_label(self, uow: UnitOfWork, session: Session) -> str:
        profile = await uow.db.get(AgentProfile, session.agent_profile_id) if session.agent_profile_id else None
        return profile.name if profile else "unknown"


async def _newest_turn(uow: UnitOfWork, session_id: str) -> Turn | None:
    return await uow.db.scalar(select(Turn).where(Turn.session_id == session_id).order_by(Turn.seq.desc()).limit(1))


async def _pending_question(uow: UnitOfWork, session_id: str) -> bool:
    found = await uow.db.scalar(
        select(Clarification.id).where(Clarification.session_id == session_id, Clarification.state == "PENDING")
    )
    return found is not None
