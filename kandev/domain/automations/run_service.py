"""Runs as people handle them: Run now, stop one run, delete runs, and the workspace's run history.

Every read and write goes through the principal's access to the run's automation (load_run)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.automations.cleanup import RUN_DELETED, capture_cleanups
from kandev.domain.automations.firing import FireOutcome, fire
from kandev.domain.automations.history import RunFilter, run_page
from kandev.domain.automations.launch import KEY_PREFIX, PROMPT_SOURCE, prompt_key
from kandev.domain.automations.records import RunPage, RunRecord
from kandev.domain.automations.references import load_automation
from kandev.domain.automations.run_events import emit_run_deleted, emit_run_event
from kandev.domain.automations.runs import OPEN_STATUSES
from kandev.domain.context import Principal, ServiceContext, UnitOfWork
from kandev.domain.errors import ConflictError, NotFoundError
from kandev.domain.scope import load_workspace
from kandev.domain.sessions.ends import cancel_running_turn
from kandev.domain.validation import check_first
from kandev.models import Automation, AutomationRun, QueuedPrompt, Task, Turn
from kandev.models.base import utcnow
from kandev.models.enums import PromptState, RunTriggerType, TaskOrigin, TurnState


async def load_run(db: AsyncSession, principal: Principal, run_id: str) -> tuple[AutomationRun, Automation]:
    """A run of a live automation the principal sees; anything else is the same not-found."""
    run = await db.get(AutomationRun, run_id)
    if run is None:
        raise NotFoundError("automation run", run_id)
    try:
        automation = await load_automation(db, principal, run.automation_id)
    except NotFoundError:
        raise NotFoundError("automation run", run_id) from None
    return run, automation


class AutomationRunService:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    async def in_workspace(
        self, workspace_id: str, filters: RunFilter, *, first: int = 50, after: str | None = None, count: bool = False
    ) -> RunPage:
        """The runs of every live automation of the workspace, newest first."""
        check_first(first)
        async with self.ctx.read() as db:
            await load_workspace(db, self.ctx.principal, workspace_id)
            automations = select(Automation.id).where(
                Automation.workspace_id == workspace_id, Automation.deleted_at.is_(None)
            )
            scope = AutomationRun.automation_id.in_(automations)
            return await run_page(db, scope, filters, first=first, after=after, count=count)

    async def get(self, run_id: str) -> RunRecord:
        async with self.ctx.read() as db:
            await load_run(db, self.ctx.principal, run_id)
            return RunRecord.of((await db.execute(RunRecord.query().where(AutomationRun.id == run_id))).one())

    async def fire(
        self,
        automation_id: str,
        *,
        trigger_id: str | None,
        trigger_type: RunTriggerType | str,
        occurrence: datetime | None = None,
        data: Mapping[str, Any] | None = None,
        dedup_key: str | None = None,
    ) -> FireOutcome:
        """firing.fire as this service's principal: the front door the scheduler, webhook and GitHub jobs use."""
        return await fire(
            self.ctx,
            automation_id,
            trigger_id=trigger_id,
            trigger_type=trigger_type,
            occurrence=occurrence,
            data=data,
            dedup_key=dedup_key,
        )

    async def run_now(self, automation_id: str) -> tuple[FireOutcome, RunRecord | None]:
        """A manual firing (no trigger, no dedup key) under the same admission rules as every trigger."""
        outcome = await fire(self.ctx, automation_id, trigger_id=None, trigger_type=RunTriggerType.MANUAL)
        return outcome, (await self.get(outcome.run_id) if outcome.run_id else None)

    async def stop(self, run_id: str) -> RunRecord:
        """Cancel this run's own turn only (stop reason `cancelled`, a SYSTEM marker in the transcript); the
        session stays WAITING_FOR_INPUT for a reply, and the run reads as cancelled from its stopped_at.
        Another run sharing the session (continue-session) keeps its turn and its status."""
        async with self.ctx.unit_of_work() as uow:
            run, automation = await load_run(uow.db, self.ctx.principal, run_id)
            if run.stopped_at is None:
                if run.status not in OPEN_STATUSES:
                    raise ConflictError("the run has already finished", run_id=run.id, status=run.status)
                run.stopped_at = utcnow()
                await self._halt(uow, run)
            return await emit_run_event(
                uow, "RUN_UPDATED", run, automation.workspace_id, prompt_template=automation.prompt
            )

    async def _halt(self, uow: UnitOfWork, run: AutomationRun) -> None:
        """Stop what of the run is live. A run whose turn runs is settled when that turn ends; one that has
        no turn yet is finished here, as no turn of it will ever end."""
        if run.session_id is None:
            run.finished_at = run.stopped_at  # not launched yet: the launch job sees stopped_at, launches nothing
            return
        note = f"Stopped by {self.ctx.principal.actor}: this automation run's turn was cancelled."
        if run.turn_id is not None:
            turn = await uow.db.get(Turn, run.turn_id)
            if turn is not None and turn.state == TurnState.RUNNING:
                await cancel_running_turn(self.ctx, uow, run.session_id, note=note)
            return
        run.finished_at = run.stopped_at
        # Launched, its prompt not claimed yet: withdraw that prompt, so no turn of this run ever starts.
        prompts = await uow.db.scalars(
            select(QueuedPrompt).where(
                QueuedPrompt.session_id == run.session_id,
                QueuedPrompt.state == PromptState.QUEUED,
                QueuedPrompt.source == PROMPT_SOURCE,
            )
        )
        for prompt in prompts:
            # A continued run's prompt carries its key; a new task's first prompt is its run's only unkeyed one.
            if prompt.idempotency_key == prompt_key(run.id) or not prompt.idempotency_key.startswith(KEY_PREFIX):
                prompt.state = PromptState.CANCELLED

    async def delete(self, run_id: str) -> RunRecord:
        """Delete one run; its hidden task goes too when no other run references it (a durable cleanup,
        recorded with the deletion: a job stops the task, deletes it and reclaims its worktrees)."""
        async with self.ctx.unit_of_work() as uow:
            run, automation = await load_run(uow.db, self.ctx.principal, run_id)
            record = RunRecord.of((await uow.db.execute(RunRecord.query().where(AutomationRun.id == run.id))).one())
            await self._delete_runs(uow, [run.id])
            emit_run_deleted(uow, record, automation.workspace_id)
        return record

    async def delete_all(self, automation_id: str) -> int:
        """Delete every run of the automation and the hidden tasks no other run references; irreversible."""
        async with self.ctx.unit_of_work() as uow:
            await load_automation(uow.db, self.ctx.principal, automation_id)
            ids = list(
                await uow.db.scalars(select(AutomationRun.id).where(AutomationRun.automation_id == automation_id))
            )
            await self._delete_runs(uow, ids)
        return len(ids)

    async def _delete_runs(self, uow: UnitOfWork, run_ids: list[str]) -> None:
        """Delete the runs, capturing their hidden tasks that no remaining run references in durable cleanups.
        The runs are locked first, so a launch binding a task to one of them is seen (or sees them gone)."""
        task_ids = set(
            await uow.db.scalars(
                select(AutomationRun.task_id)
                .where(AutomationRun.id.in_(run_ids), AutomationRun.task_id.is_not(None))
                .with_for_update()
            )
        )
        await uow.db.execute(delete(AutomationRun).where(AutomationRun.id.in_(run_ids)))
        if not task_ids:
            return
        still = set(await uow.db.scalars(select(AutomationRun.task_id).where(AutomationRun.task_id.in_(task_ids))))
        hidden = await uow.db.scalars(
            select(Task.id).where(
                Task.id.in_(task_ids - still),
                Task.origin == TaskOrigin.AUTOMATION_RUN,
                Task.deleted_at.is_(None),
            )
        )
        await capture_cleanups(self.ctx, uow, sorted(hidden), RUN_DELETED)
