"""How services hand work to workers: enqueue turn jobs on RQ and nudge running jobs over Redis."""

from __future__ import annotations

import asyncio
from typing import Protocol

from redis import Redis

from kandev.events import EventBus

TURN_JOB = "kandev.jobs.turns.run_turn"


def control_channel(session_id: str) -> str:
    return f"control:session:{session_id}"


class JobDispatcher(Protocol):
    async def enqueue_turn(self, session_id: str, queue: str | None = None) -> None: ...

    async def nudge_cancel(self, session_id: str) -> None: ...


class RqDispatcher:
    """Enqueues on RQ (a blocking client, so off the event loop) and publishes control nudges."""

    def __init__(self, redis_url: str, bus: EventBus, *, turn_timeout: int) -> None:
        self._redis = Redis.from_url(redis_url, socket_connect_timeout=5)
        self._bus = bus
        self._turn_timeout = turn_timeout

    async def enqueue_turn(self, session_id: str, queue: str | None = None) -> None:
        from kandev.jobs.queues import TURNS, enqueue

        await asyncio.to_thread(
            enqueue,
            queue or TURNS,
            TURN_JOB,
            session_id,
            job_timeout=self._turn_timeout,
            connection=self._redis,
        )

    async def nudge_cancel(self, session_id: str) -> None:
        await self._bus.publish(control_channel(session_id), {"action": "cancel"})

    def close(self) -> None:
        self._redis.close()
