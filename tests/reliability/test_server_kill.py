"""kill -9 of `kandev serve` in the middle of a burst of creates: after a restart on the same data, every create
the server acknowledged is there. On the embedded default (SQLite) and on PostgreSQL."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select

from kandev.migrations import upgrade_to_head
from kandev.models import Task
from kandev.platform.database import Database
from tests.integration.test_serve import wait_healthy
from tests.support.databases import create_postgres_database, drop_postgres_database, postgres_server_url, sqlite_url
from tests.support.processes import alive, descendants, wait_gone
from tests.support.server import free_port

pytestmark = [pytest.mark.reliability, pytest.mark.slow]

WRITERS = 8
KILL_AFTER = 80  # acknowledged creates before the kill; the writers are still going when it lands
CREATE = """mutation($input: CreateTaskInput!) { createTask(input: $input) { __typename
  ... on CreateTaskPayload { task { id } } ... on Error { code message } } }"""


def serve_env(data_dir: Path, **settings: str) -> dict[str, str]:
    """`kandev serve`'s environment in tests: none of the developer's KANDEV_ settings, one embedded worker."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KANDEV_")}
    env.update(KANDEV_DATA_DIR=str(data_dir), KANDEV_WORKERS="1", **settings)
    return env


@dataclass
class Served:
    process: subprocess.Popen[bytes]
    tree: set[int] = field(default_factory=set)  # children seen before the kill: they may outlive it

    def kill(self) -> None:
        """SIGKILL `kandev serve` itself, the fault under test (its children are left to their own fate)."""
        self.tree = descendants(self.process.pid)
        os.kill(self.process.pid, signal.SIGKILL)


@contextmanager
def serving(env: dict[str, str], port: int) -> Iterator[Served]:
    process = subprocess.Popen(
        [sys.executable, "-m", "kandev.cli", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    served = Served(process)
    try:
        yield served
    finally:
        tree = served.tree | descendants(process.pid) | {process.pid}
        for pid in tree:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        process.wait(timeout=15)
        wait_gone(tree, timeout=15)


async def burst_then_kill(base: str, workspace_id: str, served: Served) -> tuple[list[str], int]:
    """WRITERS clients create tasks back to back; after KILL_AFTER acknowledgements the server gets SIGKILL.
    Returns the acknowledged task ids and how many requests were cut off."""
    acknowledged: list[str] = []
    cut_off = 0
    killed = asyncio.Event()

    async def writer(http: httpx.AsyncClient, n: int) -> None:
        nonlocal cut_off
        for i in range(10_000):
            if killed.is_set():
                return
            variables = {"input": {"workspaceId": workspace_id, "title": f"Burst {n}-{i}"}}
            try:
                response = await http.post("/graphql", json={"query": CREATE, "variables": variables})
            except httpx.HTTPError:
                cut_off += 1
                return
            payload = response.json()["data"]["createTask"]
            assert payload["__typename"] == "CreateTaskPayload", payload
            acknowledged.append(payload["task"]["id"])
            if len(acknowledged) >= KILL_AFTER and not killed.is_set():
                served.kill()
                killed.set()

    async with httpx.AsyncClient(base_url=base, timeout=20) as http:
        await asyncio.wait_for(asyncio.gather(*(writer(http, n) for n in range(WRITERS))), timeout=120)
    assert killed.is_set()
    return acknowledged, cut_off


async def listed_task_ids(base: str, workspace_id: str) -> set[str]:
    """Every task the restarted server lists, page by page."""
    query = """query($ws: ID!, $after: String) { tasks(workspaceId: $ws, first: 100, after: $after) {
      nodes { id } pageInfo { hasNextPage endCursor } } }"""
    ids: set[str] = set()
    after = None
    async with httpx.AsyncClient(base_url=base, timeout=20) as http:
        for _ in range(100):
            variables = {"ws": workspace_id, "after": after}
            body = (await http.post("/graphql", json={"query": query, "variables": variables})).json()
            assert "errors" not in body, body
            page = body["data"]["tasks"]
            ids |= {node["id"] for node in page["nodes"]}
            if not page["pageInfo"]["hasNextPage"]:
                return ids
            after = page["pageInfo"]["endCursor"]
    raise AssertionError("the task list did not end")


@asynccontextmanager
async def database_for(kind: str, data_dir: Path) -> AsyncIterator[tuple[dict[str, str], str]]:
    """The settings `kandev serve` gets for `kind`, and the database URL the test reads back."""
    if kind == "sqlite":
        yield {}, sqlite_url(data_dir / "kandev.db")
        return
    server = postgres_server_url()
    if server is None:
        pytest.skip("KANDEV_TEST_POSTGRES_URL is not set: no PostgreSQL server to create the database on")
    url = await create_postgres_database(server, prefix="kandev_kill")
    try:
        await asyncio.to_thread(upgrade_to_head, url)
        yield {"KANDEV_DATABASE_URL": url}, url
    finally:
        await drop_postgres_database(server, url)


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
async def test_every_create_acknowledged_before_a_kill_9_of_the_server_is_there_after_a_restart(
    kind: str, redis_url: str, tmp_path: Path
):
    data_dir = tmp_path / "data"
    async with database_for(kind, data_dir) as (database_settings, url):
        if kind == "postgresql":
            database_settings = {**database_settings, "KANDEV_REDIS_URL": redis_url}  # the production shape
        env = serve_env(data_dir, **database_settings)
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        with serving(env, port) as served:
            await asyncio.to_thread(wait_healthy, base, served.process)
            async with httpx.AsyncClient(base_url=base, timeout=20) as http:
                workspaces = (await http.post("/graphql", json={"query": "{ workspaces { id } }"})).json()
            workspace_id = workspaces["data"]["workspaces"][0]["id"]
            began = time.monotonic()
            acknowledged, cut_off = await burst_then_kill(base, workspace_id, served)
            elapsed = time.monotonic() - began
            assert served.process.wait(timeout=10) == -signal.SIGKILL
        with serving(env, port) as served:
            await asyncio.to_thread(wait_healthy, base, served.process)
            served = await listed_task_ids(base, workspace_id)
        database = Database(url)
        try:
            async with database.read() as s:
                stored = set(await s.scalars(select(Task.id)))
        finally:
            await database.dispose()
    assert len(acknowledged) == len(set(acknowledged)) >= KILL_AFTER
    assert set(acknowledged) <= stored, f"{len(set(acknowledged) - stored)} acknowledged creates were lost"
    assert set(acknowledged) <= served
    print(
        f"\n[reliability] kill -9 of serve ({kind}) mid-burst: {len(acknowledged)} acknowledged creates "
        f"in {elapsed:.1f}s, {cut_off} requests cut off, {len(stored)} stored, none lost"
    )
