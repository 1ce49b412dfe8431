"""Deliveries on two replicas at once (SQLite, and PostgreSQL with KANDEV_TEST_POSTGRES_URL): duplicate jobs for
one delivery send it once, and a failed attempt waits out its backoff before the next one may claim it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from kandev.domain.access.bootstrap import bootstrap
from kandev.domain.events import TaskReachedReview
from kandev.domain.notifications.deliveries import deliver, task_reached_review
from kandev.domain.services import Services
from kandev.models import NotificationDelivery
from kandev.models.base import utcnow
from kandev.platform.database import Database
from kandev.wiring import service_context
from tests.support.databases import BACKENDS, database_on
from tests.support.factories import new_task, settings_for
from tests.support.fake_webhook import FakeWebhook, fake_webhook


@asynccontextmanager
async def two_replicas(
    backend: str, database_url: str, redis_url: str, tmp_path: Path, bus: Any, jobs: Any
) -> AsyncIterator[list[Services]]:
    """Services on two database pools of one database, as two replicas have them."""
    async with database_on(backend, database_url, tmp_path) as url:
        settings = settings_for(url, redis_url, tmp_path, notification_timeout_seconds=2, notification_attempts=3)
        pools = [Database(url), Database(url)]
        try:
            local = await bootstrap(pools[0], settings)
            yield [Services(service_context(pool, bus, jobs, settings, local)) for pool in pools]
        finally:
            for pool in pools:
                await pool.dispose()


async def owed_review(services: Services, receiver: FakeWebhook) -> str:
    """A channel to `receiver` and one delivery owed to it (a task reached review); the delivery's id."""
    workspace_id = (await services.workspaces.create("Notified")).id
    await services.notification_channels.create(workspace_id, "Team", receiver.url(), ["REVIEW_READY"])
    task_id = await new_task(services, workspace_id, "Ship it")
    ctx = services.ctx
    async with ctx.unit_of_work() as uow:
        await task_reached_review(ctx, uow, TaskReachedReview(task_id, f"review:{task_id}:1"))
    async with ctx.read() as db:
        [row] = list(await db.scalars(select(NotificationDelivery)))
    return row.id


async def delivery(services: Services, delivery_id: str) -> NotificationDelivery:
    async with services.ctx.read() as db:
        row = await db.get(NotificationDelivery, delivery_id)
        assert row is not None
        return row


@pytest.mark.parametrize("backend", BACKENDS)
async def test_duplicate_jobs_for_one_delivery_on_two_replicas_send_it_once(
    backend: str, database_url: str, redis_url: str, tmp_path: Path, bus, jobs
):
    async with two_replicas(backend, database_url, redis_url, tmp_path, bus, jobs) as replicas:
        with fake_webhook() as receiver:
            delivery_id = await owed_review(replicas[0], receiver)
            outcomes = await asyncio.gather(*(deliver(replicas[n % 2].ctx, delivery_id) for n in range(8)))
            await asyncio.sleep(0.3)  # a second request, had one left, has arrived by now
        assert sorted(outcomes) == ["delivered"] + ["nothing to do"] * 7
        assert receiver.keys() == [delivery_id]
        row = await delivery(replicas[1], delivery_id)
        assert (row.state, row.attempts) == ("DELIVERED", 1)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_failed_attempt_waits_out_its_backoff_before_either_replica_tries_again(
    backend: str, database_url: str, redis_url: str, tmp_path: Path, bus, jobs
):
    async with two_replicas(backend, database_url, redis_url, tmp_path, bus, jobs) as replicas:
        with fake_webhook(status=503) as receiver:
            delivery_id = await owed_review(replicas[0], receiver)
            assert await deliver(replicas[0].ctx, delivery_id) == "retrying"
            assert await deliver(replicas[1].ctx, delivery_id) == "nothing to do"  # still backing off
            row = await delivery(replicas[1], delivery_id)
            assert (row.state, row.attempts) == ("PENDING", 1) and "503" in (row.last_error or "")
            assert row.next_attempt_at > utcnow() + timedelta(seconds=1)
            assert len(receiver.received) == 1
