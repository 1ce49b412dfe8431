"""`kandev scheduler` fires automation schedules: a real scheduler process on a fast test clock fires an
every-minute schedule within a second of each due minute, and stops cleanly on SIGTERM."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import pytest

from kandev.domain.automations.records import TriggerFields
from kandev.models.enums import TriggerType
from kandev.platform.clock import clock_of
from kandev.platform.event_bus import automation_channel
from kandev.platform.settings import Settings
from tests.integration.domain.automations.conftest import new_automation, runs_of
from tests.support.cli_processes import spawn
from tests.support.factories import settings_for


@pytest.fixture
def settings(database_url: str, redis_url: str, tmp_path: Path) -> Settings:
    real = time.time()
    minute = (int(real) // 60 + 1) * 60
    # 60x, 3 clock seconds before a whole minute; the start is shared with the scheduler process
    return settings_for(database_url, redis_url, tmp_path, test_mode=True, test_clock=f"{minute - 3 - real},60,{real}")


async def test_a_scheduler_process_fires_an_every_minute_schedule_within_a_second(
    services, db, bus, workspace_id, settings: Settings
):
    trigger = TriggerFields(type=TriggerType.SCHEDULED, config={"expression": "* * * * *", "timezone": "UTC"})
    automation_id = await new_automation(services, workspace_id, triggers=[trigger], max_concurrent_runs=10)
    env = os.environ | {
        "KANDEV_DATABASE_URL": settings.resolved_database_url(),
        "KANDEV_REDIS_URL": str(settings.redis_url),
        "KANDEV_DATA_DIR": str(settings.data_path),
        "KANDEV_TEST_MODE": "1",
        "KANDEV_TEST_CLOCK": str(settings.test_clock),
        "KANDEV_SCHEDULER_INTERVAL_SECONDS": "60",
    }
    async with bus.subscribe(automation_channel(workspace_id)) as events:
        process = spawn(["scheduler"], env)
        try:
            created = 0
            async with asyncio.timeout(30):
                async for event in events:
                    created += event["kind"] == "RUN_CREATED"
                    if created == 3:
                        break
        finally:
            process.send_signal(signal.SIGTERM)
            code = await asyncio.to_thread(process.wait, 15)

    clock = clock_of(settings)
    runs = await runs_of(db, automation_id)
    assert code == 0
    assert len(runs) >= 3
    late = [r.created_at.timestamp() - clock.real_time(r.occurred_at) for r in runs if r.occurred_at is not None]
    # The first may catch up a minute that fell due while the process started (fired once, late).
    assert len(late) == len(runs) and max(late[1:]) < 1.0, late
