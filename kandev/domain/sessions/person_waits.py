"""A turn waiting on a person (a permission request, a clarification) ends its job in the worker; the
answer goes back to that worker when it can take it, or else continues the session as a new prompt."""

from __future__ import annotations

from sqlalchemy import select

from kandev.domain.context import ServiceContext, UnitOfWork
from kandev.domain.session_rows import is_terminal, lock_session
from kandev.domain.sessions.ends import cancel_running_turn
from kandev.domain.sessions.prompts import PromptSpec, enqueue_prompt
from kandev.models import Turn
from kandev.models.enums import TurnState

HANDED_OVER = (
    "The worker holding this turn's agent was busy or gone when the answer came, so the turn was ended "
    "and the answer continues the session as the next prompt."
)


async def deliver_or_continue(
    ctx: ServiceContext,
    uow: UnitOfWork,
    session_id: str,
    turn_id: str | None,
    continuation: PromptSpec,
    *,
    after_end: bool = False,
) -> None:
    """After an answer: wake the waiting turn on its worker (a job on that worker's own queue), or, when
    that worker is busy with other work or dead, end the turn (its agent is closed) and queue the answer
    as a continuation prompt, which any free worker runs after launching the agent and resuming. With
    `after_end`, an answer to the session's newest turn that failed meanwhile (e.g. its worker died, and the
    turn was reaped) continues the session too."""
    turn = await uow.db.get(Turn, turn_id) if turn_id else None
    if turn is None:
        return
    if turn.state != TurnState.RUNNING or not turn.worker_name:
        newest = await uow.db.scalar(
            select(Turn.id).where(Turn.session_id == session_id).order_by(Turn.seq.desc()).limit(1)
        )
        if after_end and newest == turn.id and turn.state == TurnState.FAILED:  # the asking agent is gone
            session = await lock_session(uow.db, session_id)
            if session is not None and not is_terminal(session):
                await enqueue_prompt(ctx, uow, session, continuation)
        return
    owner = turn.worker_name
    if await ctx.jobs.can_deliver(owner, session_id):
        uow.then(lambda: ctx.jobs.deliver_answer(session_id, owner))
        return
    await cancel_running_turn(ctx, uow, session_id, note=HANDED_OVER)
    session = await lock_session(uow.db, session_id)
    assert session is not None
    await enqueue_prompt(ctx, uow, session, continuation)
