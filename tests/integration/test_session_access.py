"""Kept session token checks (kandev.edge.authentication.SessionCallers) and the leases and announcements that
keep them honest (kandev.platform.session_access): every serving process forgets a session's checks before the
change that ended it returns, and a process that cannot be sure it heard trusts nothing kept."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError

from kandev.domain.context import Principal
from kandev.edge.authentication import SessionCallers
from kandev.platform import session_access
from kandev.platform.redis_client import pubsub_channel, reconnect_once
from kandev.platform.session_access import announce
from tests.support.parallel import spare_redis_url
from tests.support.session_tokens import kept_checks


def caller(session_id: str) -> Principal:
    return Principal(user_id="u", login="agent", session_id=session_id, task_id="t1")


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.from_url(redis_url)
    yield client
    await client.aclose()


def session() -> str:
    return f"s-{uuid.uuid4().hex}"


async def test_a_check_is_kept_for_its_own_token_only(redis):
    async with kept_checks(redis) as callers:
        s1 = session()
        callers.put("hash-a", caller(s1), callers.mark())
        kept = callers.get("hash-a")
        assert kept is not None and kept.session_id == s1
        # Another token of the same session (an older launch's, say) was never checked here.
        assert callers.get("hash-b") is None


async def test_an_announcement_makes_every_watching_process_forget_the_session_before_it_returns(redis):
    ended, other = session(), session()
    async with kept_checks(redis) as first, kept_checks(redis) as second:
        for callers in (first, second):
            callers.put(f"{ended}-hash", caller(ended), callers.mark())
            callers.put(f"{other}-hash", caller(other), callers.mark())
        await announce(redis, [ended])
        for callers in (first, second):
            assert callers.get(f"{ended}-hash") is None
            assert callers.get(f"{other}-hash") is not None


async def test_an_announcement_is_not_heard_by_a_watcher_on_another_database_of_the_same_redis(redis, redis_url):
    other_db = aioredis.from_url(spare_redis_url(redis_url))
    ended = session()
    try:
        async with kept_checks(redis) as here, kept_checks(other_db) as there:
            for callers in (here, there):
                callers.put(f"{ended}-hash", caller(ended), callers.mark())
            await announce(redis, [ended])
            # Acknowledged by `there`, so heard after anything published before it: a stray delivery included.
            await announce(other_db, [session()])
            assert here.get(f"{ended}-hash") is None
            assert there.get(f"{ended}-hash") is not None
    finally:
        await other_db.aclose()


async def test_a_check_that_raced_an_announcement_is_not_kept(redis):
    async with kept_checks(redis) as callers:
        s1 = session()
        mark = callers.mark()  # taken before the database check...
        await announce(redis, [s1])  # ...which a commit elsewhere may have overtaken
        callers.put("hash-a", caller(s1), mark)
        assert callers.get("hash-a") is None


async def test_a_kept_check_is_answered_only_for_its_time_to_live(redis, monkeypatch):
    # What bounds an ended session's kept check when no announcement could be made at all.
    async with kept_checks(redis) as callers:
        callers.put("hash-kept", caller(session()), callers.mark())
        monkeypatch.setattr(SessionCallers, "TTL_SECONDS", -1.0)
        callers.put("hash-aged", caller(session()), callers.mark())
        assert callers.get("hash-kept") is not None
        assert callers.get("hash-aged") is None


async def test_an_announcement_redis_refused_is_made_again_before_it_returns(redis, redis_url, monkeypatch):
    ended = session()
    announcer = aioredis.from_url(redis_url)
    real = announcer.pipeline
    refusals = iter(["first try"])

    def flaky_pipeline(*args, **kwargs):
        if (refusal := next(refusals, None)) is not None:
            raise RedisConnectionError(refusal)
        return real(*args, **kwargs)

    monkeypatch.setattr(announcer, "pipeline", flaky_pipeline)
    try:
        async with kept_checks(redis) as callers:
            callers.put("hash-a", caller(ended), callers.mark())
            async with asyncio.timeout(5):
                await announce(announcer, [ended])
            assert next(refusals, None) is None  # the first try was refused
            assert callers.get("hash-a") is None
    finally:
        await announcer.aclose()


async def test_an_announcement_redis_keeps_refusing_fails_after_its_tries(redis_url, monkeypatch):
    announcer = aioredis.from_url(redis_url)
    tries = []

    def refusing_pipeline(*args, **kwargs):
        tries.append(1)
        raise RedisConnectionError("refused")

    monkeypatch.setattr(announcer, "pipeline", refusing_pipeline)
    try:
        with pytest.raises(RedisConnectionError):
            async with asyncio.timeout(5):
                await announce(announcer, [session()])
        assert len(tries) == session_access.ANNOUNCE_TRIES
    finally:
        await announcer.aclose()


async def test_nothing_is_kept_or_answered_without_a_held_lease(redis):
    callers = SessionCallers()
    assert callers.mark() is None
    callers.put("hash-a", caller(session()), callers.mark())
    assert callers.get("hash-a") is None
    async with kept_checks(redis) as watched:
        watched.put("hash-a", caller(session()), watched.mark())
        watch = watched.watch
        assert watch is not None
    # Stopped: its lease is given back and everything it kept is gone.
    assert not watch.trusted()
    assert watched.get("hash-a") is None
    assert not await redis.exists(session_access.lease_key(watch.id))
    assert not await redis.sismember(session_access.WATCHERS, watch.id)


async def test_an_announcement_waits_for_a_leased_watcher_until_it_acknowledges(redis):
    # A process holding a lease that is slow to answer: played by hand here, on the same channel.
    slow = uuid.uuid4().hex
    pubsub = redis.pubsub(ignore_subscribe_messages=True)
    await pubsub.subscribe(pubsub_channel(redis, session_access.CHANNEL))
    await redis.set(session_access.lease_key(slow), b"1", px=10_000)
    await redis.sadd(session_access.WATCHERS, slow)
    try:
        ended = session()
        announcing = asyncio.create_task(announce(redis, [ended]))
        async with asyncio.timeout(5):
            while (message := await pubsub.get_message(timeout=1.0)) is None or b"nonce" not in message["data"]:
                pass
        heard = json.loads(message["data"])
        assert heard["sessions"] == [ended]
        done, _ = await asyncio.wait({announcing}, timeout=0.3)
        assert not done  # its lease still holds and it has not said it forgot
        await redis.rpush(session_access.ack_key(heard["nonce"]), slow)
        async with asyncio.timeout(5):
            await announcing
    finally:
        await pubsub.aclose()
        await redis.delete(session_access.lease_key(slow))
        await redis.srem(session_access.WATCHERS, slow)


async def test_an_announcement_waits_no_longer_than_a_silent_watchers_lease_and_strikes_it_off(redis):
    silent = uuid.uuid4().hex
    await redis.set(session_access.lease_key(silent), b"1", px=400)
    await redis.sadd(session_access.WATCHERS, silent)
    started = time.monotonic()
    async with asyncio.timeout(5):
        await announce(redis, [session()])
    assert time.monotonic() - started >= 0.2  # it did wait for the lease...
    async with asyncio.timeout(5):
        await announce(redis, [session()])  # ...and the next one finds it gone and strikes it off
    assert not await redis.sismember(session_access.WATCHERS, silent)


@pytest.mark.parametrize("retry", ["reconnecting", "failing"])
async def test_a_dropped_subscription_forgets_every_kept_check_before_it_trusts_again(redis_url, retry):
    # The server's client reconnects a dropped connection by itself (AppState builds it so), quietly
    # resubscribing; without that, the next read fails. Either way what was published meanwhile is lost.
    options = {"retry": reconnect_once()} if retry == "reconnecting" else {}
    redis = aioredis.from_url(redis_url, **options)
    try:
        async with kept_checks(redis) as callers:
            watch = callers.watch
            assert watch is not None and watch._pubsub is not None
            callers.put("hash-a", caller(session()), callers.mark())
            # Announcements published while it was away are lost to it, whatever redis-py resubscribes.
            assert watch._pubsub.connection is not None
            await watch._pubsub.connection.disconnect()
            async with asyncio.timeout(10):
                while callers.get("hash-a") is not None:
                    await asyncio.sleep(0.05)
                await watch.until_trusted()
            assert callers.get("hash-a") is None
            callers.put("hash-b", caller(session()), callers.mark())
            assert callers.get("hash-b") is not None  # trusted again on the new subscription
    finally:
        await redis.aclose()
