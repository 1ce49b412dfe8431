"""publish_tools_changed reaches exactly the session's MCP clients, once per publish, in both eras."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

import pytest
from mcp import Client

from kandev.edge.mcp_bridge.notifications import publish_tools_changed
from kandev.platform.event_bus import EventBus
from tests.integration.mcp_transport.conftest import (
    ERAS,
    LEGACY,
    MODERN,
    AgentSession,
    App,
    FakeSurface,
    Notifications,
    mcp_client,
)
from tests.support import server as support_server
from tests.support.server import running_server
from tests.support.waiting import wait_until

pytestmark = pytest.mark.parametrize("era", ERAS)


@asynccontextmanager
async def listening_client(
    app: App, era: str, agent: AgentSession, notifications: Notifications
) -> AsyncIterator[Client]:
    """A client ready to hear list_changed: its GET stream is open, or its listen stream acknowledged."""
    async with AsyncExitStack() as stack:
        client = await stack.enter_async_context(mcp_client(app.url("/mcp/session"), era, agent.token, notifications))
        if era == LEGACY:

            async def stream_open() -> bool:
                return app.bridge.open_streams(agent.session_id) == 1

            await wait_until(stream_open)
        else:
            await stack.enter_async_context(client.listen(tools_list_changed=True))
        yield client


async def test_a_publish_delivers_exactly_one_list_changed_to_that_session_only(
    era: str, app: App, surface: FakeSurface, new_session, bus: EventBus
):
    mine, theirs = await new_session(), await new_session()
    heard, overheard = Notifications(), Notifications()
    async with (
        listening_client(app, era, mine, heard) as client,
        listening_client(app, era, theirs, overheard) as other,
    ):
        surface.extra_tools[mine.session_id] = ["ask_parent"]
        await publish_tools_changed(bus, mine.session_id)
        await heard.settle_at(1)
        assert [t.name for t in (await client.list_tools()).tools] == ["echo", "whoami", "boom", "ask_parent"]
        assert overheard.count == 0

        await publish_tools_changed(bus, mine.session_id)
        await heard.settle_at(2)
        await publish_tools_changed(bus, theirs.session_id)
        await overheard.settle_at(1)
        assert heard.count == 2
        assert [t.name for t in (await other.list_tools()).tools] == ["echo", "whoami", "boom"]


async def test_every_connection_of_a_session_hears_the_change_once(era: str, app: App, new_session, bus: EventBus):
    agent = await new_session()
    first, second = Notifications(), Notifications()
    async with listening_client(app, era, agent, first), AsyncExitStack() as stack:
        second_client = await stack.enter_async_context(mcp_client(app.url("/mcp/session"), era, agent.token, second))
        if era == LEGACY:
            await wait_until(_streams(app, agent.session_id, 2))
        else:
            await stack.enter_async_context(second_client.listen(tools_list_changed=True))
        await publish_tools_changed(bus, agent.session_id)
        await first.settle_at(1)
        await second.settle_at(1)
        await publish_tools_changed(bus, agent.session_id)
        await first.settle_at(2)
        await second.settle_at(2)


async def test_the_replica_stops_listening_once_the_session_has_no_connection(
    era: str, app: App, new_session, bus: EventBus
):
    agent = await new_session()
    async with listening_client(app, era, agent, Notifications()):
        assert app.bridge.fanout.holds(f"session:{agent.session_id}")

    async def released() -> bool:
        return not app.bridge.fanout.holds(f"session:{agent.session_id}")

    await wait_until(released)
    assert app.bridge.open_streams(agent.session_id) == 0


def _streams(app: App, session_id: str, count: int):
    async def condition() -> bool:
        return app.bridge.open_streams(session_id) == count

    return condition


async def test_both_eras_advertise_that_the_tool_list_changes(era: str, app: App, new_session):
    agent = await new_session()
    mode = LEGACY if era == LEGACY else "auto"  # auto probes server/discover and lands on the 2026 era
    async with mcp_client(app.url("/mcp/session"), mode, agent.token) as client:
        assert (client.protocol_version == MODERN) == (era == MODERN)
        tools = client.server_capabilities.tools
        assert tools is not None and tools.list_changed


async def test_a_publish_reaches_the_sessions_clients_on_every_replica_once_each(
    era: str, app: App, settings, new_session, bus: EventBus
):
    agent = await new_session()
    on_first, on_second = Notifications(), Notifications()
    async with running_server(settings) as second_address:
        replica = App(second_address, support_server._last_app[-1].state.mcp_bridge)
        assert replica.bridge is not app.bridge
        async with (
            listening_client(app, era, agent, on_first),
            listening_client(replica, era, agent, on_second),
        ):
            await publish_tools_changed(bus, agent.session_id)
            await on_first.settle_at(1)
            await on_second.settle_at(1)
