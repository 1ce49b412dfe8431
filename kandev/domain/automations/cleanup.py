"""Durable cleanup of hidden run tasks: deleting an automation, a run or all its runs records a cleanup row
for each hidden task it leaves behind in that same transaction (`capture_cleanups`), and the cleanup job
(`run_cleanup`, on the automations queue) then stops what is live on the task, soft-deletes it as the system
and reclaims its directories.

- A job claims its row by moving `next_attempt_at` forward (compare-and-set), so a duplicate job does nothing
  and a job that died mid-way is taken up again once the claim lapses.
- A failure is retried with exponential backoff (`last_error` says why); a task whose turn is still being
  cancelled is looked at again shortly, without counting an attempt.
- Recovery (`due_cleanups`, on every scheduler tick and process start) enqueues every due row again, so a job
  lost with Redis is not lost. `done_at` ends a row: running a cleanup twice does nothing twice."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import select, update
from sqlalchemy.engine import CursorResult

from kandev.domain.automations.retention import running_turn
from kandev.domain.context import ServiceContext, UnitOfWork
from kandev.domain.session_rows import is_terminal, lock_session, task_sessions
from kandev.domain.sessions.ends import end_session
from kandev.domain.sessions.prompts import cancel_queued
from kandev.domain.tasks.service import delete_task
from kandev.domain.workspace.reclaim import reclaim_task_directories, repository_paths
from kandev.models import AutomationRun, Task, TaskCleanup
from kandev.models.base import utcnow
from kandev.models.enums import SessionState, TaskOrigin

log = logging.getLogger("kandev.automations.cleanup")

AUTOMATION_DELETED = "automation_deleted"
RUN_DELETED = "run_deleted"

# Longer than the job's timeout: a claimed cleanup whose job vanished is taken up again after this.
CLAIM_SECONDS = 600
BACKOFF_SECONDS = 10.0
MAX_BACKOFF_SECONDS = 3600.0
# How soon a task whose turn was just cancelled is looked at again (its worker kills the agent first).
TURN_STOP_WAIT_SECONDS = 2.0
BATCH = 500
NOTE = "Stopped by the system: this automation run's task was deleted with its automation or its run."


def backoff(attempts: int) -> timedelta:
    """The wait after the `attempts`-th failed attempt: 10 s, 20 s, 40 s, … capped at an hour."""
    return timedelta(seconds=min(BACKOFF_SECONDS * 2 ** max(attempts - 1, 0), MAX_BACKOFF_SECONDS))


async def hidden_run_tasks(uow: UnitOfWork, automation_id: str) -> list[str]:
    """The automation's hidden run tasks not deleted yet. The runs are locked first, so a launch binding a
    new task to one of them either commits before this reads (and its task is captured) or waits and then
    finds the automation deleted."""
    await uow.db.execute(select(AutomationRun.id).where(AutomationRun.automation_id == automation_id).with_for_update())
    rows = await uow.db.scalars(
        select(Task.id)
        .join(AutomationRun, AutomationRun.task_id == Task.id)
        .where(
            AutomationRun.automation_id == automation_id,
            Task.origin == TaskOrigin.AUTOMATION_RUN,
            Task.deleted_at.is_(None),
        )
        .distinct()
    )
    return sorted(rows)


async def capture_cleanups(ctx: ServiceContext, uow: UnitOfWork, task_ids: Iterable[str], reason: str) -> list[str]:
    """Record a cleanup for each task in the caller's transaction (one already recorded stays as it is) and
    enqueue its job once that commits. Returns the tasks newly recorded."""
    now = utcnow()
    captured = []
    for task_id in task_ids:
        if await uow.db.get(TaskCleanup, task_id) is not None:
            continue
        uow.db.add(TaskCleanup(task_id=task_id, reason=reason, attempts=0, next_attempt_at=now))
        captured.append(task_id)
    await uow.db.flush()
    for task_id in captured:
        uow.then(lambda task_id=task_id: ctx.jobs.enqueue_task_cleanup(task_id))  # type: ignore[misc]
    return captured


async def due_cleanups(ctx: ServiceContext, now: datetime | None = None) -> list[str]:
    """Tasks whose cleanup is pending and due (never claimed, its claim lapsed, or its backoff over)."""
    async with ctx.read() as db:
        rows = await db.scalars(
            select(TaskCleanup.task_id)
            .where(TaskCleanup.done_at.is_(None), TaskCleanup.next_attempt_at <= (now or utcnow()))
            .order_by(TaskCleanup.next_attempt_at)
            .limit(BATCH)
        )
        return list(rows)


async def run_cleanup(ctx: ServiceContext, task_id: str, *, now: datetime | None = None) -> str:
    """Clean one task up, once; returns what happened (the job's result)."""
    moment = now or utcnow()
    if not await _claim(ctx, task_id, moment):
        return "nothing to do"
    try:
        repositories = await _delete(ctx, task_id)
        if repositories is None:
            await _reschedule(ctx, task_id, moment + timedelta(seconds=TURN_STOP_WAIT_SECONDS), None)
            return "waiting for the running turn to stop"
        await asyncio.to_thread(reclaim_task_directories, ctx.settings.work_path, task_id, repositories)
    except Exception as error:
        await _failed(ctx, task_id, error, moment)
        return "failed"
    async with ctx.unit_of_work() as uow:
        row = await uow.db.get(TaskCleanup, task_id)
        if row is not None:
            row.done_at, row.last_error = utcnow(), None
    return "done"


async def _claim(ctx: ServiceContext, task_id: str, moment: datetime) -> bool:
    async with ctx.unit_of_work() as uow:
        result = cast(
            CursorResult[Any],
            await uow.db.execute(
                update(TaskCleanup)
                .where(
                    TaskCleanup.task_id == task_id,
                    TaskCleanup.done_at.is_(None),
                    TaskCleanup.next_attempt_at <= moment,
                )
                .values(next_attempt_at=moment + timedelta(seconds=CLAIM_SECONDS))
                .execution_options(synchronize_session=False)
            ),
        )
        return bool(result.rowcount)


async def _delete(ctx: ServiceContext, task_id: str) -> list[str] | None:
    """Stop what is live on the task and soft-delete it (both once); the paths of its repositories, or None
    while a cancelled turn is still running (its agent may still be writing in the worktree)."""
    async with ctx.unit_of_work() as uow:
        task = await uow.db.get(Task, task_id)
        if task is None:
            return []
        for session in await task_sessions(uow.db, task.id):
            locked = await lock_session(uow.db, session.id)
            if locked is None or is_terminal(locked):
                continue
            await cancel_queued(uow.db, locked.id)
            await end_session(ctx, uow, locked, SessionState.CANCELLED, "the task was deleted", note=NOTE)
        if task.deleted_at is None:
            await delete_task(ctx, uow, task)
        if await uow.db.scalar(select(running_turn(task.id))):
            return None
        return await repository_paths(uow.db, task.id)


async def _reschedule(ctx: ServiceContext, task_id: str, at: datetime, error: str | None) -> None:
    async with ctx.unit_of_work() as uow:
        row = await uow.db.get(TaskCleanup, task_id)
        if row is not None and row.done_at is None:
            row.next_attempt_at = at
            if error is not None:
                row.attempts += 1
                row.last_error = error[:500]


async def _failed(ctx: ServiceContext, task_id: str, error: Exception, moment: datetime) -> None:
    async with ctx.read() as db:
        attempts = (await db.scalar(select(TaskCleanup.attempts).where(TaskCleanup.task_id == task_id)) or 0) + 1
    log.warning("cleanup of task %s failed (attempt %d), retrying later", task_id, attempts, exc_info=True)
    await _reschedule(ctx, task_id, moment + backoff(attempts), f"{type(error).__name__}: {error}")
