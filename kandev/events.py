"""Domain events over Redis pub/sub, so a subscriber on one process sees changes made on another.

Each process keeps one pub/sub connection and fans messages out to local subscribers through
bounded in-memory queues; a slow subscriber loses its oldest events rather than stalling others.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import defaultdict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import redis.asyncio as aioredis

log = logging.getLogger("kandev.events")

PREFIX = "kandev:events:"
SUBSCRIBER_QUEUE_SIZE = 1000


def task_channel(workspace_id: str) -> str:
    return f"workspace:{workspace_id}:tasks"


def clarification_channel(clarification_id: str) -> str:
    """An operator question was answered, rejected or cancelled: its waiting tool call wakes."""
    return f"clarification:{clarification_id}"


def session_channel(session_id: str) -> str:
    return f"session:{session_id}"


# On a session's control channel: its running turn now waits on a person (its job may end).
WAITING = "waiting"


def control_channel(session_id: str) -> str:
    """Commands to the job running a session's turn (cancel; its agent now waits on a person)."""
    return f"control:session:{session_id}"


class EventBus:
    def __init__(self, redis: aioredis.Redis) -> None:
        self._redis = redis
        self._pubsub: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._queues: dict[str, set[asyncio.Queue[dict[str, Any]]]] = defaultdict(set)
        self._confirmed: dict[str, asyncio.Event] = {}
        self._lock = asyncio.Lock()

    @property
    def redis(self) -> aioredis.Redis:
        """The bus's client, for the few other Redis uses (shared counters)."""
        return self._redis

    async def publish(self, channel: str, payload: dict[str, Any]) -> None:
        await self._redis.publish(PREFIX + channel, json.dumps(payload, default=str))

    @asynccontextmanager
    async def subscribe(self, channel: str) -> AsyncIterator[AsyncIterator[dict[str, Any]]]:
        """Yields an iterator of payloads; returns only once Redis has confirmed the subscription."""
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(SUBSCRIBER_QUEUE_SIZE)
        await self._add(channel, queue)
        try:
            yield _Subscription(queue)
        finally:
            await self._remove(channel, queue)

    async def _add(self, channel: str, queue: asyncio.Queue[dict[str, Any]]) -> None:
        async with self._lock:
            if self._pubsub is None:
                self._pubsub = self._redis.pubsub(ignore_subscribe_messages=False)
            first = not self._queues[channel]
            self._queues[channel].add(queue)
            if first:
                self._confirmed[channel] = asyncio.Event()
                await self._pubsub.subscribe(PREFIX + channel)
            if self._reader is None or self._reader.done():
                self._reader = asyncio.create_task(self._read_loop(), name="kandev-event-reader")
            confirmed = self._confirmed[channel]
        await asyncio.wait_for(confirmed.wait(), timeout=10)

    async def _remove(self, channel: str, queue: asyncio.Queue[dict[str, Any]]) -> None:
        async with self._lock:
            queues = self._queues.get(channel)
            if queues is None:
                return
            queues.discard(queue)
            if not queues:
                del self._queues[channel]
                self._confirmed.pop(channel, None)
                with contextlib.suppress(Exception):
                    await self._pubsub.unsubscribe(PREFIX + channel)

    async def _read_loop(self) -> None:
        while True:
            try:
                message = await self._pubsub.get_message(timeout=1.0)
            except asyncio.CancelledError:
                raise
            except Exception:  # connection dropped: back off, redis-py reconnects and resubscribes
                log.warning("event bus lost its Redis connection; retrying", exc_info=True)
                await asyncio.sleep(0.5)
                continue
            if message is None:
                continue
            channel = _text(message["channel"]).removeprefix(PREFIX)
            if message["type"] == "subscribe":
                if channel in self._confirmed:
                    self._confirmed[channel].set()
                continue
            if message["type"] != "message":
                continue
            payload = json.loads(message["data"])
            for queue in list(self._queues.get(channel, ())):
                if queue.full():
                    queue.get_nowait()
                queue.put_nowait(payload)

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(BaseException):
                await self._reader
        if self._pubsub is not None:
            with contextlib.suppress(Exception):
                await self._pubsub.aclose()
        with contextlib.suppress(Exception):
            await self._redis.aclose()


class _Subscription:
    """An async iterator over one subscriber's queue. Not a generator on purpose: waiting for the next
    event with a timeout cancels that wait, and a cancelled generator would be finished for good."""

    def __init__(self, queue: asyncio.Queue[dict[str, Any]]) -> None:
        self._queue = queue

    def __aiter__(self) -> _Subscription:
        return self

    async def __anext__(self) -> dict[str, Any]:
        return await self._queue.get()


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def tools_channel(session_id: str) -> str:
    """A session's MCP tool list changed (its profile got a new revision)."""
    return f"mcp:tools:session:{session_id}"
