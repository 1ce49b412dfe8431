"""The HTTP guard in front of every route, against a real server: DNS rebinding (421), foreign origins
(403), non-JSON state changes (415), session tokens outside /mcp/session (401) and webhook bodies (413)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from kandev.domain.services import Services
from kandev.domain.tasks.service import CreateTask
from kandev.models import Task
from kandev.platform.database import Database
from kandev.platform.settings import Settings
from tests.support.factories import settings_for
from tests.support.graphql_ws import PROTOCOL
from tests.support.server import running_server
from tests.support.session_tokens import launch_token

ATTACKER = "attacker.example"
CREATE_TASK = (
    "mutation($i: CreateTaskInput!) { createTask(input: $i) { __typename ... on CreateTaskPayload { task { id } } } }"
)
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}
MCP_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "probe", "version": "0"}},
}
MIB = 1024 * 1024
# What the guard answers a webhook it refuses (a webhook route itself may answer 401 or 404).
GUARD_REFUSALS = {403, 413, 415, 421}


@pytest.fixture
def auth(request: pytest.FixtureRequest) -> str:
    return getattr(request, "param", "off")


@pytest.fixture
def settings(database_url: str, redis_url: str, tmp_path: Path, auth: str) -> Settings:
    return settings_for(
        database_url,
        redis_url,
        tmp_path,
        auth=auth,
        allowed_hosts="kandev.lan, other.lan:9000",
        allowed_origins="https://console.example.com",
    )


@pytest.fixture
async def server(settings: Settings, principal: Any) -> AsyncIterator[str]:
    async with running_server(settings) as address:
        yield address


@pytest.fixture
async def http(server: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=f"http://{server}", timeout=10) as client:
        yield client


async def task_count(db: Database) -> int:
    async with db.read() as session:
        return await session.scalar(select(func.count()).select_from(Task)) or 0


def create_task_body(workspace_id: str, title: str = "made by a web page") -> dict[str, Any]:
    return {"query": CREATE_TASK, "variables": {"i": {"workspaceId": workspace_id, "title": title}}}


def port_of(address: str) -> int:
    return int(address.rsplit(":", 1)[1])


async def websocket_refusal(address: str, host: str, headers: dict[str, str] | None = None) -> int:
    """The HTTP status a WebSocket handshake to /graphql gets when it names `host` (connecting to `address`)."""
    uri = f"ws://{host}/graphql"
    try:
        async with connect(
            uri,
            host="127.0.0.1",
            port=port_of(address),
            subprotocols=[PROTOCOL],
            additional_headers=headers or {},
            open_timeout=10,
            proxy=None,
        ):
            pass
    except InvalidStatus as refused:
        return refused.response.status_code
    raise AssertionError("the WebSocket handshake was accepted")


async def test_a_dns_rebinding_request_to_any_route_gets_421_and_creates_nothing(
    server: str, http: httpx.AsyncClient, db: Database, workspace_id: str
):
    rebound = {"Host": f"{ATTACKER}:{port_of(server)}", "Origin": f"http://{ATTACKER}:{port_of(server)}"}
    before = await task_count(db)
    attempts = [
        await http.post("/graphql", json=create_task_body(workspace_id), headers=rebound),
        await http.get("/graphql", params={"query": "{ workspaces { id } }"}, headers=rebound),
        await http.get("/graphql", headers={**rebound, "Accept": "text/html"}),
        await http.post("/mcp", json=MCP_INITIALIZE, headers={**MCP_HEADERS, **rebound}),
        await http.post("/mcp/session", json=MCP_INITIALIZE, headers={**MCP_HEADERS, **rebound}),
        await http.post("/api/v1/tasks", json={"workspace_id": workspace_id, "title": "rebound"}, headers=rebound),
        await http.get("/metrics", headers=rebound),
        await http.get("/", headers=rebound),
    ]
    assert [response.status_code for response in attempts] == [421] * len(attempts)
    assert await websocket_refusal(server, f"{ATTACKER}:{port_of(server)}", {"Origin": rebound["Origin"]}) == 421
    assert await task_count(db) == before
    # The same mutation under this server's own name does create the task.
    created = await http.post("/graphql", json=create_task_body(workspace_id))
    assert created.json()["data"]["createTask"]["__typename"] == "CreateTaskPayload"
    assert await task_count(db) == before + 1


async def test_a_missing_or_malformed_host_gets_421(server: str):
    port = port_of(server)
    for host in [b"", b"127.0.0.1@attacker.example", b"attacker.example/127.0.0.1", b"0.0.0.0:%d" % port]:
        async with httpx.AsyncClient(timeout=10) as client:
            # httpx fills in Host from the URL; a raw header list keeps exactly this one.
            request = client.build_request("GET", f"http://{server}/graphql", params={"query": "{ workspaces { id } }"})
            request.headers.pop("host")
            request.headers["Host"] = host.decode()
            response = await client.send(request)
        assert response.status_code == 421, host


async def test_a_cross_site_text_plain_or_form_post_gets_415_and_creates_nothing(
    server: str, http: httpx.AsyncClient, db: Database, workspace_id: str
):
    before = await task_count(db)
    graphql = json.dumps(create_task_body(workspace_id))
    rest = json.dumps({"workspace_id": workspace_id, "title": "from a form"})
    cross_site = {"Origin": f"http://{ATTACKER}"}
    for path, body in [("/graphql", graphql), ("/api/v1/tasks", rest), ("/mcp", json.dumps(MCP_INITIALIZE))]:
        for content_type in ["text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", None]:
            headers = {**MCP_HEADERS, **cross_site}
            if content_type:
                headers["Content-Type"] = content_type
            response = await http.post(path, content=body.encode(), headers=headers)
            assert response.status_code == 415, (path, content_type)
        form = await http.post(path, data={"query": CREATE_TASK, "title": "form"}, headers=cross_site)
        multipart = await http.post(path, files={"f": ("a.json", body.encode(), "application/json")})
        assert (form.status_code, multipart.status_code) == (415, 415), path
    assert await task_count(db) == before
    # application/json with a charset parameter is JSON.
    accepted = await http.post(
        "/graphql", content=graphql.encode(), headers={"Content-Type": "application/json; charset=utf-8"}
    )
    assert accepted.json()["data"]["createTask"]["__typename"] == "CreateTaskPayload"


async def test_a_delete_with_a_non_json_body_gets_415_and_one_without_a_body_passes(
    http: httpx.AsyncClient, workspace_id: str
):
    path = f"/api/v1/workspaces/{workspace_id}/tasks/by-external-id"
    with_body = await http.request("DELETE", path, params={"external_id": "x"}, content=b"a=b")
    without_body = await http.request("DELETE", path, params={"external_id": "x"})
    assert with_body.status_code == 415
    assert without_body.status_code == 404


async def test_a_foreign_or_null_origin_gets_403_and_allowed_origins_pass(
    server: str, http: httpx.AsyncClient, db: Database, workspace_id: str
):
    query = {"query": "{ workspaces { id } }"}
    before = await task_count(db)
    for origin in [
        f"http://{ATTACKER}",
        "null",
        f"https://{server}",
        "http://127.0.0.1:1",
        "file://",
        "chrome-extension://x",
    ]:
        refused = await http.post("/graphql", json=create_task_body(workspace_id), headers={"Origin": origin})
        assert refused.status_code == 403, origin
        assert (await http.get("/mcp", headers={**MCP_HEADERS, "Origin": origin})).status_code == 403, origin
    assert await websocket_refusal(server, server, {"Origin": f"http://{ATTACKER}"}) == 403
    assert await websocket_refusal(server, server, {"Origin": "null"}) == 403
    assert await task_count(db) == before
    port = port_of(server)
    for origin in [f"http://{server}", f"http://localhost:{port}", "https://console.example.com"]:
        host = "localhost" if "localhost" in origin else server.rsplit(":", 1)[0]
        allowed = await http.post("/graphql", json=query, headers={"Origin": origin, "Host": f"{host}:{port}"})
        assert allowed.status_code == 200 and "errors" not in allowed.json(), origin
    async with connect(
        f"ws://{server}/graphql", subprotocols=[PROTOCOL], additional_headers={"Origin": f"http://{server}"}
    ) as socket:
        await socket.send(json.dumps({"type": "connection_init", "payload": {}}))
        assert json.loads(await socket.recv())["type"] == "connection_ack"


async def test_hosts_from_kandev_allowed_hosts_pass_on_any_port_and_healthz_answers_any_host(
    server: str, http: httpx.AsyncClient
):
    query = {"query": "{ workspaces { id } }"}
    for host in ["kandev.lan", "KANDEV.LAN:8443", "other.lan:1234", "localhost", "[::1]:80", "127.1.2.3"]:
        response = await http.post("/graphql", json=query, headers={"Host": host})
        assert response.status_code == 200, host
    own_origin = await http.post("/graphql", json=query, headers={"Host": "kandev.lan", "Origin": "http://kandev.lan"})
    assert own_origin.status_code == 200
    for host in [ATTACKER, "10.0.0.7:8420", "kandev.lan.attacker.example"]:
        assert (await http.get("/healthz", headers={"Host": host, "Origin": "null"})).status_code == 200
        assert (await http.post("/graphql", json=query, headers={"Host": host})).status_code == 421


async def test_webhook_paths_take_any_content_type_up_to_1_mib_and_keep_the_host_rule(
    server: str, http: httpx.AsyncClient
):
    paths = ["/api/v1/automations/webhook/abc123", "/api/v1/github/webhook"]
    foreign = {"Content-Type": "text/plain", "Origin": f"http://{ATTACKER}"}

    async def chunks(size: int) -> AsyncIterator[bytes]:
        for _ in range(size // 65536):
            yield b"x" * 65536
        yield b"x" * (size % 65536)

    for path in paths:
        # Past the guard, whatever the route answers (none yet: the automations issue adds them).
        assert (await http.post(path, content=b"hello", headers=foreign)).status_code not in GUARD_REFUSALS
        assert (
            await http.post(path, content=b"a=b", headers={**foreign, "Content-Type": "x"})
        ).status_code not in GUARD_REFUSALS
        assert (await http.post(path, content=b"x" * MIB, headers=foreign)).status_code not in GUARD_REFUSALS
        assert (await http.post(path, content=b"x" * (MIB + 1), headers=foreign)).status_code == 413
        # A streamed body declares no length: it is counted as it arrives.
        streamed = await http.post(path, content=chunks(MIB + 1), headers=foreign)
        assert streamed.status_code == 413 and "content-length" not in streamed.request.headers
        assert (await http.post(path, content=chunks(MIB), headers=foreign)).status_code not in GUARD_REFUSALS
        rebound = await http.post(path, content=b"{}", headers={"Host": ATTACKER, "Content-Type": "application/json"})
        assert rebound.status_code == 421
    # Only those exact paths: a neighbour is an ordinary route.
    assert (await http.post("/api/v1/github/webhook/x", content=b"hi", headers=foreign)).status_code == 415


async def new_session_token(services: Services, workspace_id: str, settings: Settings) -> str:
    """A live session's token, as the worker hands it to the agent."""
    task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="agent"))).task
    session = (await services.sessions.start_task(task.id, "hello", None)).session
    return await launch_token(services.ctx, session.id)


@pytest.mark.parametrize("auth", ["off", "on"], indirect=True)
async def test_a_session_token_is_refused_everywhere_but_mcp_session(
    server: str, http: httpx.AsyncClient, db: Database, services: Services, workspace_id: str, settings: Settings
):
    token = await new_session_token(services, workspace_id, settings)
    bearer = {"Authorization": f"Bearer {token}"}
    before = await task_count(db)
    refused = [
        await http.post("/graphql", json=create_task_body(workspace_id), headers=bearer),
        await http.get("/graphql", params={"query": "{ workspaces { id } }"}, headers=bearer),
        await http.post("/api/v1/tasks", json={"workspace_id": workspace_id, "title": "by an agent"}, headers=bearer),
        await http.post("/mcp", json=MCP_INITIALIZE, headers={**MCP_HEADERS, **bearer}),
        await http.get("/metrics", headers=bearer),
        await http.post("/graphql", json=create_task_body(workspace_id), headers={"Authorization": token}),
    ]
    assert [response.status_code for response in refused] == [401] * len(refused)
    assert all(response.headers["www-authenticate"] == "Bearer" for response in refused)
    assert await websocket_refusal(server, server, bearer) == 401
    payloads = [{"Authorization": f"Bearer {token}"}, {"authorization": f"bearer {token}"}, {"Authorization": token}]
    for payload in [*payloads, {"token": token}]:
        async with connect(f"ws://{server}/graphql", subprotocols=[PROTOCOL], open_timeout=10) as socket:
            await socket.send(json.dumps({"type": "connection_init", "payload": payload}))
            with pytest.raises(ConnectionClosed) as closed:
                await socket.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 4403
    assert await task_count(db) == before
    # The agent's own endpoint still takes it.
    session = await http.post("/mcp/session", json=MCP_INITIALIZE, headers={**MCP_HEADERS, **bearer})
    assert session.status_code == 200 and session.json()["result"]["serverInfo"]["name"] == "kandev"
