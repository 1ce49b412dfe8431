"""Firing schedules on time: each scheduled trigger stores its next fire; the scheduler claims due ones.

- The automation service keeps `automation_triggers.next_fire_at` on every save (`refresh_next_fires`): the
  first occurrence after the save, null unless an enabled schedule of an enabled, live automation.
- `fire_due` claims a due trigger by moving its next fire with a compare-and-set on the stored value, so two
  schedulers never fire one occurrence twice, then fires it with the occurrence's dedup key (the unique run
  key is the last guarantee). A scheduler that was down fires the newest missed occurrence once; the
  schedule then continues from now. A cap skip still advances it (fire() writes the skipped run).
- `run_schedules` sleeps until the earliest next fire (at most `max_sleep`) or a wake published on save.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm.attributes import flag_modified

from kandev.domain.automations.agenda import computed_next_fire, schedule_of
from kandev.domain.automations.firing import FireOutcome, fire
from kandev.domain.automations.references import live_triggers
from kandev.domain.automations.run_events import emit_next_fire
from kandev.domain.context import ServiceContext, UnitOfWork
from kandev.models import Automation, AutomationTrigger
from kandev.models.enums import RunTriggerType, TriggerType
from kandev.platform.clock import Clock
from kandev.platform.event_bus import ScheduleWake, schedule_wake_channel

log = logging.getLogger("kandev.scheduler.schedules")

BATCH = 500  # due triggers read per pass
CONCURRENT_FIRES = 8  # fires in flight at once within a pass
_POLL_SECONDS = 0.25  # how often a sleeping loop looks at its stop flag


def dedup_key(trigger_id: str, occurrence: datetime) -> str:
    """One key per trigger and due minute: a second firing of the occurrence is DEDUPLICATED."""
    return f"scheduled:{trigger_id}:{occurrence.replace(second=0, microsecond=0).isoformat()}"


async def refresh_next_fires(uow: UnitOfWork, automation: Automation, now: datetime) -> None:
    """Store each trigger's next fire as the automation is saved, and wake sleeping schedulers."""
    live = automation.enabled and automation.deleted_at is None
    rows = list(await uow.db.scalars(select(AutomationTrigger).where(AutomationTrigger.automation_id == automation.id)))
    before = _earliest(row.next_fire_at for row in rows)
    for row in rows:
        anchor = row.updated_at
        wanted = computed_next_fire(row.type, row.enabled, row.config or {}, anchor, now) if live else None
        if row.next_fire_at != wanted:
            row.next_fire_at = wanted
            flag_modified(row, "updated_at")  # kept: it is the @every anchor, and no setting changed
    await uow.db.flush()
    after = _earliest(row.next_fire_at for row in rows)
    if after != before:
        emit_next_fire(uow, automation.workspace_id, automation.id, after)
    uow.emit(schedule_wake_channel(), ScheduleWake(automation_id=automation.id))


def _earliest(instants: Iterable[datetime | None]) -> datetime | None:
    return min((i for i in instants if i is not None), default=None)


@dataclass(frozen=True)
class _Due:
    trigger_id: str
    automation_id: str
    workspace_id: str
    due: datetime
    config: dict[str, object]
    anchor: datetime


def _due_query(now: datetime) -> object:
    return (
        select(
            AutomationTrigger.id,
            AutomationTrigger.automation_id,
            Automation.workspace_id,
            AutomationTrigger.next_fire_at,
            AutomationTrigger.config,
            AutomationTrigger.updated_at,
        )
        .join(Automation, Automation.id == AutomationTrigger.automation_id)
        .where(AutomationTrigger.next_fire_at <= now)
        .order_by(AutomationTrigger.next_fire_at, AutomationTrigger.id)
        .limit(BATCH)
    )


def _plan(due: _Due, now: datetime) -> tuple[datetime | None, datetime | None]:
    """The occurrence to fire (the newest due by now) and the next fire after now; (None, None) when the
    saved schedule is no longer valid (it then stops)."""
    schedule = schedule_of(due.config, due.anchor)
    if schedule is None:
        return None, None
    occurrence = schedule.latest_due(due.due - timedelta(microseconds=1), now) or due.due
    return occurrence, schedule.next_after(now)


async def _claim(ctx: ServiceContext, dues: list[_Due], now: datetime) -> list[tuple[_Due, datetime]]:
    """The occurrences this scheduler now owns: each trigger's next fire moves on only where it still holds
    the due time read (compare-and-set), so of two schedulers exactly one claims it. One transaction."""
    owned = []
    async with ctx.unit_of_work() as uow:
        for due in dues:
            occurrence, following = _plan(due, now)
            claimed = await uow.db.scalar(
                update(AutomationTrigger)
                .where(AutomationTrigger.id == due.trigger_id, AutomationTrigger.next_fire_at == due.due)
                .values(next_fire_at=following, updated_at=AutomationTrigger.updated_at)
                .returning(AutomationTrigger.id)
                .execution_options(synchronize_session=False)
            )
            if claimed is None:
                continue
            # An automation has one schedule at most (rules.check_layout): its next fire is this one.
            emit_next_fire(uow, due.workspace_id, due.automation_id, following)
            if occurrence is not None:
                owned.append((due, occurrence))
    return owned


async def _fire_claimed(ctx: ServiceContext, due: _Due, occurrence: datetime) -> FireOutcome:
    return await fire(
        ctx,
        due.automation_id,
        trigger_id=due.trigger_id,
        trigger_type=RunTriggerType.SCHEDULED,
        occurrence=occurrence,
        dedup_key=dedup_key(due.trigger_id, occurrence),
    )


async def fire_due(ctx: ServiceContext, clock: Clock) -> list[FireOutcome]:
    """Claim and fire every trigger due by now, soonest first; the outcomes of the fires claimed here.

    A claimed occurrence whose fire fails (or whose process dies before firing) is lost, not retried: the
    schedule has moved on. On SQLite the fires' transactions still take turns (the process's write lock),
    but each one's publish and enqueue overlap the next one's transaction."""
    outcomes: list[FireOutcome] = []
    limit = asyncio.Semaphore(CONCURRENT_FIRES)

    async def one(due: _Due, occurrence: datetime) -> None:
        async with limit:
            try:
                outcomes.append(await _fire_claimed(ctx, due, occurrence))
            except Exception:
                log.exception("firing the schedule of trigger %s failed", due.trigger_id)

    while True:
        now = clock.now()
        async with ctx.read() as db:
            rows = (await db.execute(_due_query(now))).all()  # type: ignore[call-overload]
        if not rows:
            return outcomes
        owned = await _claim(ctx, [_Due(r[0], r[1], r[2], r[3], dict(r[4] or {}), r[5]) for r in rows], now)
        await asyncio.gather(*(one(due, occurrence) for due, occurrence in owned))
        if len(rows) < BATCH:
            return outcomes


async def earliest_next_fire(ctx: ServiceContext) -> datetime | None:
    async with ctx.read() as db:
        return await db.scalar(select(func.min(AutomationTrigger.next_fire_at)))


async def backfill(ctx: ServiceContext, now: datetime) -> int:
    """Store a next fire for enabled schedules of live, enabled automations that have none (saved before next
    fires were stored): their first fire is then the next occurrence after now."""
    async with ctx.unit_of_work() as uow:
        rows = list(
            await uow.db.scalars(live_triggers(TriggerType.SCHEDULED).where(AutomationTrigger.next_fire_at.is_(None)))
        )
        return await _store(uow.db, rows, now)


async def _store(db: AsyncSession, rows: list[AutomationTrigger], now: datetime) -> int:
    for row in rows:
        anchor = row.updated_at
        row.next_fire_at = computed_next_fire(row.type, row.enabled, row.config or {}, anchor, now)
        flag_modified(row, "updated_at")
    await db.flush()
    return len(rows)


async def run_schedules(
    ctx: ServiceContext,
    clock: Clock,
    *,
    should_stop: Callable[[], bool],
    max_sleep: float = 30.0,
    sleeping: asyncio.Event | None = None,
) -> None:
    """Fire schedules on time until `should_stop()`: sleep until the earliest next fire (at most `max_sleep`
    real seconds) or a save's wake, then fire what is due. `sleeping` is set while the loop sleeps."""
    await backfill(ctx, clock.now())
    woken = asyncio.Event()
    async with ctx.bus.subscribe(schedule_wake_channel()) as wakes:

        async def listen() -> None:
            async for _ in wakes:
                woken.set()

        listener = asyncio.create_task(listen(), name="kandev-schedule-wakes")
        try:
            while not should_stop():
                woken.clear()
                if sleeping is not None:
                    sleeping.clear()
                await fire_due(ctx, clock)
                earliest = await earliest_next_fire(ctx)
                wait = max_sleep
                if earliest is not None:
                    ahead = clock.real_seconds((earliest - clock.now()).total_seconds())
                    wait = min(max_sleep, max(ahead, 0.0))
                deadline = time.monotonic() + wait
                if sleeping is not None:
                    sleeping.set()
                while not should_stop() and not woken.is_set() and (left := deadline - time.monotonic()) > 0:
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(min(left, _POLL_SECONDS)):
                            await woken.wait()
        finally:
            listener.cancel()
