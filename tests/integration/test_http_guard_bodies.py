"""Bodies of /graphql and the REST endpoints are capped by KANDEV_MAX_BODY_BYTES (1 MiB by default): a larger
one gets a typed 413 as soon as it is past the cap, before the rest is read, whether its length is declared
or it streams; nothing changes and nothing is logged as an error."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from kandev.platform.settings import Settings
from tests.support.counts import row_counts
from tests.support.factories import settings_for
from tests.support.server import running_server

MIB = 1024 * 1024
CHUNK = 64 * 1024
SMALL_CAP = 64 * 1024
# A body this large would take the whole test to send; the answer must come long before.
HUGE = 256 * MIB


@pytest.fixture
def max_body(request: pytest.FixtureRequest) -> int | None:
    return getattr(request, "param", None)


@pytest.fixture
def settings(database_url: str, redis_url: str, tmp_path: Path, max_body: int | None) -> Settings:
    overrides = {"max_body_bytes": max_body} if max_body else {}
    return settings_for(database_url, redis_url, tmp_path, **overrides)


@pytest.fixture
async def server(settings: Settings, principal: Any) -> AsyncIterator[str]:
    async with running_server(settings) as address:
        yield address


def graphql_body(workspace_id: str, size: int) -> bytes:
    """A createTask request of exactly `size` bytes (its title padded with spaces, which the domain trims)."""
    query = "mutation($i: CreateTaskInput!) { createTask(input: $i) { __typename } }"
    body = {"query": query, "variables": {"i": {"workspaceId": workspace_id, "title": "t"}}}
    bare = json.dumps(body).encode()
    return bare.replace(b'"query": "', b'"query": "' + b" " * (size - len(bare)), 1)


async def read_answer(reader: asyncio.StreamReader) -> tuple[int, dict[str, Any]]:
    """An HTTP/1.1 answer's status and JSON body (by its Content-Length: the connection stays open)."""
    head = (await reader.readuntil(b"\r\n\r\n")).decode()
    lines = head.split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines[1:] if line)
    return int(lines[0].split()[1]), json.loads(await reader.readexactly(int(headers["content-length"])))


async def post_streamed(address: str, path: str, total: int) -> tuple[int, dict[str, Any], int]:
    """POST a chunked body of `total` bytes on a raw socket, writing only until the server answers: its status,
    its JSON body and how many body bytes were written by then."""
    host, port = address.rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(
        f"POST {path} HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\n\r\n".encode()
    )
    frame = f"{CHUNK:x}\r\n".encode() + b" " * CHUNK + b"\r\n"
    answer = asyncio.create_task(read_answer(reader))
    sent = 0
    try:
        async with asyncio.timeout(60):
            while sent < total and not answer.done():
                writer.write(frame)
                await asyncio.wait({asyncio.ensure_future(writer.drain()), answer}, return_when="FIRST_COMPLETED")
                sent += CHUNK
            status, body = await answer
    finally:
        writer.close()
    return status, body, sent


@pytest.mark.parametrize("path", ["/graphql", "/api/v1/tasks"])
async def test_a_streamed_body_far_over_the_cap_gets_413_before_the_rest_is_sent(server, db, path, caplog):
    caplog.set_level(logging.INFO)
    before = await row_counts(db)
    status, body, sent = await post_streamed(server, path, HUGE)
    assert status == 413
    code = body["errors"][0]["extensions"]["code"] if path == "/graphql" else body["code"]
    assert code == "BODY_TOO_LARGE"
    # Answered once past the cap: what was written by then is the cap plus what the sockets buffer.
    assert MIB < sent < 32 * MIB < HUGE
    assert await row_counts(db) == before
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []


async def test_a_declared_length_over_the_cap_gets_413_without_any_body_sent(server):
    host, port = server.rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(
        f"POST /api/v1/tasks HTTP/1.1\r\nHost: {server}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {HUGE}\r\nConnection: close\r\n\r\n".encode()
    )
    await writer.drain()
    async with asyncio.timeout(10):
        raw = await reader.read()
    writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    assert int(head.split()[1]) == 413
    assert json.loads(body) == {"error": "the body is larger than 1 MiB", "code": "BODY_TOO_LARGE"}


async def test_a_graphql_body_of_exactly_the_cap_is_taken(server, workspace_id):
    async with httpx.AsyncClient(base_url=f"http://{server}", timeout=30) as http:
        headers = {"Content-Type": "application/json"}
        taken = await http.post("/graphql", content=graphql_body(workspace_id, MIB), headers=headers)
        refused = await http.post("/graphql", content=graphql_body(workspace_id, MIB + 1), headers=headers)
    assert taken.status_code == 200 and taken.json()["data"]["createTask"]["__typename"] == "CreateTaskPayload"
    assert refused.status_code == 413
    assert refused.json()["errors"][0] == {
        "message": "the body is larger than 1 MiB",
        "extensions": {"code": "BODY_TOO_LARGE"},
    }


@pytest.mark.parametrize("max_body", [SMALL_CAP], indirect=True)
async def test_kandev_max_body_bytes_sets_the_cap_for_graphql_rest_and_webhooks(server, workspace_id, db):
    before = await row_counts(db)
    async with httpx.AsyncClient(base_url=f"http://{server}", timeout=30) as http:
        over = b" " * (SMALL_CAP + 1)
        answers = {
            "graphql": await http.post("/graphql", content=over, headers={"Content-Type": "application/json"}),
            "rest": await http.post("/api/v1/tasks", content=over, headers={"Content-Type": "application/json"}),
            "webhook": await http.post("/api/v1/automations/webhook/abc", content=over),
        }
        under = await http.post(
            "/graphql", content=graphql_body(workspace_id, SMALL_CAP), headers={"Content-Type": "application/json"}
        )
    assert {name: answer.status_code for name, answer in answers.items()} == dict.fromkeys(answers, 413)
    assert answers["rest"].json() == {"error": f"the body is larger than {SMALL_CAP} bytes", "code": "BODY_TOO_LARGE"}
    assert under.status_code == 200 and "errors" not in under.json()
    assert (await row_counts(db))["tasks"] == before["tasks"] + 1
