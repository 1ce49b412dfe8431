"""Worktree retention: per automation, the checkouts of the ten newest finished hidden run tasks are kept and
older ones reclaimed (the task, its run and its transcript stay; only the directories go, the branches stay).

Run by a job enqueued when a run settles; safe to repeat. A finished task has no active run (runs.active_sql)
and nothing live in its sessions (no running turn, no queued prompt). The newest run's task is never
reclaimed: a continue-session automation continues it. A reclaimed task records `worktree_reclaimed_at` so it
isn't done again; a reply to it re-creates the checkout from the task's branch (turn_setup.prepare_turn),
which clears that mark."""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from datetime import datetime

from sqlalchemy import exists, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute
from sqlalchemy.sql.elements import ColumnElement

from kandev.domain.automations.runs import active_sql
from kandev.domain.context import ServiceContext
from kandev.domain.session_rows import lock_session, task_sessions
from kandev.domain.workspace.reclaim import reclaim_task_directories, repository_paths
from kandev.models import AutomationRun, QueuedPrompt, Session, Task, TaskCleanup, Turn
from kandev.models.base import utcnow
from kandev.models.enums import PromptState, TaskOrigin, TurnState

log = logging.getLogger("kandev.automations.retention")

KEPT_WORKTREES = 10


def running_turn(task_id: str | InstrumentedAttribute[str]) -> ColumnElement[bool]:
    """A turn of the task's sessions is running (its agent may be writing in the worktree)."""
    return exists(
        select(Turn.id)
        .join(Session, Session.id == Turn.session_id)
        .where(Session.task_id == task_id, Turn.state == TurnState.RUNNING)
    )


def _live(task_id: str | InstrumentedAttribute[str]) -> ColumnElement[bool]:
    """Something in the task's sessions is running or about to: a running turn or a queued prompt."""
    return running_turn(task_id) | exists(
        select(QueuedPrompt.id)
        .join(Session, Session.id == QueuedPrompt.session_id)
        .where(Session.task_id == task_id, QueuedPrompt.state == PromptState.QUEUED)
    )


async def worktrees_to_reclaim(db: AsyncSession, automation_id: str, kept: int = KEPT_WORKTREES) -> list[str]:
    """The automation's hidden run tasks whose directories go now: finished, not among the `kept` newest
    finished live tasks (a deleted one is never kept), not the newest run's, not reclaimed yet and not left
    to a durable cleanup."""
    rows = (
        await db.execute(
            select(AutomationRun.task_id, AutomationRun.created_at, AutomationRun.id, active_sql())
            .where(AutomationRun.automation_id == automation_id, AutomationRun.task_id.is_not(None))
            .order_by(AutomationRun.created_at.desc(), AutomationRun.id.desc())
        )
    ).all()
    if not rows:
        return []
    newest_task = str(rows[0][0])
    latest: dict[str, tuple[datetime, str]] = {}
    active: dict[str, bool] = defaultdict(bool)
    for task_id, created_at, run_id, is_active in rows:
        latest.setdefault(str(task_id), (created_at, run_id))
        active[str(task_id)] = active[str(task_id)] or bool(is_active)
    tasks = {
        row.id: row
        for row in (
            await db.execute(
                select(
                    Task.id,
                    Task.deleted_at,
                    Task.worktree_reclaimed_at,
                    _live(Task.id).label("live"),
                    exists(select(TaskCleanup.task_id).where(TaskCleanup.task_id == Task.id)).label("cleanup"),
                ).where(Task.id.in_(list(latest)), Task.origin == TaskOrigin.AUTOMATION_RUN)
            )
        ).all()
    }
    finished = [
        task_id
        for task_id in sorted(latest, key=lambda t: latest[t], reverse=True)
        if task_id in tasks and not active[task_id] and not tasks[task_id].live
    ]
    keep = {task_id for task_id in finished if tasks[task_id].deleted_at is None}
    keep = set(sorted(keep, key=lambda t: latest[t], reverse=True)[:kept]) | {newest_task}
    return [
        task_id
        for task_id in finished
        if task_id not in keep and tasks[task_id].worktree_reclaimed_at is None and not tasks[task_id].cleanup
    ]


async def retain_worktrees(ctx: ServiceContext, automation_id: str, kept: int = KEPT_WORKTREES) -> list[str]:
    """Reclaim the directories worktrees_to_reclaim names; returns the tasks reclaimed now."""
    async with ctx.read() as db:
        candidates = await worktrees_to_reclaim(db, automation_id, kept)
    reclaimed = []
    for task_id in candidates:
        repositories = await _forget_directories(ctx, task_id)
        if repositories is None:
            continue
        try:
            await asyncio.to_thread(reclaim_task_directories, ctx.settings.work_path, task_id, repositories)
        except OSError:
            # Not marked: the next settled run's retention tries it again.
            log.warning("could not reclaim the worktrees of task %s", task_id, exc_info=True)
            continue
        async with ctx.unit_of_work() as uow:
            # Unless a turn re-prepared the task meanwhile (it set a working directory again).
            prepared = await uow.db.scalar(
                select(exists(select(Session.id).where(Session.task_id == task_id, Session.working_dir.is_not(None))))
            )
            if not prepared:
                await uow.db.execute(
                    update(Task)
                    .where(Task.id == task_id)
                    .values(worktree_reclaimed_at=utcnow(), updated_at=Task.updated_at)
                    .execution_options(synchronize_session=False)
                )
        reclaimed.append(task_id)
    return reclaimed


async def _forget_directories(ctx: ServiceContext, task_id: str) -> list[str] | None:
    """Under its sessions' locks, with nothing live on the task: its sessions forget their working directory
    (the next turn prepares one again); the paths of its repositories, or None when it is no longer finished."""
    async with ctx.unit_of_work() as uow:
        sessions = [await lock_session(uow.db, s.id) for s in await task_sessions(uow.db, task_id)]
        if await uow.db.scalar(select(_live(task_id))):
            return None
        for session in sessions:
            if session is not None:
                session.working_dir = None
        return await repository_paths(uow.db, task_id)
