"""Handshake-era MCP sessions (Mcp-Session-Id) stay bound to the credential that opened them."""

from __future__ import annotations

import httpx

from tests.integration.mcp_transport.conftest import App

ACCEPT = {"Accept": "application/json, text/event-stream"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "0"},
    },
}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}


async def test_another_sessions_token_cannot_use_an_open_mcp_session(app: App, new_session):
    mine, theirs = await new_session(), await new_session()
    async with httpx.AsyncClient(base_url=app.url(""), timeout=10) as http:
        opened = await http.post(
            "/mcp/session", json=INITIALIZE, headers={**ACCEPT, "Authorization": f"Bearer {mine.token}"}
        )
        assert opened.status_code == 200
        mcp_session = opened.headers["mcp-session-id"]
        routed = {**ACCEPT, "Mcp-Session-Id": mcp_session, "Mcp-Protocol-Version": "2025-11-25"}
        hijack = await http.post(
            "/mcp/session", json=LIST, headers={**routed, "Authorization": f"Bearer {theirs.token}"}
        )
        assert hijack.status_code == 404
        own = await http.post("/mcp/session", json=LIST, headers={**routed, "Authorization": f"Bearer {mine.token}"})
        assert own.status_code == 200 and '"name":"echo"' in own.text.replace(" ", "")
        await http.delete("/mcp/session", headers={**routed, "Authorization": f"Bearer {mine.token}"})


async def test_an_mcp_session_opened_on_one_endpoint_is_unknown_on_the_other(app: App, new_session):
    agent = await new_session()
    async with httpx.AsyncClient(base_url=app.url(""), timeout=10) as http:
        opened = await http.post("/mcp", json=INITIALIZE, headers=ACCEPT)
        routed = {
            **ACCEPT,
            "Mcp-Session-Id": opened.headers["mcp-session-id"],
            "Mcp-Protocol-Version": "2025-11-25",
        }
        crossed = await http.post(
            "/mcp/session", json=LIST, headers={**routed, "Authorization": f"Bearer {agent.token}"}
        )
        assert crossed.status_code == 404
        await http.delete("/mcp", headers=routed)
