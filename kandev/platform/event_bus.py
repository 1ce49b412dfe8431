"""Domain events over Redis pub/sub, so a subscriber on one process sees changes made on another.

Each process keeps one pub/sub connection and fans messages out to local subscribers through
bounded in-memory queues; a slow subscriber loses its oldest events rather than stalling others.
Every channel is a `Channel[P]` naming its payload type P (a TypedDict: JSON on the wire, a dict in
process), so mypy checks what a publisher sends against what a subscriber reads.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import defaultdict
from collections.abc import AsyncIterator, Hashable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, Final, Generic, Literal, NotRequired, TypedDict, TypeVar

import redis.asyncio as aioredis

from kandev.platform.redis_client import pubsub_channel

log = logging.getLogger("kandev.platform.event_bus")

PREFIX = "kandev:events:"
SUBSCRIBER_QUEUE_SIZE = 1000

P = TypeVar("P", bound=Mapping[str, object])


class Channel(str, Generic[P]):
    """A channel name that knows the payload type published on it."""


class TaskEventPayload(TypedDict):
    """taskEvents: what happened (a TaskEventKind value) and the task's sidebar row (TaskRecord.to_json); CHANGES
    names the files whose diff changed ({repository_id, path}), REVIEW_THREAD(_DELETED) carries the thread
    (kandev.domain.reviews.records.ThreadRecord.to_json)."""

    kind: str
    task: dict[str, Any]
    changed_files: NotRequired[list[dict[str, str]]]
    review_thread: NotRequired[dict[str, Any]]


class SessionEventPayload(TypedDict):
    """sessionEvents: what happened (a SessionEventKind value), the session, and the message or turn concerned."""

    kind: str
    session: dict[str, Any]
    message: NotRequired[dict[str, Any]]
    turn: NotRequired[dict[str, Any]]


class ControlMessage(TypedDict):
    """To the worker running a session's turn: cancel it, or it now waits on a person."""

    action: Literal["cancel", "waiting"]


class StateChange(TypedDict):
    """A clarification or permission request changed state; waiters re-read the row."""

    state: str


class ToolsChange(TypedDict, total=False):
    """A session's (or every external client's) MCP tool list changed; listeners re-list."""

    kind: Literal["tools_changed"]
    session_id: str
    revision: int


class TaskPullRequestPayload(TypedDict):
    """github.task_pr.updated: a pull request linked to a task was found (`linked`) or changed state (`updated`)."""

    kind: Literal["linked", "updated"]
    workspace_id: str
    task_id: str
    repository: str
    number: int
    state: str
    previous_state: str | None
    merged_at: str | None
    head_branch: str
    base_branch: str
    url: str


def task_pull_request_channel(workspace_id: str) -> Channel[TaskPullRequestPayload]:
    """A workspace's task pull-request links (the merged-PR trigger consumes these)."""
    return Channel(f"workspace:{workspace_id}:github.task_pr.updated")


def task_channel(workspace_id: str) -> Channel[TaskEventPayload]:
    return Channel(f"workspace:{workspace_id}:tasks")


class AutomationEventPayload(TypedDict):
    """automationEvents: what happened to a run (RUN_CREATED, RUN_UPDATED, RUN_DELETED), its automation and the
    run as RunRecord JSON (kandev.domain.automations.run_events); or NEXT_FIRE_CHANGED, with no run and the
    automation's next fire (ISO, null when none); ACK_CHANGED, with no run and the automation's stored
    pre-flight ack (preflight.Ack JSON); or THREAD_MESSAGE, with a new entry of its thread."""

    kind: str
    automation_id: str
    run: dict[str, Any] | None
    next_fire: NotRequired[str | None]
    # THREAD_MESSAGE: the new thread entry (kandev.domain.automations.thread.entry_json).
    thread_message: NotRequired[dict[str, Any]]
    ack: NotRequired[dict[str, Any] | None]


def automation_channel(workspace_id: str) -> Channel[AutomationEventPayload]:
    return Channel(f"workspace:{workspace_id}:automations")


class SettingsEventPayload(TypedDict):
    """workspaceEvents: which part of a workspace's configuration changed (a WorkspaceEventKind value) and the id
    of the workflow, profile, repository, secret or workspace concerned; never its content (clients refetch).
    On the server-wide channel `owner_id` says whose new workspace or access token it is (None: a server-wide
    profile)."""

    kind: str
    id: str
    owner_id: NotRequired[str | None]


def settings_channel(workspace_id: str) -> Channel[SettingsEventPayload]:
    """Changes to one workspace's configuration (its workflows, profiles, repositories, secrets, itself)."""
    return Channel(f"workspace:{workspace_id}:settings")


def server_settings_channel() -> Channel[SettingsEventPayload]:
    """Changes every workspace lists (server-wide profiles), new workspaces and access tokens (told to their owner
    only)."""
    return Channel("settings:server")


class ScheduleWake(TypedDict):
    """An automation's schedules may have changed: a sleeping scheduler re-reads the earliest next fire."""

    automation_id: str


def schedule_wake_channel() -> Channel[ScheduleWake]:
    return Channel("automations:schedules")


def session_channel(session_id: str) -> Channel[SessionEventPayload]:
    return Channel(f"session:{session_id}")


def clarification_channel(clarification_id: str) -> Channel[StateChange]:
    """An operator question was answered, rejected or cancelled: its waiting tool call wakes."""
    return Channel(f"clarification:{clarification_id}")


# On a session's control channel: its running turn now waits on a person (its job may end).
WAITING: Final = "waiting"


def control_channel(session_id: str) -> Channel[ControlMessage]:
    """Commands to the job running a session's turn (cancel; its agent now waits on a person)."""
    return Channel(f"control:session:{session_id}")


class EventBus:
    def __init__(self, redis: aioredis.Redis) -> None:
        self._redis = redis
        self._prefix = pubsub_channel(redis, PREFIX)
        self._pubsub: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._queues: dict[str, set[asyncio.Queue[Any]]] = defaultdict(set)
        self._confirmed: dict[str, asyncio.Event] = {}
        self._lock = asyncio.Lock()

    @property
    def redis(self) -> aioredis.Redis:
        """The bus's client, for the few other Redis uses (shared counters)."""
        return self._redis

    def wire_name(self, channel: str) -> str:
        """The Redis channel `channel` travels on."""
        return self._prefix + channel

    async def publish(self, channel: Channel[P], payload: P) -> None:
        await self._redis.publish(self._prefix + channel, json.dumps(payload, default=str))

    async def publish_all(self, events: Sequence[tuple[Channel[Any], Any]]) -> None:
        """Publish (channel, payload) pairs in order, in one round trip (a transaction's events)."""
        if len(events) == 1:
            await self.publish(*events[0])
            return
        async with self._redis.pipeline(transaction=False) as pipe:
            for channel, payload in events:
                pipe.publish(self._prefix + channel, json.dumps(payload, default=str))
            await pipe.execute()

    @asynccontextmanager
    async def subscribe(self, channel: Channel[P]) -> AsyncIterator[Subscription[P]]:
        """Yields an iterator of payloads; returns only once Redis has confirmed the subscription."""
        async with self.subscribe_all(channel) as subscription:
            yield subscription

    @asynccontextmanager
    async def subscribe_all(self, *channels: Channel[P]) -> AsyncIterator[Subscription[P]]:
        """One iterator over the payloads of several channels (same payload type), in arrival order."""
        queue: asyncio.Queue[Any] = asyncio.Queue(SUBSCRIBER_QUEUE_SIZE)
        try:
            for channel in channels:
                await self._add(channel, queue)
            yield Subscription[P](queue)
        finally:
            # Shielded like the subscribing: a second cancel must not leave the queue registered.
            await asyncio.shield(self._remove_all(channels, queue))

    async def _add(self, channel: str, queue: asyncio.Queue[Any]) -> None:
        # redis-py bounds every send with asyncio.wait_for, which on Python 3.11 swallows a cancel that
        # arrives as the send completes: the subscriber (a turn's cancel listener, cancelled the moment a
        # quick prompt ended) then waited for ever. The Redis work runs apart, so a cancel lands here; the
        # caller's `_remove_all`, queued behind it on the lock, undoes it.
        confirmed = await asyncio.shield(self._register(channel, queue))
        async with asyncio.timeout(10):
            await confirmed.wait()

    async def _register(self, channel: str, queue: asyncio.Queue[Any]) -> asyncio.Event:
        async with self._lock:
            if self._pubsub is None:
                self._pubsub = self._redis.pubsub(ignore_subscribe_messages=False)
            first = not self._queues[channel]
            self._queues[channel].add(queue)
            if first:
                self._confirmed[channel] = asyncio.Event()
                await self._pubsub.subscribe(self._prefix + channel)
            if self._reader is None or self._reader.done():
                self._reader = asyncio.create_task(self._read_loop(), name="kandev-event-reader")
            return self._confirmed[channel]

    async def _remove_all(self, channels: tuple[str, ...], queue: asyncio.Queue[Any]) -> None:
        async with self._lock:
            for channel in channels:
                queues = self._queues.get(channel)
                if queues is None or queue not in queues:
                    continue
                queues.discard(queue)
                if not queues:
                    del self._queues[channel]
                    self._confirmed.pop(channel, None)
                    with contextlib.suppress(Exception):
                        await self._pubsub.unsubscribe(self._prefix + channel)

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
            channel = _text(message["channel"]).removeprefix(self._prefix)
            if message["type"] == "subscribe":
                if channel in self._confirmed:
                    self._confirmed[channel].set()
                continue
            if message["type"] != "message":
                continue
            # Decoded once; every local subscriber gets the same payload and the same memo with it.
            delivery: tuple[Any, dict[Hashable, Any]] = (json.loads(message["data"]), {})
            for queue in list(self._queues.get(channel, ())):
                if queue.full():
                    queue.get_nowait()
                queue.put_nowait(delivery)

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


class Subscription(Generic[P]):
    """An async iterator over one subscriber's queue. Not a generator on purpose: waiting for the next
    event with a timeout cancels that wait, and a cancelled generator would be finished for good."""

    def __init__(self, queue: asyncio.Queue[Any]) -> None:
        self._queue = queue  # (decoded JSON as published on the channel typed P, its shared memo)
        self.memo: dict[Hashable, Any] = {}

    def __aiter__(self) -> Subscription[P]:
        return self

    async def __anext__(self) -> P:
        """The next payload; `memo` is then that message's memo, one dict shared by every subscriber of this
        process that received it: what they all derive from the message alike is computed once there."""
        payload: P
        payload, self.memo = await self._queue.get()
        return payload


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def tools_channel(session_id: str) -> Channel[ToolsChange]:
    """A session's MCP tool list changed (its profile got a new revision)."""
    return Channel(f"mcp:tools:session:{session_id}")
