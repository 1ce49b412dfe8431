"""Process-wide wiring shared by the HTTP app: database, event bus and the bootstrap principal."""

from __future__ import annotations

from dataclasses import dataclass

import redis.asyncio as aioredis

from kandev.config import Settings
from kandev.db import Database
from kandev.dispatch import RqDispatcher
from kandev.domain.bootstrap import bootstrap
from kandev.domain.context import JobDispatcher, Principal, ServiceContext
from kandev.domain.services import MOVE_HOOKS, Services
from kandev.events import EventBus
from kandev.metrics import RedisCounters
from kandev.redis_conn import reconnect_once


def service_context(
    db: Database, bus: EventBus, jobs: JobDispatcher, settings: Settings, principal: Principal
) -> ServiceContext:
    """The domain wired to this process's adapters: the job dispatcher, Redis counters and the move hooks."""
    return ServiceContext(
        db=db,
        bus=bus,
        principal=principal,
        settings=settings,
        jobs=jobs,
        hooks=MOVE_HOOKS,
        counters=RedisCounters(bus.redis),
    )


@dataclass
class AppState:
    settings: Settings
    db: Database
    bus: EventBus
    redis: aioredis.Redis
    local_principal: Principal
    jobs: RqDispatcher

    @classmethod
    async def open(cls, settings: Settings) -> AppState:
        if settings.redis_url is None:
            raise RuntimeError("KANDEV_REDIS_URL is not set (kandev serve starts an embedded server)")
        db = Database(settings.resolved_database_url())
        redis = aioredis.from_url(
            settings.redis_url, socket_connect_timeout=5, health_check_interval=30, retry=reconnect_once()
        )
        bus = EventBus(aioredis.from_url(settings.redis_url, socket_connect_timeout=5, retry=reconnect_once()))
        principal = await bootstrap(db, settings)
        jobs = RqDispatcher(settings.redis_url, bus, turn_timeout=settings.turn_timeout_seconds, db=db)
        return cls(settings=settings, db=db, bus=bus, redis=redis, local_principal=principal, jobs=jobs)

    def services(self, principal: Principal) -> Services:
        return Services(service_context(self.db, self.bus, self.jobs, self.settings, principal))

    async def close(self) -> None:
        self.jobs.close()
        await self.bus.close()
        await self.redis.aclose()
        await self.db.dispose()
