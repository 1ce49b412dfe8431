"""The real tool surface through the official client, as the MCP spec asks: an unknown tool is a JSON-RPC
error (-32602, Invalid params) carrying Kandev's own code in its data, not a tool result; the server names
its version in the initialize handshake's serverInfo."""

from __future__ import annotations

import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from kandev import __version__
from tests.integration.mcp_transport.conftest import ERAS, LEGACY, mcp_client
from tests.support.server import running_server


@pytest.mark.parametrize("era", ERAS)
async def test_an_unknown_tool_is_an_invalid_params_error_with_the_unknown_tool_code(era, settings, principal):
    async with running_server(settings) as address, mcp_client(f"http://{address}/mcp", era) as client:
        with pytest.raises(MCPError) as unknown:
            await client.call_tool("no_such_tool_kandev", {})
        # A session's tool is as unknown to an external caller as a made-up one.
        with pytest.raises(MCPError) as session_only:
            await client.call_tool("message_task_kandev", {"task_id": "x", "prompt": "hi"})
        listed = await client.list_tools()  # the session goes on
    for refused in (unknown.value, session_only.value):
        assert refused.code == INVALID_PARAMS
        assert refused.error.data == {"code": "UNKNOWN_TOOL"}
    assert unknown.value.message == "unknown tool 'no_such_tool_kandev' for this session"
    assert listed.tools


async def test_initialize_reports_the_packages_version_as_server_info(settings, principal):
    async with running_server(settings) as address, mcp_client(f"http://{address}/mcp", LEGACY) as client:
        info = client.server_info
    assert info is not None and (info.name, info.version) == ("kandev", __version__)
    assert __version__
