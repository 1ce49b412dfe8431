"""No orphans, end to end: an agent that forks a helper that forks again (one grandchild in its own session,
one double-forked daemon) leaves no process behind when its task is stopped over GraphQL, when its worker
is killed with SIGKILL, or when `kandev serve` shuts down."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from kandev.domain.tasks.service import CreateTask
from kandev.models.enums import AgentKind
from kandev.platform.settings import Settings
from kandev.runtime.process import keeper_available
from tests.integration.test_serve import wait_healthy
from tests.support.factories import new_agent_profile
from tests.support.processes import alive, wait_gone
from tests.support.server import free_port, running_server
from tests.support.watch import watching
from tests.support.workers import running_worker

# Only the keeper (Linux) reaches descendants that left the agent's group; elsewhere only the group dies.
pytestmark = [pytest.mark.slow, pytest.mark.skipif(not keeper_available(), reason="no subreaper keeper here")]

FORKING = str(Path(__file__).parents[2] / "agents" / "forking_agent.py")
STOP = """mutation($id: ID!) { stopTask(taskId: $id) { __typename
  ... on StopTaskPayload { status } ... on Error { code message } } }"""


async def reported_tree(path: Path, timeout: float = 30) -> list[int]:
    """The pids the forking agent wrote once its whole tree ran (agent first), within `timeout`."""
    async with asyncio.timeout(timeout):
        while not (path.exists() and path.read_text().startswith("tree ")):
            await asyncio.sleep(0.05)
    tree = [int(pid) for pid in path.read_text().split()[1:]]
    assert len(tree) == 5 and all(alive(pid) for pid in tree)
    assert {os.getsid(pid) for pid in tree[1:]} - {os.getsid(tree[0])}, "no descendant left the agent's session"
    return tree


def survivors(tree: list[int], timeout: float = 10) -> set[int]:
    """Members of `tree` still alive after a bounded wait; killed then, so a failing test leaves nothing."""
    left = wait_gone(set(tree), timeout=timeout)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    return left


async def hanging_turn(services: Any, bus: Any, db: Any, workspace_id: str, tree_file: Path) -> tuple[str, list[int]]:
    """A task whose forking agent is mid-turn (it never ends the turn); returns its id and the agent's tree."""
    env = {"FORK_TREE_FILE": str(tree_file)}
    profile = await new_agent_profile(
        services, workspace_id, "Forking", AgentKind.ACP, command=[sys.executable, FORKING], env=env
    )
    created = await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Forks", start_agent=False))
    started = await services.sessions.start_task(created.task.id, "/hang", profile.id)
    tree = await reported_tree(tree_file)
    async with watching(bus, db, started.session.id) as watch:
        await watch.message("AGENT", tree_file.read_text())
    return created.task.id, tree


async def test_stop_task_over_graphql_kills_the_agent_and_every_process_it_spawned(
    services: Any, settings: Settings, bus: Any, db: Any, workspace_id: str, tmp_path: Path
) -> None:
    async with running_server(settings) as address:
        with running_worker(settings.model_copy(update={"public_url": f"http://{address}"})):
            task_id, tree = await hanging_turn(services, bus, db, workspace_id, tmp_path / "tree")
            async with httpx.AsyncClient(base_url=f"http://{address}", timeout=10) as http:
                reply = await http.post("/graphql", json={"query": STOP, "variables": {"id": task_id}})
            assert reply.json()["data"]["stopTask"] == {"__typename": "StopTaskPayload", "status": "stopped"}
            assert await asyncio.to_thread(survivors, tree) == set()


async def test_sigkill_of_the_worker_kills_the_agent_and_every_process_it_spawned(
    services: Any, settings: Settings, bus: Any, db: Any, workspace_id: str, tmp_path: Path
) -> None:
    with running_worker(settings) as worker:
        _, tree = await hanging_turn(services, bus, db, workspace_id, tmp_path / "tree")
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=10)
        assert await asyncio.to_thread(survivors, tree) == set()


def graphql(base: str, query: str, **variables: Any) -> dict[str, Any]:
    reply = httpx.post(f"{base}/graphql", json={"query": query, "variables": variables}, timeout=10).json()
    assert "errors" not in reply, reply
    return reply["data"]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["shutdown", "crash"])
def test_kandev_serve_ending_kills_a_running_agent_and_every_process_it_spawned(tmp_path: Path, sig: int) -> None:
    port, tree_file = free_port(), tmp_path / "tree"
    env = {k: v for k, v in os.environ.items() if not k.startswith("KANDEV_")}
    env.update(KANDEV_DATA_DIR=str(tmp_path / "data"), KANDEV_WORKERS="1")
    serve = subprocess.Popen(
        [sys.executable, "-m", "kandev.cli", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    base, tree = f"http://127.0.0.1:{port}", []
    try:
        wait_healthy(base, serve)
        workspace_id = graphql(base, "{ workspaces { id } }")["workspaces"][0]["id"]
        profile = graphql(
            base,
            "mutation($i: CreateAgentProfileInput!) { createAgentProfile(input: $i) {"
            " ... on CreateAgentProfilePayload { agentProfile { id } } } }",
            i={
                "workspaceId": workspace_id,
                "name": "Forking",
                "kind": "ACP",
                "command": [sys.executable, FORKING],
                "env": {"FORK_TREE_FILE": str(tree_file)},
            },
        )["createAgentProfile"]["agentProfile"]["id"]
        task_id = graphql(
            base,
            "mutation($i: CreateTaskInput!) { createTask(input: $i) { ... on CreateTaskPayload { task { id } } } }",
            i={"workspaceId": workspace_id, "title": "Forks", "startAgent": False},
        )["createTask"]["task"]["id"]
        graphql(
            base,
            "mutation($i: StartTaskInput!) { startTask(input: $i) { __typename } }",
            i={"taskId": task_id, "prompt": "/hang", "agentProfileId": profile},
        )
        tree = asyncio.run(reported_tree(tree_file))
        serve.send_signal(sig)  # only to serve itself: on a crash nobody stops its children in order
        serve.wait(timeout=60)
        assert survivors(tree, timeout=30) == set()
    finally:
        if serve.poll() is None:
            os.killpg(serve.pid, signal.SIGKILL)
            serve.wait()
        survivors(tree, timeout=0)
