"""Revocation at once, everywhere: a revoked token, a removed user or a withdrawn admin flag reaches the GraphQL
WebSockets and MCP sessions people hold open, on every replica, within a second of the change returning. Two
servers (two apps, one Redis, one database) play the replicas; the change is made on the other one, or by the
CLI."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.shared.exceptions import MCPError
from websockets.exceptions import ConnectionClosed

from kandev.app import create_app
from kandev.domain.access.tokens import create_token
from kandev.domain.access.users import create_user
from kandev.platform.database import Database
from kandev.platform.settings import Settings
from tests.integration.mcp_transport.conftest import LEGACY, MODERN, mcp_client
from tests.support.factories import settings_for
from tests.support.graphql_ws import GraphQLWebSocket
from tests.support.server import serving
from tests.support.workers import worker_env

WITHIN = 1.0
EVENTS = "subscription($ws: ID!) { taskEvents(workspaceId: $ws) { kind } }"
REVOKE = "mutation($id: ID!) { revokeAccessToken(id: $id) { __typename } }"
SERVER_WIDE = """mutation($name: String!) { createMcpServer(input: {workspaceId: null, name: $name, kind: REMOTE,
  url: "https://docs.example/mcp"}) { __typename ... on Error { code message } } }"""
WORKSPACE = 'mutation { createWorkspace(input: {name: "Mine"}) { ... on WorkspacePayload { workspace { id } } } }'


@pytest.fixture
def settings(database_url: str, redis_url: str, tmp_path: Path) -> Settings:
    return settings_for(database_url, redis_url, tmp_path, auth="on")


@pytest.fixture
async def apps(settings: Settings) -> AsyncIterator[list[Any]]:
    """Two serving processes' apps on one database and one Redis, each watching for access changes."""
    async with AsyncExitStack() as stack:
        apps = []
        for _ in range(2):
            app = create_app(settings)
            app.state.address = await stack.enter_async_context(serving(app, lifespan="on"))
            async with asyncio.timeout(5):
                await app.state.mcp_bridge.callers.watch.until_trusted()
            apps.append(app)
        yield apps


@pytest.fixture
def replicas(apps: list[Any]) -> list[str]:
    return [app.state.address for app in apps]


async def person(db: Database, login: str, *, admin: bool = False, tokens: int = 1) -> list[Any]:
    """A user and their tokens (IssuedToken: `.token`, `.info.id`)."""
    await create_user(db, login, admin=admin)
    return [await create_token(db, name=f"t{n}", login=login) for n in range(tokens)]


async def post(address: str, token: str, query: str, **variables: Any) -> dict[str, Any]:
    async with httpx.AsyncClient(timeout=10) as http:
        answer = await http.post(
            f"http://{address}/graphql",
            json={"query": query, "variables": variables},
            headers={"Authorization": f"Bearer {token}"},
        )
    answer.raise_for_status()
    return answer.json()["data"]


async def subscribed(address: str, token: str) -> GraphQLWebSocket:
    """A WebSocket with a live taskEvents subscription on a workspace of the token's user."""
    workspace = (await post(address, token, WORKSPACE))["createWorkspace"]["workspace"]["id"]
    socket = await GraphQLWebSocket.open(address, {"Authorization": f"Bearer {token}"})
    await socket.listen(EVENTS, ws=workspace)
    return socket


async def closed_within(socket: GraphQLWebSocket, seconds: float) -> int | None:
    """The close code, once the server closed the socket within `seconds`."""
    async with asyncio.timeout(seconds):
        try:
            while True:
                await socket.connection.recv()
        except ConnectionClosed as closed:
            return closed.rcvd.code if closed.rcvd else None


async def kandev(settings: Settings, *args: str) -> str:
    """The `kandev` command against the test's database and Redis, run without blocking the servers."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "kandev.cli",
        *args,
        env=worker_env(settings, KANDEV_AUTH="on"),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    async with asyncio.timeout(60):
        out, err = await process.communicate()
    assert process.returncode == 0, err.decode()
    return out.decode()


async def test_a_subscription_whose_token_is_revoked_on_another_replica_is_closed_within_a_second(db, replicas):
    mine, spare = await person(db, "alice", tokens=2)
    socket = await subscribed(replicas[0], mine.token)
    answer = await post(replicas[1], spare.token, REVOKE, id=mine.info.id)
    assert answer["revokeAccessToken"]["__typename"] == "AccessTokenPayload"
    assert await closed_within(socket, WITHIN) == 4403
    # The same token can't open a new one either, on any replica.
    with pytest.raises(ConnectionClosed) as refused:
        await GraphQLWebSocket.open(replicas[1], {"Authorization": f"Bearer {mine.token}"})
    assert refused.value.rcvd is not None and refused.value.rcvd.code == 4403


async def test_a_token_revoked_with_the_cli_closes_its_socket_within_a_second(db, settings, replicas):
    (mine,) = await person(db, "alice")
    socket = await subscribed(replicas[1], mine.token)
    await kandev(settings, "token", "revoke", mine.info.id)
    assert await closed_within(socket, WITHIN) == 4403


async def test_a_removed_users_sockets_are_closed_within_a_second_on_every_replica(db, settings, replicas):
    first, second = await person(db, "mallory", tokens=2)
    (bystander,) = await person(db, "bob")
    sockets = [await subscribed(replicas[0], first.token), await subscribed(replicas[1], second.token)]
    kept = await subscribed(replicas[0], bystander.token)
    assert "removed user mallory" in await kandev(settings, "user", "remove", "mallory")
    for socket in sockets:
        assert await closed_within(socket, WITHIN) == 4403
    # Someone else's socket stays open, and her tokens open nothing again.
    assert kept.connection.close_code is None
    async with httpx.AsyncClient(timeout=10) as http:
        refused = await http.post(
            f"http://{replicas[1]}/graphql",
            json={"query": "{ workspaces { id } }"},
            headers={"Authorization": f"Bearer {first.token}"},
        )
    assert refused.status_code == 401


async def ws_mutation(socket: GraphQLWebSocket, query: str, **variables: Any) -> dict[str, Any]:
    """A mutation over the socket: its result, once the operation completed."""
    op_id = await socket.subscribe(query, **variables)
    data = None
    async with asyncio.timeout(10):
        while (message := await socket.next_message())["type"] != "complete":
            assert message["type"] == "next" and message["id"] == op_id, message
            data = message["payload"]["data"]
    assert data is not None
    return data


async def test_an_admin_only_mutation_over_a_socket_opened_as_admin_is_refused_once_the_flag_is_withdrawn(
    db, settings, replicas
):
    (admin,) = await person(db, "root-ish", admin=True)
    socket = await GraphQLWebSocket.open(replicas[0], {"Authorization": f"Bearer {admin.token}"})
    before = await ws_mutation(socket, SERVER_WIDE, name="docs")
    assert before["createMcpServer"]["__typename"] == "McpServerPayload", before
    await kandev(settings, "user", "update", "root-ish", "--no-admin")
    started = time.monotonic()
    after = await ws_mutation(socket, SERVER_WIDE, name="docs2")
    assert after["createMcpServer"]["__typename"] == "PermissionDeniedError"
    assert time.monotonic() - started < WITHIN
    assert socket.connection.close_code is None  # downgraded, not closed: what a non-admin may do still works


@pytest.mark.parametrize("era", [LEGACY, MODERN])
async def test_an_mcp_session_on_mcp_is_refused_and_ended_within_a_second_after_its_token_is_revoked(
    db, apps, replicas, era
):
    mine, spare = await person(db, "alice", tokens=2)
    bridge = apps[0].state.mcp_bridge
    sessions = bridge._managers["external"]._server_instances
    stack = AsyncExitStack()
    try:
        client = await stack.enter_async_context(mcp_client(f"http://{replicas[0]}/mcp", era, mine.token))
        assert (await client.list_tools()).tools
        if era == MODERN:  # a listen stream; the handshake era's client opens its GET stream itself
            await stack.enter_async_context(client.listen(tools_list_changed=True))
        async with asyncio.timeout(10):
            while bridge.open_streams(None) != 1:
                await asyncio.sleep(0.01)
        await post(replicas[1], spare.token, REVOKE, id=mine.info.id)
        revoked_at = time.monotonic()
        # Its streams end on its replica and a handshake-era session is ended, not only refused at its next
        # request: no other credential of hers can pick it up.
        async with asyncio.timeout(WITHIN):
            while bridge.open_streams(None) or sessions:
                await asyncio.sleep(0.01)
        with pytest.raises(MCPError):
            await client.list_tools()
        assert time.monotonic() - revoked_at < WITHIN
    finally:
        with contextlib.suppress(BaseException):  # the client's goodbye carries the revoked token too
            await stack.aclose()
    assert sessions == {} and bridge.open_streams(None) == 0
