"""A turn waiting on a person (a permission request, a clarification) ends its job in the worker; the
answer goes back to that worker when it can take it, or else continues the session as a new prompt."""

from __future__ import annotations

from kandev.domain.context import ServiceContext, UnitOfWork
from kandev.domain.prompts import PromptSpec, enqueue_prompt, lock_session
from kandev.domain.session_ends import cancel_running_turn
from kandev.models import Turn
from kandev.models.enums import TurnState

HANDED_OVER = (
    "The worker holding this turn's agent was busy or gone when the answer came, so the turn was ended "
    "and the answer continues the session as the next prompt."
)


async def deliver_or_continue(
    ctx: ServiceContext, uow: UnitOfWork, session_id: str, turn_id: str | None, continuation: PromptSpec
) -> None:
    """After an answer: wake the waiting turn on its worker (a job on that worker's own queue), or, when
    that worker is busy with other work or dead, end the turn (its agent is closed) and queue the answer
    as a continuation prompt, which any free worker runs after launching the agent and resuming."""
    turn = await uow.session.get(Turn, turn_id) if turn_id else None
    if turn is None or turn.state != TurnState.RUNNING or not turn.worker_name:
        return  # nothing is waiting any more
    owner = turn.worker_name
    if await ctx.jobs.can_deliver(owner, session_id):
        uow.then(lambda: ctx.jobs.deliver_answer(session_id, owner))
        return
    await cancel_running_turn(ctx, uow, session_id, note=HANDED_OVER)
    session = await lock_session(uow.session, session_id)
    assert session is not None
    await enqueue_prompt(ctx, uow, session, continuation)
