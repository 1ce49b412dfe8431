"""Open notification streams (GET streams, listen streams) do not hold up the server's shutdown."""

from __future__ import annotations

import functools
import time
from contextlib import AsyncExitStack

import pytest

from kandev.app import create_app
from tests.integration.mcp_transport.conftest import ERAS, LEGACY, FakeSurface, mcp_client
from tests.support import server as support_server
from tests.support.server import running_server
from tests.support.waiting import wait_until


@pytest.mark.parametrize("era", ERAS)
async def test_the_server_stops_promptly_while_a_client_still_listens(
    era: str, settings, surface: FakeSurface, new_session, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(support_server, "create_app", functools.partial(create_app, mcp_surface=surface))
    agent = await new_session()
    async with AsyncExitStack() as clients:
        async with running_server(settings) as address:
            bridge = support_server._last_app[-1].state.mcp_bridge
            client = await clients.enter_async_context(mcp_client(f"http://{address}/mcp/session", era, agent.token))
            if era == LEGACY:

                async def stream_open() -> bool:
                    return bridge.open_streams(agent.session_id) == 1

                await wait_until(stream_open)
            else:
                await clients.enter_async_context(client.listen(tools_list_changed=True))
            stopping = time.monotonic()
        assert time.monotonic() - stopping < 5
