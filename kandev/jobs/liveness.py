"""Workers and queue depth as RQ records them in Redis: what /healthz reports beside its checks."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import redis.asyncio as aioredis
from rq.defaults import DEFAULT_WORKER_TTL
from rq.queue import Queue
from rq.utils import utcparse
from rq.worker_registration import REDIS_WORKER_KEYS

from kandev.jobs.queues import ALL

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
            pipe.hmget(key, "last_heartbeat", "death", "queues")
        rows = await pipe.execute() if keys else []
    live = 0
    own_queues: set[str] = set()
    for beat, death, queues in rows:
        beat, death = _text(beat), _text(death)
        if death or not beat or now - utcparse(beat) > HEARTBEAT_WINDOW:
            continue
        live += 1
        own_queues.update(q for q in (_text(queues) or "").split(",") if q and q not in ALL)
    prefix = Queue.redis_queue_namespace_prefix
    async with redis.pipeline(transaction=False) as pipe:
        for name in (*ALL, *sorted(own_queues)):
            pipe.llen(prefix + name)
        depths = await pipe.execute()
    queued = dict(zip(ALL, depths[: len(ALL)], strict=True))
    return {"workers": live, "queued": queued, "queued_on_worker_queues": sum(depths[len(ALL) :])}
