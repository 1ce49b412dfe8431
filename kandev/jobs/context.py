"""Services inside a job or CLI command: each job opens its own engine (RQ runs each job on a new
event loop, so pooled connections must never cross jobs) and acts as the system principal."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import redis.asyncio as aioredis

from kandev.config import Settings
from kandev.db import Database
from kandev.dispatch import RqDispatcher
from kandev.domain.context import Principal, ServiceContext
from kandev.events import EventBus
from kandev.redis_conn import reconnect_once
from kandev.state import service_context

SYSTEM = Principal(user_id="system", login="system", sees_everything=True)


@asynccontextmanager
async def job_context(settings: Settings) -> AsyncIterator[ServiceContext]:
    assert settings.redis_url, "jobs need KANDEV_REDIS_URL"
    db = Database(settings.resolved_database_url(), pooled=False)
    bus = EventBus(aioredis.from_url(settings.redis_url, socket_connect_timeout=5, retry=reconnect_once()))
    jobs = RqDispatcher(settings.redis_url, bus, turn_timeout=settings.turn_timeout_seconds, db=db)
    try:
        yield service_context(db, bus, jobs, settings, SYSTEM)
    finally:
        jobs.close()
        await bus.close()
        await db.dispose()
