"""Automation schedules: fire lateness — from a fire's due time to its run committed and its launch job
enqueued — with 10,000 hourly schedules spread uniformly over the hour plus 100 due in the same minute.

The schedule loop (kandev.domain.automations.scheduling.run_schedules, as `kandev scheduler` runs it) runs in
this process on a test clock at SPEED x real time, over a window of WINDOW_SECONDS real seconds; no worker
runs, so lateness ends at the enqueue. Lateness is in real seconds. KANDEV_BENCH_DATABASE_URL /
KANDEV_BENCH_REDIS_URL when set, else SQLite and the embedded Redis-protocol server."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import redis.asyncio as aioredis
from sqlalchemy import insert, select, update

from bench.backends import backends
from bench.foundation import summary
from kandev.adapters.rq_dispatch import RqDispatcher
from kandev.domain.automations.records import AutomationFields
from kandev.domain.automations.scheduling import run_schedules
from kandev.models import Automation, AutomationRun, AutomationTrigger
from kandev.models.base import new_id
from kandev.models.enums import TriggerType
from kandev.platform.clock import Clock, clock_of
from kandev.platform.database import Database
from kandev.platform.event_bus import EventBus
from kandev.platform.settings import Settings
from kandev.wiring import Services, bootstrap, service_context

SPREAD = 10_000  # `@every 1h` schedules, anchors spread uniformly over the hour
BURST = 100  # cron schedules due in the same minute
SPEED = 2.0  # the test clock runs this much faster than real time
WINDOW_SECONDS = 60.0  # real seconds measured; the burst minute falls in its middle
TARGET_P99_MS = 1000


class _TimedJobs:
    """The real dispatcher, noting when each run's launch job was enqueued."""

    def __init__(self, inner: RqDispatcher) -> None:
        self.inner = inner
        self.enqueued: dict[str, float] = {}
        self.all_in = asyncio.Event()
        self.expected = -1

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def enqueue_automation_run(self, run_id: str) -> None:
        await self.inner.enqueue_automation_run(run_id)
        self.enqueued[run_id] = time.time()
        if len(self.enqueued) == self.expected:
            self.all_in.set()


async def _seed(services: Services, clock: Clock, burst_at: datetime) -> int:
    """The schedules; returns how many fall due inside the window."""
    workspace_id = (await services.workspaces.list())[0].id
    template = await services.automations.create(
        workspace_id,
        AutomationFields(name="template", prompt="/end", enabled=False, max_concurrent_runs=5),
    )
    now = clock.now()
    first = now + timedelta(seconds=2)
    hour = timedelta(hours=1)
    window_end = now + timedelta(seconds=WINDOW_SECONDS * SPEED)
    async with services.ctx.db.transaction() as s:
        row = await s.get(Automation, template.automation.id)
        assert row is not None
        columns = {c.key: getattr(row, c.key) for c in Automation.__table__.columns}
        automations, triggers = [], []
        for i in range(SPREAD + BURST):
            automation_id = new_id()
            automations.append(columns | {"id": automation_id, "name": f"s{i}", "enabled": True})
            if i < SPREAD:
                due = first + hour * i / SPREAD
                config = {"expression": "@every 1h", "timezone": ""}
                anchor = due - hour
            else:
                due = burst_at
                config = {"expression": f"{burst_at.minute} * * * *", "timezone": "UTC"}
                anchor = now
            triggers.append(
                {
                    "id": new_id(),
                    "automation_id": automation_id,
                    "type": TriggerType.SCHEDULED,
                    "enabled": True,
                    "config": config,
                    "next_fire_at": due,
                    "created_at": anchor,
                    "updated_at": anchor,
                }
            )
        for start in range(0, len(automations), 1000):
            await s.execute(insert(Automation), automations[start : start + 1000])
            await s.execute(insert(AutomationTrigger), triggers[start : start + 1000])
    async with services.ctx.db.read() as s:
        due_in_window = await s.scalars(
            select(AutomationTrigger.id).where(AutomationTrigger.next_fire_at <= window_end)
        )
        return len(list(due_in_window))


async def run() -> dict[str, Any]:
    with backends() as where:
        real = time.time()
        next_minute = (int(real) // 60 + 1) * 60
        # The clock reads 30 s (clock time) before a whole minute, where the burst fires.
        spec = f"{next_minute - SPEED * WINDOW_SECONDS / 2 - real},{SPEED},{real}"
        settings = Settings(
            database_url=where.database_url,
            redis_url=where.redis_url,
            data_dir=where.folder / "data",
            test_mode=True,
            test_clock=spec,
        )
        clock = clock_of(settings)
        burst_at = clock.now().replace(second=0, microsecond=0) + timedelta(minutes=1)
        db = Database(settings.resolved_database_url())
        bus = EventBus(aioredis.from_url(where.redis_url))
        inner = RqDispatcher(where.redis_url, bus, turn_timeout=settings.turn_timeout_seconds, db=db)
        jobs = _TimedJobs(inner)
        try:
            principal = await bootstrap(db, settings)
            services = Services(service_context(db, bus, jobs, settings, principal))
            expected = await _seed(services, clock, burst_at)
            jobs.expected = expected
            stop = asyncio.Event()
            began = time.perf_counter()
            loop = asyncio.create_task(run_schedules(services.ctx, clock, should_stop=stop.is_set))
            try:
                await asyncio.wait_for(jobs.all_in.wait(), timeout=WINDOW_SECONDS * 2)
            except TimeoutError:
                pass
            elapsed = time.perf_counter() - began
            stop.set()
            await asyncio.wait_for(loop, timeout=10)
            async with db.read() as s:
                rows = (await s.execute(select(AutomationRun.id, AutomationRun.occurred_at))).all()
            occurred = {run_id: at for run_id, at in rows if at is not None}
            late = [jobs.enqueued[r] - clock.real_time(occurred[r]) for r in jobs.enqueued if r in occurred]
            burst_late = [
                jobs.enqueued[r] - clock.real_time(occurred[r])
                for r in jobs.enqueued
                if occurred.get(r) == burst_at.astimezone(UTC)
            ]
            async with db.transaction() as s:  # nothing left behind for a shared server's next run
                await s.execute(update(AutomationTrigger).values(next_fire_at=None))
        finally:
            inner.close()
            await bus.close()
            await db.dispose()
    return {
        "database": where.database,
        "schedules": SPREAD + BURST,
        "clock_speed": SPEED,
        "window_real_seconds": round(elapsed, 1),
        "fires_expected": expected,
        "fires_enqueued": len(jobs.enqueued),
        "lateness": summary(late) if late else None,
        "burst_minute_lateness": summary(burst_late) if burst_late else None,
        "burst_fires": len(burst_late),
        "targets": {"p99_ms": TARGET_P99_MS},
    }


if __name__ == "__main__":
    import json

    print(json.dumps(asyncio.run(run()), indent=2))
