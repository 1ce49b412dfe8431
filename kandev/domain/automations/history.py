"""One page of runs, newest first: the keyset paging and filters shared by an automation's runs and a
workspace's runs."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.automations import runs
from kandev.domain.automations.records import RunPage, RunRecord
from kandev.domain.pagination import decode_cursor, encode_cursor
from kandev.models import AutomationRun, Task
from kandev.models.enums import RunStatus, RunTriggerType


@dataclass(frozen=True)
class RunFilter:
    """`status` is the shown status (archived and cancelled included); since/until bound created_at."""

    status: RunStatus | None = None
    trigger_type: RunTriggerType | None = None
    since: datetime | None = None
    until: datetime | None = None


async def run_page(
    db: AsyncSession, scope: Any, filters: RunFilter, *, first: int, after: str | None, count: bool
) -> RunPage:
    """The runs matching `scope` (a condition on AutomationRun) and the filters."""
    conditions = [scope]
    if filters.status is not None:
        conditions.append(runs.shown_status_sql() == filters.status.value)
    if filters.trigger_type is not None:
        conditions.append(AutomationRun.trigger_type == filters.trigger_type)
    if filters.since is not None:
        conditions.append(AutomationRun.created_at >= filters.since)
    if filters.until is not None:
        conditions.append(AutomationRun.created_at < filters.until)
    total = None
    if count:
        counted = (
            select(func.count())
            .select_from(AutomationRun)
            .outerjoin(Task, Task.id == AutomationRun.task_id)
            .where(*conditions)
        )
        total = await db.scalar(counted) or 0
    if after:
        created_at, run_id = decode_cursor(after)
        conditions.append(
            or_(
                AutomationRun.created_at < created_at,
                and_(AutomationRun.created_at == created_at, AutomationRun.id < run_id),
            )
        )
    rows = (
        await db.execute(
            RunRecord.query()
            .where(*conditions)
            .order_by(AutomationRun.created_at.desc(), AutomationRun.id.desc())
            .limit(first + 1)
        )
    ).all()
    page = [RunRecord.of(row) for row in rows[:first]]
    return RunPage(
        records=page,
        has_next_page=len(rows) > first,
        cursors=[encode_cursor(run.created_at, run.id) for run in page],
        total_count=total,
    )
