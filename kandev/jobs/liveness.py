"""Workers and queue depth as RQ records them in Redis: what /healthz reports beside its checks."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import redis.asyncio as aioredis
from rq.defaults import DEFAULT_WORKER_TTL
from rq.queue import Queue
from rq.utils import utcparse
from rq.worker_registration import REDIS_WORKER_KEYS

from kandev.platform.job_queues import ALL, worker_queue_name

WORKER_QUEUE_PREFIX = worker_queue_name("")

# An idle RQ worker renews its heartbeat about every worker TTL; one silent for longer is not counted.
HEARTBEAT_WINDOW = timedelta(seconds=DEFAULT_WORKER_TTL + 60)


def _text(value: bytes | str | None) -> str | None:
    return value.decode() if isinstance(value, bytes) else value


async def worker_report(redis: aioredis.Redis, *, now: datetime | None = None) -> dict[str, Any]:
    """Live workers (registered, not dead, heartbeat within HEARTBEAT_WINDOW) and jobs waiting per queue.

    Counts only: /healthz answers anyone, so worker names (host names) stay out of it.
    """
    now = now or datetime.now(UTC)
    keys = sorted(_text(k) or "" for k in await redis.smembers(REDIS_WORKER_KEYS))
    async with redis.pipeline(transaction=False) as pipe:
        for key in keys:
            pipe.hmget(key, "last_heartbeat", "death")
        rows = await pipe.execute() if keys else []
    live = 0
    for beat, death in rows:
        beat, death = _text(beat), _text(death)
        if not death and beat and now - utcparse(beat) <= HEARTBEAT_WINDOW:
            live += 1
    prefix = Queue.redis_queue_namespace_prefix
    known = {(_text(k) or "").removeprefix(prefix) for k in await redis.smembers(Queue.redis_queues_keys)}
    # Every worker's own queue, a dead one's too: work routed there waits for that worker.
    own = sorted(name for name in known if name.startswith(WORKER_QUEUE_PREFIX))
    async with redis.pipeline(transaction=False) as pipe:
        for name in (*ALL, *own):
            pipe.llen(prefix + name)
        depths = await pipe.execute()
    queued = dict(zip(ALL, depths[: len(ALL)], strict=True))
    return {"workers": live, "queued": queued, "queued_on_worker_queues": sum(depths[len(ALL) :])}
