"""Per-user quotas: workspaces owned, live automations, tasks created per hour, and how often a schedule fires.

Each is counted for the owner of the workspace being written to, inside the write's own transaction after
locking that owner's row (`FOR NO KEY UPDATE` on PostgreSQL, which rows referencing the user do not wait on;
SQLite's BEGIN IMMEDIATE serializes every write already), so two creations at the limit never both pass,
on one server or several. A setting of 0 switches a quota off.

An admin acting in person is exempt; their agents (session principals) and their automations' runs (the
system principal) are not: a runaway agent or an automation's flood counts against its owner like anyone's.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import timedelta

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.context import Principal, ServiceContext
from kandev.domain.errors import QuotaExceededError, ScheduleTooFrequentError
from kandev.models import Automation, Task, User, Workspace
from kandev.models.base import utcnow

HOUR = timedelta(hours=1)


def exempt(principal: Principal) -> bool:
    """An admin in person (never an agent's session acting for one)."""
    return principal.admin and principal.session_id is None


async def _hold(db: AsyncSession, owner_id: str) -> None:
    """Lock the owner's row for the rest of the transaction: quota checks of one user take turns."""
    await db.execute(select(User.id).where(User.id == owner_id).with_for_update(key_share=True))


async def check_workspaces(db: AsyncSession, ctx: ServiceContext, owner_id: str) -> None:
    """Refuse a new workspace of `owner_id` when they own KANDEV_QUOTA_WORKSPACES already."""
    limit = ctx.settings.quota_workspaces
    if not limit or exempt(ctx.principal):
        return
    await _hold(db, owner_id)
    owned = await db.scalar(select(func.count()).select_from(Workspace).where(Workspace.owner_id == owner_id))
    if (owned or 0) >= limit:
        raise QuotaExceededError(
            f"you own {limit} workspaces, the most KANDEV_QUOTA_WORKSPACES allows; delete one or ask an admin",
            quota="workspaces",
            limit=limit,
        )


async def check_automations(db: AsyncSession, ctx: ServiceContext, owner_id: str) -> None:
    """Refuse a new automation in a workspace of `owner_id` when their workspaces hold KANDEV_QUOTA_AUTOMATIONS
    live ones already (per user, not per workspace: more workspaces would otherwise mean more automations)."""
    limit = ctx.settings.quota_automations
    if not limit or exempt(ctx.principal):
        return
    await _hold(db, owner_id)
    live = await db.scalar(
        select(func.count())
        .select_from(Automation)
        .join(Workspace, Workspace.id == Automation.workspace_id)
        .where(Workspace.owner_id == owner_id, Automation.deleted_at.is_(None))
    )
    if (live or 0) >= limit:
        raise QuotaExceededError(
            f"the workspaces' owner has {limit} automations, the most KANDEV_QUOTA_AUTOMATIONS allows; "
            "delete one or ask an admin",
            quota="automations",
            limit=limit,
        )


async def check_tasks(db: AsyncSession, ctx: ServiceContext, owner_id: str) -> None:
    """Refuse a new task in a workspace of `owner_id` when KANDEV_QUOTA_TASKS_PER_HOUR were created in their
    workspaces within the last hour (deleted ones included: deleting frees no room); the error says when the
    next one fits."""
    limit = ctx.settings.quota_tasks_per_hour
    if not limit or exempt(ctx.principal):
        return
    await _hold(db, owner_id)
    now = utcnow()
    recent = (
        select(Task.created_at)
        .join(Workspace, Workspace.id == Task.workspace_id)
        .where(Workspace.owner_id == owner_id, Task.created_at > now - HOUR)
    )
    created = await db.scalar(select(func.count()).select_from(recent.subquery())) or 0
    if created < limit:
        return
    # The window makes room when the oldest tasks beyond the limit leave it.
    leaving = await db.scalar(recent.order_by(Task.created_at).offset(created - limit).limit(1))
    wait = (leaving + HOUR - now).total_seconds() if leaving is not None else HOUR.total_seconds()
    raise QuotaExceededError(
        f"{limit} tasks were created in this owner's workspaces within the last hour, the most "
        "KANDEV_QUOTA_TASKS_PER_HOUR allows; try again later",
        quota="tasks_per_hour",
        limit=limit,
        retry_after_seconds=max(1, math.ceil(wait)),
    )


def check_schedule_intervals(ctx: ServiceContext, schedules: Iterable[tuple[int, timedelta]]) -> None:
    """Refuse a schedule (trigger index, its shortest interval) that fires more often than
    KANDEV_QUOTA_MIN_SCHEDULE_SECONDS."""
    limit = ctx.settings.quota_min_schedule_seconds
    if not limit or exempt(ctx.principal):
        return
    for index, shortest in schedules:
        if shortest.total_seconds() < limit:
            raise ScheduleTooFrequentError(
                f"the schedule fires more often than every {_duration(limit)}, the shortest interval "
                "KANDEV_QUOTA_MIN_SCHEDULE_SECONDS allows",
                field=f"triggers[{index}].expression",
                quota="min_schedule_interval",
                limit=limit,
            )


def _duration(seconds: int) -> str:
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds % size == 0:
            count = seconds // size
            return unit if count == 1 else f"{count} {unit}s"
    return f"{seconds} seconds"
