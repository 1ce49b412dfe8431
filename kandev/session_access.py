"""Access epochs: a Redis counter per session, bumped after commit whenever something a session token
check depends on changes (the session ended, its task was deleted, its profile got a new revision). A
process may keep a token check for as long as the epoch it read before the check is unchanged, so every
process refuses an ended session from the moment the ending call has returned."""

from __future__ import annotations

from collections.abc import Iterable

import redis.asyncio as aioredis

PREFIX = "kandev:mcp:access:"
# A counter that expired would read as "never bumped" again: it must outlive any cached check.
EPOCH_TTL_SECONDS = 7 * 24 * 3600


def session_key(session_id: str) -> str:
    return f"{PREFIX}session:{session_id}"


async def bump(redis: aioredis.Redis, keys: Iterable[str]) -> None:
    async with redis.pipeline(transaction=False) as pipe:
        for key in keys:
            pipe.incr(key)
            pipe.expire(key, EPOCH_TTL_SECONDS)
        await pipe.execute()


async def epoch(redis: aioredis.Redis, session_id: str) -> int:
    return int(await redis.get(session_key(session_id)) or 0)
