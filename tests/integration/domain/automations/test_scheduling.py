"""Schedules fire on time: within a second of the due time (under a fast test clock), a fire missed while no
scheduler ran fires once, a disabled automation stops firing, a save wakes a sleeping scheduler, and two
schedulers on PostgreSQL never fire one occurrence twice."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, insert, select, update

from kandev.domain.automations.records import TriggerFields
from kandev.domain.automations.scheduling import run_schedules
from kandev.domain.context import ServiceContext
from kandev.migrations import upgrade_to_head
from kandev.models import Automation, AutomationRun, AutomationTrigger
from kandev.models.base import new_id
from kandev.models.enums import TriggerType
from kandev.platform.clock import Clock, clock_of
from kandev.platform.database import Database
from kandev.platform.event_bus import automation_channel
from kandev.platform.settings import Settings
from kandev.wiring import Services, bootstrap, service_context
from tests.integration.domain.automations.conftest import new_automation, runs_of
from tests.support.databases import create_postgres_database, drop_postgres_database, postgres_server_url
from tests.support.factories import settings_for


def _clock_spec(mode: str) -> str:
    """offset,speed,start putting the clock where the test needs it, relative to the next whole minute."""
    real = time.time()
    minute = (int(real) // 60 + 1) * 60
    if mode == "fast":  # 60x: a due minute every real second, starting 3 clock seconds before one
        return f"{minute - 3 - real},60,{real}"
    if mode == "before-minute":  # real speed, 2 s before a whole minute
        return f"{minute - 2 - real},1,{real}"
    return f"{minute + 10 - real},1,{real}"  # "after-minute": real speed, 10 s past a whole minute


@pytest.fixture
def clock_mode() -> str:
    return "fast"


@pytest.fixture
def settings(database_url: str, redis_url: str, tmp_path: Path, clock_mode: str) -> Settings:
    return settings_for(database_url, redis_url, tmp_path, test_mode=True, test_clock=_clock_spec(clock_mode))


def every_minute() -> list[TriggerFields]:
    return [TriggerFields(type=TriggerType.SCHEDULED, config={"expression": "* * * * *", "timezone": "UTC"})]


@asynccontextmanager
async def scheduler(ctx: ServiceContext, clock: Clock, max_sleep: float = 30.0) -> AsyncIterator[asyncio.Event]:
    """The schedule loop running in this event loop until the block ends; yields its `sleeping` event."""
    stop, sleeping = asyncio.Event(), asyncio.Event()
    task = asyncio.create_task(
        run_schedules(ctx, clock, should_stop=stop.is_set, max_sleep=max_sleep, sleeping=sleeping)
    )
    try:
        yield sleeping
    finally:
        stop.set()
        async with asyncio.timeout(30):  # a pass under way fires what it claimed first
            await task


async def created_runs(events: Any, count: int, *, of: Callable[[str], bool] = lambda _: True) -> list[str]:
    """The automation ids of the next `count` RUN_CREATED events whose automation `of` accepts."""
    seen: list[str] = []
    async for event in events:
        if event["kind"] == "RUN_CREATED" and of(event["automation_id"]):
            seen.append(event["automation_id"])
            if len(seen) == count:
                return seen
    return seen


def lateness(clock: Clock, run: AutomationRun) -> float:
    """Real seconds from the due time (on the test clock) to the run row's commit."""
    assert run.occurred_at is not None
    return run.created_at.timestamp() - clock.real_time(run.occurred_at)


async def test_an_every_minute_schedule_fires_within_a_second_of_each_due_minute(services, db, bus, workspace_id):
    clock = clock_of(services.ctx.settings)
    automation_id = await new_automation(services, workspace_id, triggers=every_minute(), max_concurrent_runs=10)
    async with bus.subscribe(automation_channel(workspace_id)) as events, scheduler(services.ctx, clock):
        async with asyncio.timeout(15):
            await created_runs(events, 5)

    runs = await runs_of(db, automation_id)
    occurred = [r.occurred_at for r in runs]
    assert all(o is not None and o.second == 0 and o.microsecond == 0 for o in occurred)
    assert len(set(occurred)) == len(occurred) >= 5
    assert [r.status for r in runs][:5] == ["triggered"] * 5
    late = [lateness(clock, r) for r in runs]
    assert max(late) < 1.0 and min(late) > -0.05, late


@pytest.mark.parametrize("clock_mode", ["after-minute"])
async def test_fires_missed_while_no_scheduler_ran_fire_once_then_the_schedule_continues_from_now(
    services, db, bus, workspace_id
):
    clock = clock_of(services.ctx.settings)
    automation_id = await new_automation(services, workspace_id, triggers=every_minute())
    now = clock.now()
    this_minute = now.replace(second=0, microsecond=0)
    async with db.transaction() as s:  # the scheduler was down for the last five due minutes
        await s.execute(
            update(AutomationTrigger)
            .where(AutomationTrigger.automation_id == automation_id)
            .values(next_fire_at=this_minute - timedelta(minutes=4), updated_at=AutomationTrigger.updated_at)
        )
    async with bus.subscribe(automation_channel(workspace_id)) as events, scheduler(services.ctx, clock):
        async with asyncio.timeout(10):
            await created_runs(events, 1)

    runs = await runs_of(db, automation_id)
    assert [r.occurred_at for r in runs] == [this_minute]
    assert runs[0].dedup_key == f"scheduled:{runs[0].trigger_id}:{this_minute.isoformat()}"
    async with db.read() as s:
        stored = await s.scalar(
            select(AutomationTrigger.next_fire_at).where(AutomationTrigger.id == runs[0].trigger_id)
        )
    assert stored == this_minute + timedelta(minutes=1)


async def test_a_disabled_automation_stops_firing_while_others_go_on(services, db, bus, workspace_id):
    clock = clock_of(services.ctx.settings)
    stopped = await new_automation(
        services, workspace_id, name="Stopped", triggers=every_minute(), max_concurrent_runs=10
    )
    going = await new_automation(services, workspace_id, name="Going", triggers=every_minute(), max_concurrent_runs=10)
    async with bus.subscribe(automation_channel(workspace_id)) as events, scheduler(services.ctx, clock):
        async with asyncio.timeout(15):
            await created_runs(events, 2, of=lambda a: a == stopped)
            await services.automations.set_enabled(stopped, False)
            before = len(await runs_of(db, stopped))
            await created_runs(events, 3, of=lambda a: a == going)

    assert len(await runs_of(db, stopped)) == before
    async with db.read() as s:
        stored = await s.scalar(
            select(AutomationTrigger.next_fire_at).where(AutomationTrigger.automation_id == stopped)
        )
    assert stored is None


@pytest.mark.parametrize("clock_mode", ["before-minute"])
async def test_a_new_schedule_due_in_two_seconds_wakes_a_sleeping_scheduler(services, db, bus, workspace_id):
    clock = clock_of(services.ctx.settings)
    async with (
        bus.subscribe(automation_channel(workspace_id)) as events,
        scheduler(services.ctx, clock, max_sleep=30) as sleeping,
    ):
        async with asyncio.timeout(5):
            await sleeping.wait()  # nothing is due: the loop sleeps for max_sleep
        automation_id = await new_automation(services, workspace_id, triggers=every_minute())
        async with asyncio.timeout(5):
            await created_runs(events, 1)

    [run] = await runs_of(db, automation_id)
    assert lateness(clock, run) < 1.0


# -- two schedulers on PostgreSQL ------------------------------------------------------------------------


async def _clone_scheduled(db: Database, template_id: str, minutes: list[int], first_due: datetime) -> None:
    """len(minutes) copies of the template automation, each with one schedule at its minute past the hour."""
    async with db.transaction() as s:
        template = await s.get(Automation, template_id)
        assert template is not None
        columns = {c.key: getattr(template, c.key) for c in Automation.__table__.columns}
        automations, triggers = [], []
        for index, minute in enumerate(minutes):
            automation_id = new_id()
            automations.append(columns | {"id": automation_id, "name": f"S{index}"})
            due = first_due.replace(minute=minute)
            if due < first_due:
                due += timedelta(hours=1)
            triggers.append(
                {
                    "id": new_id(),
                    "automation_id": automation_id,
                    "type": TriggerType.SCHEDULED,
                    "enabled": True,
                    "config": {"expression": f"{minute} * * * *", "timezone": "UTC"},
                    "next_fire_at": due,
                    "created_at": template.created_at,
                    "updated_at": template.updated_at,
                }
            )
        await s.execute(insert(Automation), automations)
        await s.execute(insert(AutomationTrigger), triggers)


@pytest.mark.postgres
@pytest.mark.skipif(
    postgres_server_url() is None,
    reason="KANDEV_TEST_POSTGRES_URL is not set: no PostgreSQL server to create the test database on",
)
async def test_two_schedulers_over_a_thousand_schedules_and_thirty_due_minutes_never_fire_twice(
    redis_url, bus, jobs, tmp_path: Path
):
    server = postgres_server_url()
    assert server is not None
    url = await create_postgres_database(server)
    databases: list[Database] = []
    try:
        await asyncio.to_thread(upgrade_to_head, url)
        real = time.time()
        start_minute = (int(real) // 60 + 1) * 60
        # 60x: thirty due minutes pass in 30 real seconds, starting 2 clock seconds before the first
        settings = settings_for(
            url, redis_url, tmp_path, test_mode=True, test_clock=f"{start_minute - 2 - real},60,{real}"
        )
        clock = clock_of(settings)
        databases = [Database(url), Database(url)]
        principal = await bootstrap(databases[0], settings)
        one, two = (Services(service_context(d, bus, jobs, settings, principal)) for d in databases)
        workspace_id = (await one.workspaces.list())[0].id
        template = await new_automation(one, workspace_id, enabled=False)
        first_due = datetime.fromtimestamp(start_minute, UTC)
        minutes = [(first_due.minute + i % 30) % 60 for i in range(1000)]
        await _clone_scheduled(databases[0], template, minutes, first_due)
        async with databases[0].transaction() as s:
            await s.execute(update(Automation).where(Automation.name.like("S%")).values(enabled=True))

        async with bus.subscribe(automation_channel(workspace_id)) as events:
            async with scheduler(one.ctx, clock), scheduler(two.ctx, clock):
                async with asyncio.timeout(180):
                    await created_runs(events, 1000)

        async with databases[0].read() as s:
            total = await s.scalar(select(func.count()).select_from(AutomationRun))
            per_trigger = (
                await s.execute(select(AutomationRun.trigger_id, func.count()).group_by(AutomationRun.trigger_id))
            ).all()
        assert total == 1000
        assert len(per_trigger) == 1000 and {n for _, n in per_trigger} == {1}
    finally:
        for database in databases:
            await database.dispose()
        await drop_postgres_database(server, url)


@pytest.mark.parametrize("clock_mode", ["before-minute"])
async def test_saving_and_firing_publish_the_automations_next_fire(services, db, bus, workspace_id):
    clock = clock_of(services.ctx.settings)
    due = clock.now().replace(second=0, microsecond=0) + timedelta(minutes=1)
    async with bus.subscribe(automation_channel(workspace_id)) as events:
        automation_id = await new_automation(services, workspace_id, triggers=every_minute())
        async with scheduler(services.ctx, clock):
            moves = []
            async with asyncio.timeout(5):
                async for event in events:
                    if event["kind"] == "NEXT_FIRE_CHANGED":
                        moves.append((event["automation_id"], event["next_fire"]))
                    if len(moves) == 2:
                        break
        await services.automations.set_enabled(automation_id, False)
        async with asyncio.timeout(5):
            disabled = await anext(events)
            while disabled["kind"] != "NEXT_FIRE_CHANGED":
                disabled = await anext(events)

    assert moves == [
        (automation_id, due.isoformat()),
        (automation_id, (due + timedelta(minutes=1)).isoformat()),
    ]
    assert (disabled["automation_id"], disabled["next_fire"]) == (automation_id, None)


async def test_a_fire_skipped_at_the_concurrency_cap_still_advances_the_schedule(services, db, bus, workspace_id):
    clock = clock_of(services.ctx.settings)
    automation_id = await new_automation(services, workspace_id, triggers=every_minute(), max_concurrent_runs=1)
    async with bus.subscribe(automation_channel(workspace_id)) as events, scheduler(services.ctx, clock):
        async with asyncio.timeout(10):
            await created_runs(events, 3)  # no worker: the first run stays active, so the cap skips the next

    runs = await runs_of(db, automation_id)
    assert [r.status for r in runs][:3] == ["triggered", "skipped", "skipped"]
    occurred = [r.occurred_at for r in runs]
    assert len(set(occurred)) == len(occurred)
    assert all(b - a == timedelta(minutes=1) for a, b in zip(occurred, occurred[1:], strict=False) if a and b)
