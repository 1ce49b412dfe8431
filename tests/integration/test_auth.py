"""KANDEV_AUTH=on: personal access tokens guard /graphql over HTTP and in the WebSocket connection_init, REST
and /mcp, all through one door."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select
from starlette.routing import WebSocketRoute
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from kandev.app import create_app
from kandev.domain.access.tokens import create_token, revoke_token
from kandev.domain.access.users import create_user
from kandev.models import AccessToken
from kandev.platform.database import Database
from kandev.platform.settings import Settings
from tests.support.factories import settings_for
from tests.support.graphql_ws import PROTOCOL, GraphQLWebSocket
from tests.support.server import running_server


@pytest.fixture
def settings(database_url: str, redis_url: str, tmp_path: Path) -> Settings:
    return settings_for(database_url, redis_url, tmp_path, auth="on")


async def post(address: str, query: str, token: str | None = None, **variables: object) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx.AsyncClient(base_url=f"http://{address}", timeout=10) as http:
        return await http.post("/graphql", json={"query": query, "variables": variables}, headers=headers)


async def test_graphql_over_http_needs_a_valid_token_and_shows_only_the_owners_workspaces(settings, db: Database):
    async with running_server(settings) as address:
        local = (await create_token(db, name="laptop", login="local")).token
        await create_user(db, "alice")
        alice = (await create_token(db, name="ci", login="alice")).token
        assert (await post(address, "{ workspaces { id } }")).status_code == 401
        assert (await post(address, "{ workspaces { id } }", token="kdv_not-a-real-token")).status_code == 401
        mine = (await post(address, "{ workspaces { id name } }", token=local)).json()["data"]["workspaces"]
        assert [w["name"] for w in mine] == ["Default"]
        theirs = (await post(address, "{ workspaces { id } }", token=alice)).json()["data"]["workspaces"]
        assert theirs == []
        probe = await post(
            address, "query($ws: ID!) { workflows(workspaceId: $ws) { id } }", token=alice, ws=mine[0]["id"]
        )
        assert probe.json()["errors"][0]["message"] == "workspace not found"
    async with db.read() as session:
        hashes = list(await session.scalars(select(AccessToken.token_hash)))
    assert len(hashes) == 2 and local not in hashes and alice not in hashes


async def test_a_websocket_must_present_a_token_in_connection_init(settings, db: Database):
    async with running_server(settings) as address:
        token = (await create_token(db, name="phone", login="local")).token
        async with connect(f"ws://{address}/graphql", subprotocols=[PROTOCOL], open_timeout=10) as ws:
            await ws.send(json.dumps({"type": "connection_init", "payload": {}}))
            with pytest.raises(ConnectionClosed) as closed:
                await ws.recv()
            assert closed.value.rcvd.code == 4403
        socket = await GraphQLWebSocket.open(address, {"Authorization": f"Bearer {token}"})
        await socket.close()


async def test_a_websocket_that_never_sends_connection_init_is_closed_4408_after_the_setting(
    database_url, redis_url, tmp_path
):
    settings = settings_for(database_url, redis_url, tmp_path, auth="on", ws_init_timeout_seconds=0.5)
    async with running_server(settings) as address:
        async with connect(f"ws://{address}/graphql", subprotocols=[PROTOCOL], open_timeout=10) as ws:
            started = time.monotonic()
            with pytest.raises(ConnectionClosed) as closed:
                await asyncio.wait_for(ws.recv(), timeout=10)
            waited = time.monotonic() - started
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4408
    assert 0.4 < waited < 5


def test_the_connection_init_wait_is_10_seconds_by_default(settings):
    app = create_app(settings)
    [view] = [route.app for route in app.routes if isinstance(route, WebSocketRoute) and route.path == "/graphql"]
    assert view.connection_init_wait_timeout == timedelta(seconds=10)


MCP_HEADERS = {"Accept": "application/json, text/event-stream"}
MCP_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "probe", "version": "0"}},
}
REFUSED = "a valid personal access token is required"


async def ws_init_close_code(address: str, token: str) -> int | None:
    """The close code after a connection_init with `token`, or None when the server acknowledged it."""
    async with connect(f"ws://{address}/graphql", subprotocols=[PROTOCOL], open_timeout=10) as ws:
        await ws.send(json.dumps({"type": "connection_init", "payload": {"Authorization": f"Bearer {token}"}}))
        try:
            reply = json.loads(await ws.recv())
        except ConnectionClosed as closed:
            return closed.rcvd.code if closed.rcvd else -1
        assert reply["type"] == "connection_ack"
        return None


async def every_door(address: str, token: str, workspace_id: str) -> dict[str, httpx.Response]:
    """One request through each door that takes a personal access token."""
    bearer = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=f"http://{address}", timeout=10) as http:
        return {
            "graphql": await http.post("/graphql", json={"query": "{ workspaces { id } }"}, headers=bearer),
            "rest": await http.get(
                f"/api/v1/workspaces/{workspace_id}/tasks/by-external-id", params={"external_id": "x"}, headers=bearer
            ),
            "mcp": await http.post("/mcp", json=MCP_INITIALIZE, headers={**MCP_HEADERS, **bearer}),
            "mcp_session": await http.post("/mcp/session", json=MCP_INITIALIZE, headers={**MCP_HEADERS, **bearer}),
        }


async def test_a_revoked_personal_access_token_is_refused_at_every_door_each_in_its_own_shape(settings, db: Database):
    async with running_server(settings) as address:
        issued = await create_token(db, name="laptop", login="local")
        live = await every_door(address, issued.token, "00000000-0000-0000-0000-000000000000")
        assert live["graphql"].status_code == 200 and "errors" not in live["graphql"].json()
        assert live["rest"].status_code == 404  # past the door: the workspace is unknown
        assert live["mcp"].status_code == 200 and live["mcp"].json()["result"]["serverInfo"]["name"] == "kandev"
        assert live["mcp_session"].status_code == 401  # a person's token is never a session's
        assert await ws_init_close_code(address, issued.token) is None

        await revoke_token(db, issued.info.id)
        refused = await every_door(address, issued.token, "00000000-0000-0000-0000-000000000000")
        assert {door: r.status_code for door, r in refused.items()} == dict.fromkeys(refused, 401)
        assert all(r.headers["www-authenticate"] == "Bearer" for r in refused.values())
        assert refused["graphql"].json() == {"errors": [{"message": REFUSED}]}
        assert refused["rest"].json() == {"error": REFUSED, "code": "UNAUTHENTICATED"}
        assert refused["mcp"].json()["error"] == {"code": -32600, "message": REFUSED}
        assert refused["mcp_session"].json()["error"] == {
            "code": -32600,
            "message": "a valid session token is required",
        }
        assert await ws_init_close_code(address, issued.token) == 4403
