"""tools/list_changed across replicas: a publish goes through Redis, and whichever process holds a
session's MCP connections delivers exactly one `notifications/tools/list_changed` to each of them.

Handshake-era connections get it on their standalone (GET) stream through the connection itself;
2026-era clients get it on their `subscriptions/listen` streams through the SDK's subscription bus.
A process subscribes to a session's Redis channel only while it holds a connection or a listen
stream for that session.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio
from mcp.server.subscriptions import InMemorySubscriptionBus, ToolsListChanged

from kandev.platform.event_bus import Channel, EventBus, ToolsChange

log = logging.getLogger("kandev.edge.mcp_bridge.notifications")

CHANNEL_PREFIX = "mcp:tools:"
EXTERNAL_KEY = "external"
SUBSCRIBE_TIMEOUT = 10.0
SEND_TIMEOUT = 5.0


def listener_key(session_id: str | None) -> str:
    """Who a change concerns: one agent session, or every external (/mcp) client."""
    return f"session:{session_id}" if session_id else EXTERNAL_KEY


def tools_channel(session_id: str | None) -> Channel[ToolsChange]:
    # The domain announces a profile change on kandev.platform.event_bus.tools_channel: the same name.
    return _key_channel(listener_key(session_id))


def _key_channel(key: str) -> Channel[ToolsChange]:
    return Channel(CHANNEL_PREFIX + key)


async def publish_tools_changed(bus: EventBus, session_id: str) -> None:
    """Tell the session's MCP clients, on whichever replica they are connected, to re-list tools."""
    await bus.publish(tools_channel(session_id), ToolsChange(kind="tools_changed", session_id=session_id))


async def publish_external_tools_changed(bus: EventBus) -> None:
    """Tell every external (/mcp) client to re-list tools (for example after a catalogue change)."""
    await bus.publish(tools_channel(None), ToolsChange(kind="tools_changed"))


class LegacyConnection(Protocol):
    """What a handshake-era connection needs to offer (mcp.server.connection.Connection does)."""

    async def send_tool_list_changed(self) -> None: ...


@dataclass(eq=False)
class _Listeners:
    """This process's listeners for one key and the Redis subscription that feeds them."""

    refs: int = 0
    bus: InMemorySubscriptionBus = field(default_factory=InMemorySubscriptionBus)
    connections: set[Any] = field(default_factory=set)
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    failed: bool = False
    pump: asyncio.Task[None] | None = None


class ToolsChangedFanout:
    """Per process: one Redis subscription per key that has local listeners; one delivery per publish each."""

    def __init__(self, bus_getter: Callable[[], EventBus]) -> None:
        self._bus = bus_getter
        # Mutated only between awaits, so a single event loop needs no lock around it.
        self._keys: dict[str, _Listeners] = {}

    @asynccontextmanager
    async def listening(self, key: str) -> AsyncIterator[InMemorySubscriptionBus]:
        """Hold the key's subscription; yields the local bus a `subscriptions/listen` handler reads."""
        listeners = await self._acquire(key)
        try:
            yield listeners.bus
        finally:
            await self._release(key, listeners)

    async def attach(self, key: str, connection: LegacyConnection) -> None:
        """Deliver the key's changes to a handshake-era connection until `detach`."""
        listeners = await self._acquire(key)
        listeners.connections.add(connection)

    async def detach(self, key: str, connection: LegacyConnection) -> None:
        listeners = self._keys.get(key)
        if listeners is None or connection not in listeners.connections:
            return
        listeners.connections.discard(connection)
        await self._release(key, listeners)

    def holds(self, key: str) -> bool:
        """Whether this process currently listens for the key (tests and diagnostics)."""
        return key in self._keys

    async def close(self) -> None:
        entries = list(self._keys.values())
        self._keys.clear()
        for listeners in entries:
            await _stop(listeners)

    async def _acquire(self, key: str) -> _Listeners:
        listeners = self._keys.get(key)
        if listeners is None:
            listeners = self._keys[key] = _Listeners()
            listeners.pump = asyncio.create_task(self._pump(key, listeners), name=f"kandev-mcp-fanout:{key}")
        listeners.refs += 1
        try:
            with anyio.fail_after(SUBSCRIBE_TIMEOUT):
                await listeners.ready.wait()
            if listeners.failed:
                raise ConnectionError("could not subscribe to tools_changed events")
        except BaseException:
            await self._release(key, listeners)
            raise
        return listeners

    async def _release(self, key: str, listeners: _Listeners) -> None:
        listeners.refs -= 1
        if listeners.refs > 0:
            return
        if self._keys.get(key) is listeners:
            del self._keys[key]
        # Shielded: this runs from cancelled listen handlers and connection teardown.
        with anyio.CancelScope(shield=True):
            await _stop(listeners)

    async def _pump(self, key: str, listeners: _Listeners) -> None:
        try:
            async with self._bus().subscribe(_key_channel(key)) as events:
                listeners.ready.set()
                async for _ in events:
                    await self._deliver(listeners)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("tools_changed subscription for %s ended", key)
        finally:
            # A pump that never got its subscription wakes its waiters with the failure.
            if not listeners.ready.is_set():
                listeners.failed = True
                listeners.ready.set()

    async def _deliver(self, listeners: _Listeners) -> None:
        await listeners.bus.publish(ToolsListChanged())
        connections = list(listeners.connections)
        if connections:
            await asyncio.gather(*(_notify(connection) for connection in connections))


async def _notify(connection: LegacyConnection) -> None:
    try:
        async with asyncio.timeout(SEND_TIMEOUT):
            await connection.send_tool_list_changed()
    except Exception:  # best effort: one stuck or broken connection must not hold up the others
        log.warning("could not deliver tools/list_changed to a connection", exc_info=True)


async def _stop(listeners: _Listeners) -> None:
    pump = listeners.pump
    if pump is None or pump.done():
        return
    pump.cancel()
    await asyncio.wait({pump})
