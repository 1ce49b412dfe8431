"""KANDEV_AUTH=on: personal access tokens guard /graphql over HTTP and in the WebSocket connection_init."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from kandev.config import Settings
from kandev.db import Database
from kandev.domain.access_tokens import create_token
from kandev.domain.users import create_user
from kandev.models import AccessToken
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
