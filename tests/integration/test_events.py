import asyncio
import random

import pytest
import redis.asyncio as aioredis

from kandev.platform.event_bus import Channel, EventBus
from tests.support.parallel import spare_redis_url

ROUNDS = 300


async def test_subscribers_cancelled_while_subscribing_end_and_leave_no_subscription_behind(bus: EventBus):
    """A turn's cancel listener is cancelled the moment a quick prompt ends, often while it is still
    subscribing; on Python 3.11 a cancel landing inside redis-py was swallowed and the listener (and its
    turn job) waited for ever."""
    rng = random.Random(7)
    channels = [Channel[dict[str, str]](f"test:cancel-while-subscribing:{n}") for n in range(3)]

    async def listen(channel: Channel[dict[str, str]]) -> None:
        async with bus.subscribe(channel) as events:
            async for _ in events:
                return

    for _ in range(ROUNDS):
        listeners = [asyncio.create_task(listen(rng.choice(channels))) for _ in range(rng.randint(1, 4))]
        await asyncio.sleep(rng.random() * 0.005)
        for listener in listeners:
            listener.cancel()
        _, still_waiting = await asyncio.wait(listeners, timeout=5)
        assert not still_waiting, "a cancelled subscriber kept waiting"

    counts = dict(await bus.redis.pubsub_numsub(*(bus.wire_name(channel) for channel in channels)))
    assert set(counts.values()) == {0}, counts


async def test_a_bus_on_another_database_of_the_same_redis_hears_none_of_its_events(redis_url: str):
    # Redis pub/sub ignores the database number: deployments (and parallel test workers) on one server tell
    # their events apart by channel name.
    first, other = EventBus(aioredis.from_url(redis_url)), EventBus(aioredis.from_url(spare_redis_url(redis_url)))
    channel = Channel[dict[str, str]]("test:two-databases")
    try:
        async with first.subscribe(channel) as mine, other.subscribe(channel) as theirs:
            await other.publish(channel, {"from": "other"})
            await first.publish(channel, {"from": "first"})
            assert await asyncio.wait_for(anext(mine), 5) == {"from": "first"}
            assert await asyncio.wait_for(anext(theirs), 5) == {"from": "other"}
            for subscription in (mine, theirs):  # a stray delivery would have arrived by now
                with pytest.raises(TimeoutError):
                    await asyncio.wait_for(anext(subscription), 0.2)
    finally:
        await first.close()
        await other.close()
