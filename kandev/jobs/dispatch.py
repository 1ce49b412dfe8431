"""How services hand work to workers: enqueue turn jobs on RQ and nudge running jobs over Redis.

A session whose agent is warm on an idle worker gets its turn on that worker's own queue; otherwise the
shared queue, and whichever worker takes it launches the agent fresh and resumes the session.
"""

from __future__ import annotations

import asyncio
from typing import Protocol

from redis import Redis

from kandev.events import EventBus

TURN_JOB = "kandev.jobs.turns.run_turn"
DELIVER_JOB = "kandev.jobs.turns.deliver_answer"
# On a session's control channel: its running turn now waits on a person (its job may end).
WAITING = "waiting"


def control_channel(session_id: str) -> str:
    return f"control:session:{session_id}"


class JobDispatcher(Protocol):
    async def enqueue_turn(self, session_id: str, queue: str | None = None) -> None: ...

    async def nudge_cancel(self, session_id: str) -> None: ...

    async def can_deliver(self, worker_name: str, session_id: str) -> bool: ...

    async def deliver_answer(self, session_id: str, worker_name: str) -> None: ...


class RqDispatcher:
    """Enqueues on RQ (a blocking client, so off the event loop) and publishes control nudges."""

    def __init__(self, redis_url: str, bus: EventBus, *, turn_timeout: int) -> None:
        self._redis = Redis.from_url(redis_url, socket_connect_timeout=5)
        self._bus = bus
        self._turn_timeout = turn_timeout

    async def enqueue_turn(self, session_id: str, queue: str | None = None) -> None:
        await asyncio.to_thread(self._enqueue_turn, session_id, queue)

    def _enqueue_turn(self, session_id: str, queue: str | None) -> None:
        from kandev.jobs.queues import TURNS, enqueue

        target = queue or warm_worker_queue(self._redis, session_id) or TURNS
        enqueue(target, TURN_JOB, session_id, job_timeout=self._turn_timeout, connection=self._redis)

    async def nudge_cancel(self, session_id: str) -> None:
        await self._bus.publish(control_channel(session_id), {"action": "cancel"})

    async def can_deliver(self, worker_name: str, session_id: str) -> bool:
        """Whether the worker holding the session's waiting turn can take the answer now."""
        return await asyncio.to_thread(warm_worker_queue, self._redis, session_id, worker_name) is not None

    async def deliver_answer(self, session_id: str, worker_name: str) -> None:
        from kandev.jobs.queues import enqueue, worker_queue_name

        await asyncio.to_thread(
            enqueue,
            worker_queue_name(worker_name),
            DELIVER_JOB,
            session_id,
            job_timeout=self._turn_timeout,
            connection=self._redis,
        )

    def close(self) -> None:
        self._redis.close()


def warm_worker_queue(redis: Redis, session_id: str, expected: str | None = None) -> str | None:
    """The own queue of the worker holding the session's agent (`expected`, when given), when that worker is
    alive (it renews the agent's advertisement) and idle, or busy with this very session."""
    from rq import Worker

    from kandev.jobs.queues import agent_key, running_key, worker_queue_name

    owner = redis.get(agent_key(session_id))
    if owner is None:
        return None
    name = owner.decode() if isinstance(owner, bytes) else str(owner)
    if expected is not None and name != expected:
        return None
    state = redis.hget(Worker.redis_worker_namespace_prefix + name, "state")
    if state in (b"idle", "idle") or redis.get(running_key(name)) in (session_id.encode(), session_id):
        return worker_queue_name(name)
    return None
