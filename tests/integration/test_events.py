import asyncio
import random

from kandev.platform.event_bus import PREFIX, Channel, EventBus

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

    counts = dict(await bus.redis.pubsub_numsub(*(PREFIX + channel for channel in channels)))
    assert set(counts.values()) == {0}, counts
