"""Forgetting session token checks, and closing what a revoked credential opened, everywhere before an access
change returns.

A process that serves `/mcp/session` keeps its token checks (`SessionCallers`) so an agent's calls cost
no Redis or database read. When something a check depends on changes (the session ended, its task was
deleted, its tokens or its profile changed), the unit of work that committed it calls `announce` before
returning: it publishes the sessions on one channel and waits until every process that may be using kept
checks has said it forgot them. A person's access changes the same way (a token revoked, the admin flag
withdrawn, the user removed): every serving process has closed or downgraded the connections that credential
holds open (kandev.edge.open_connections) before `announce` returns.

"May be using" is a lease. An `AccessWatch` (one per serving process) renews a Redis key with a short
expiry and then publishes a ping on the same channel; hearing its own ping proves its subscription is live
and caught up, so it trusts its kept checks until shortly before the lease it wrote before that ping
expires. `announce` reads the leases after publishing and waits for each live one's acknowledgement or
expiry, whichever comes first. A process whose lease lapsed (Redis slow or unreachable, its loop stalled,
the process gone) answers from the database alone until it hears its next ping, and by then it has heard
every earlier announcement on its connection; a lost connection forgets everything kept."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import uuid
from collections.abc import Callable, Collection, Iterable
from itertools import count
from typing import TypedDict, cast

import redis.asyncio as aioredis
from redis.asyncio.client import PubSub
from redis.exceptions import RedisError

from kandev.platform.redis_client import pubsub_channel

log = logging.getLogger(__name__)

PREFIX = "kandev:mcp:access:"
CHANNEL = f"{PREFIX}changes"
WATCHERS = f"{PREFIX}watchers"
LEASE_SECONDS = 2.0
RENEW_EVERY_SECONDS = 0.4
# A watch stops trusting its checks this long before Redis expires its lease (the lease is written after
# the watch notes the time, so Redis's expiry is later still).
LEASE_MARGIN_SECONDS = 0.25
RECONNECT_SECONDS = 0.5
# An announcement Redis refused is made again (a new nonce: watchers forget and acknowledge once more) before
# the change's caller is told it failed; between tries, a pause that grows.
ANNOUNCE_TRIES = 3
ANNOUNCE_PAUSE_SECONDS = 0.1


# A watcher is struck off only while it holds no lease, atomically: one renewing meanwhile must stay listed.
_FORGET_WATCHER = """
if redis.call('exists', KEYS[2]) == 0 then redis.call('srem', KEYS[1], ARGV[1]) end
"""


class PersonChange(TypedDict, total=False):
    """One person's access change: a revoked token (`token`, its id), a removed user (`user`, `removed`), or a
    user's admin flag now (`user`, `admin`)."""

    token: str
    user: str
    removed: bool
    admin: bool


def lease_key(watch_id: str) -> str:
    return f"{PREFIX}lease:{watch_id}"


def ack_key(nonce: str) -> str:
    return f"{PREFIX}ack:{nonce}"


async def announce(redis: aioredis.Redis, session_ids: Iterable[str], people: Collection[PersonChange] = ()) -> None:
    """Returns once no process trusts a check of these sessions made before the caller's commit, nor keeps a
    connection open as these people had it; raises RedisError when Redis refused every try (kept checks then age
    out: `SessionCallers.TTL_SECONDS`; open connections are checked again: `OpenConnections.RECHECK_SECONDS`)."""
    sessions = sorted(session_ids)
    for attempt in range(1, ANNOUNCE_TRIES + 1):
        try:
            await _announce_once(redis, sessions, list(people))
            return
        except RedisError:
            if attempt == ANNOUNCE_TRIES:
                raise
            log.warning("announcing an access change failed (try %d of %d)", attempt, ANNOUNCE_TRIES, exc_info=True)
            await asyncio.sleep(ANNOUNCE_PAUSE_SECONDS * attempt)


async def announce_at(url: str, session_ids: Iterable[str], people: Collection[PersonChange] = ()) -> None:
    """`announce` over a connection of its own to the Redis at `url` (for a command outside any server)."""
    client = aioredis.from_url(url, socket_connect_timeout=5)
    try:
        await announce(client, session_ids, people)
    finally:
        await client.aclose()


async def _announce_once(redis: aioredis.Redis, sessions: list[str], people: list[PersonChange]) -> None:
    nonce = uuid.uuid4().hex
    message = json.dumps({"nonce": nonce, "sessions": sessions, "people": people})
    async with redis.pipeline(transaction=False) as pipe:
        pipe.publish(pubsub_channel(redis, CHANNEL), message)
        pipe.smembers(WATCHERS)  # read after publishing: a lease written later belongs to a later ping
        _, members = await pipe.execute()
    watchers = sorted(_text(m) for m in members)
    if not watchers:
        return
    async with redis.pipeline(transaction=False) as pipe:
        for watcher in watchers:
            pipe.pttl(lease_key(watcher))
        ttls = await pipe.execute()
    now = time.monotonic()
    waiting = {w: now + ttl / 1000 for w, ttl in zip(watchers, ttls, strict=True) if ttl > 0}
    for gone in (w for w, ttl in zip(watchers, ttls, strict=True) if ttl == -2):
        await redis.eval(_FORGET_WATCHER, 2, WATCHERS, lease_key(gone), gone)
    try:
        while waiting:
            left = max(waiting.values()) - time.monotonic()
            if left <= 0:
                break
            # At least 10 ms: BLPOP's timeout 0 would wait for ever.
            popped = await redis.blpop([ack_key(nonce)], timeout=max(left, 0.01))
            if popped is None:
                break
            waiting.pop(_text(popped[1]), None)
            now = time.monotonic()
            waiting = {w: until for w, until in waiting.items() if until > now}
    finally:
        with contextlib.suppress(RedisError):
            await redis.delete(ack_key(nonce))


class AccessWatch:
    """One process's lease and subscription: `trusted()` says whether kept checks may answer now, and
    `generation` changes whenever kept checks may have gone stale, so a check that raced a change is not
    kept. `forget(sessions)` is called with the sessions to drop, or None for everything; `people(changes)`
    with people's access changes, or None when some may have been missed."""

    def __init__(
        self,
        redis: aioredis.Redis,
        forget: Callable[[Collection[str] | None], None],
        people: Callable[[list[PersonChange] | None], None] | None = None,
    ) -> None:
        self.id = uuid.uuid4().hex
        self.generation = 0
        self._redis = redis
        self._channel = pubsub_channel(redis, CHANNEL)
        self._forget = forget
        self._people = people
        self._trusted_until = 0.0
        self._pings = count()
        self._sent: dict[int, float] = {}
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self._renewed = asyncio.Event()
        self._pubsub: PubSub | None = None
        self._reconnected = False

    def trusted(self) -> bool:
        return time.monotonic() < self._trusted_until

    async def until_trusted(self) -> None:
        """Waits for the lease (a start-up's first ping, or the return of a lost Redis); bound it yourself."""
        while not self.trusted():
            self._renewed.clear()
            await self._renewed.wait()

    def start(self) -> None:
        self._stopping = False
        self._task = asyncio.create_task(self._run(), name="kandev-access-watch")

    async def stop(self) -> None:
        self._stopping = True
        self._distrust()
        if self._task is not None:
            self._task.cancel()
            # Bounded: redis-py may swallow a cancel on Python 3.11, and the loop then ends at its next
            # one-second read timeout through `_stopping`.
            await asyncio.wait({self._task}, timeout=3)
            self._task = None
        with contextlib.suppress(RedisError, OSError):
            async with self._redis.pipeline(transaction=False) as pipe:
                pipe.delete(lease_key(self.id))
                pipe.srem(WATCHERS, self.id)
                await pipe.execute()

    async def _run(self) -> None:
        while not self._stopping:
            try:
                await self._watch()
            except (RedisError, OSError, ValueError):
                if not self._stopping and self._trusted_until:  # once per outage, not once per retry
                    log.warning("session access watch lost Redis; answering from the database", exc_info=True)
            self._distrust()
            if not self._stopping:
                await asyncio.sleep(RECONNECT_SECONDS)

    async def _watch(self) -> None:
        pubsub = self._redis.pubsub(ignore_subscribe_messages=True)
        renewing: asyncio.Task[None] | None = None
        ended = asyncio.Event()  # a renewal that outlived its cancel (see stop) still ends with its connection
        self._pubsub, self._reconnected = pubsub, False
        try:
            await pubsub.subscribe(self._channel)
            # redis-py quietly reconnects and resubscribes a dropped subscription: what was published
            # meanwhile is lost, so a reconnect must end trust at once, before another ping can be heard.
            assert pubsub.connection is not None  # subscribing connected it
            pubsub.connection.register_connect_callback(self._on_reconnect)
            renewing = asyncio.create_task(self._renew(ended), name="kandev-access-lease")
            while not self._stopping:
                if renewing.done():
                    renewing.result()  # its failure ends this connection's trust too
                if self._reconnected:
                    raise ConnectionError("the access subscription reconnected")
                message = await pubsub.get_message(timeout=1.0)
                if message is not None and message["type"] == "message":
                    await self._hear(json.loads(message["data"]))
        finally:
            ended.set()
            if renewing is not None:
                renewing.cancel()
                await asyncio.wait({renewing}, timeout=3)
            if pubsub.connection is not None:  # the pool hands this connection out again
                pubsub.connection.deregister_connect_callback(self._on_reconnect)
            with contextlib.suppress(RedisError, OSError):
                await pubsub.aclose()

    async def _renew(self, ended: asyncio.Event) -> None:
        while not ended.is_set():
            ping, now = next(self._pings), time.monotonic()
            # A ping unheard for a lease's length can no longer extend trust: forget it.
            self._sent = {n: sent for n, sent in self._sent.items() if sent > now - LEASE_SECONDS}
            self._sent[ping] = now  # noted before the lease is written: Redis's expiry is later
            async with self._redis.pipeline(transaction=False) as pipe:
                pipe.set(lease_key(self.id), b"1", px=int(LEASE_SECONDS * 1000))
                pipe.sadd(WATCHERS, self.id)
                pipe.publish(self._channel, json.dumps({"ping": self.id, "n": ping}))
                await pipe.execute()
            await asyncio.sleep(RENEW_EVERY_SECONDS)

    async def _hear(self, message: dict[str, object]) -> None:
        if self._reconnected:  # heard on a resubscribed connection: the loop is about to start afresh
            return
        if message.get("ping") == self.id:
            heard = message.get("n")
            if not isinstance(heard, int):
                return
            sent = self._sent.pop(heard, None)
            for older in [n for n in self._sent if n < heard]:
                del self._sent[older]
            if sent is not None:
                self._trusted_until = max(self._trusted_until, sent + LEASE_SECONDS - LEASE_MARGIN_SECONDS)
                self._renewed.set()
            return
        sessions = message.get("sessions")
        nonce = message.get("nonce")
        if not isinstance(sessions, list) or not isinstance(nonce, str):
            return
        self.generation += 1
        self._forget([str(s) for s in sessions])
        people = message.get("people")
        if isinstance(people, list) and people and self._people is not None:
            self._people([cast(PersonChange, change) for change in people if isinstance(change, dict)])
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.rpush(ack_key(nonce), self.id)
            pipe.expire(ack_key(nonce), int(LEASE_SECONDS) + 5)
            await pipe.execute()

    async def _on_reconnect(self, connection: object) -> None:
        self._reconnected = True
        self._distrust()

    def _distrust(self) -> None:
        """Messages may have been missed: trust nothing kept until the next ping is heard."""
        self._trusted_until = 0.0
        self._sent.clear()
        self.generation += 1
        self._forget(None)
        if self._people is not None:
            self._people(None)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
