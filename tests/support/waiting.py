"""Bounded waits for conditions that have no event to await."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable


async def wait_until(condition: Callable[[], Awaitable[bool]], timeout: float = 10, interval: float = 0.02) -> None:
    async with asyncio.timeout(timeout):
        while not await condition():
            await asyncio.sleep(interval)


async def subscribers_on(redis_url: str, channel: str) -> int:
    import redis.asyncio as aioredis

    from kandev.platform.event_bus import PREFIX
    from kandev.platform.redis_client import pubsub_channel

    client = aioredis.from_url(redis_url)
    try:
        counts = await client.pubsub_numsub(pubsub_channel(client, PREFIX + channel))
        return int(counts[0][1]) if counts else 0
    finally:
        await client.aclose()
