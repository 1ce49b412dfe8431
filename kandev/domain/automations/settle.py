"""A run follows its turn: bound when a worker claims the run's prompt, settled when that turn ends, failed
when its agent asks for a permission (a run never waits on a person), stopped with its session: reactions to
the sessions' TurnStarted, TurnEnded and SessionEnded events (wired in kandev.wiring).

A run stopped from outside it (its task stopped from the task page, its turn cancelled) reads cancelled as a
stopRun makes it: its stopped_at is set, from which every view derives the status."""

from __future__ import annotations

from sqlalchemy import select

from kandev.domain.automations.run_events import emit_run_event
from kandev.domain.automations.runs import OPEN_STATUSES
from kandev.domain.context import ServiceContext, UnitOfWork
from kandev.domain.events import SessionEnded, TurnEnded, TurnStarted
from kandev.models import Automation, AutomationRun
from kandev.models.base import utcnow
from kandev.models.enums import RunStatus, TurnState

_KEY_PREFIX = "automation-run:"


async def bind_run_turn(ctx: ServiceContext, uow: UnitOfWork, turn: TurnStarted) -> None:
    """The turn answering a run's prompt is that run's turn (a new task's first prompt, or a continued
    session's follow-up: either way the run's own, never a reply sent to it later)."""
    if turn.prompt_key.startswith(_KEY_PREFIX):
        run = await uow.db.get(AutomationRun, turn.prompt_key.removeprefix(_KEY_PREFIX))
    else:
        # start_agent writes a new task's first prompt without the run's key: the run bound to this session
        # that has no turn yet is the one it serves.
        run = await uow.db.scalar(
            select(AutomationRun)
            .where(
                AutomationRun.session_id == turn.session_id,
                AutomationRun.turn_id.is_(None),
                AutomationRun.status == RunStatus.TASK_CREATED,
            )
            .order_by(AutomationRun.created_at)
            .limit(1)
        )
    if run is not None and run.turn_id is None and turn.prompt_source == "automation":
        run.turn_id = turn.turn_id
        await _emit(uow, run)


async def settle_run(ctx: ServiceContext, uow: UnitOfWork, turn: TurnEnded) -> None:
    """The run of an ended turn: succeeded, or failed with the turn's error (a stop keeps its stopped_at and
    reads as cancelled). Its session is left WAITING_FOR_INPUT by the turn path, so a person can answer.
    Once committed, the automation's worktree retention runs (a job: no git work in this transaction)."""
    run = await uow.db.scalar(select(AutomationRun).where(AutomationRun.turn_id == turn.turn_id))
    if run is None or run.status != RunStatus.TASK_CREATED:
        return
    if turn.state == TurnState.COMPLETED:
        run.status = RunStatus.SUCCEEDED
    else:
        if turn.state == TurnState.CANCELLED and run.stopped_at is None:
            run.stopped_at = utcnow()
        run.status = RunStatus.FAILED
        run.reason = turn.error or (
            "the turn was cancelled" if turn.state == TurnState.CANCELLED else "the turn failed"
        )
    run.finished_at = utcnow()
    await _emit(uow, run)
    automation_id = run.automation_id
    uow.then(lambda: ctx.jobs.enqueue_worktree_retention(automation_id))


async def stop_session_runs(ctx: ServiceContext, uow: UnitOfWork, session: SessionEnded) -> None:
    """A session a person stopped (stopTask): its open runs are stopped as stopRun stops one. A run whose turn
    never started is finished here, as no turn of it will ever end; one whose turn runs is settled when the
    cancelled turn ends."""
    if not session.stopped:
        return
    runs = await uow.db.scalars(
        select(AutomationRun).where(
            AutomationRun.session_id == session.session_id,
            AutomationRun.status.in_(OPEN_STATUSES),
            AutomationRun.stopped_at.is_(None),
        )
    )
    for run in list(runs):
        run.stopped_at = utcnow()
        if run.turn_id is None:
            run.finished_at = run.stopped_at
        await _emit(uow, run)


async def fail_run_on_permission(ctx: ServiceContext, turn_id: str, title: str) -> bool:
    """When the turn is an automation run's: fail the run with the reason and answer True (the request is
    then rejected without asking anyone)."""
    async with ctx.unit_of_work() as uow:
        run = await uow.db.scalar(select(AutomationRun).where(AutomationRun.turn_id == turn_id))
        if run is None:
            return False
        if run.status == RunStatus.TASK_CREATED:
            run.status = RunStatus.FAILED
            run.reason = (
                f"the agent asked for permission ({title[:200]}); an automation run cannot wait for a permission "
                "response, so the request was rejected. Use a profile whose actions need no prompt."
            )
            run.finished_at = utcnow()
            await _emit(uow, run)
        return True


async def _emit(uow: UnitOfWork, run: AutomationRun) -> None:
    workspace_id = await uow.db.scalar(select(Automation.workspace_id).where(Automation.id == run.automation_id))
    if workspace_id is not None:
        await emit_run_event(uow, "RUN_UPDATED", run, workspace_id)
