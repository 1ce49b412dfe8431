"""Scale-out, tested: two replicas, two workers and two schedulers on one PostgreSQL and one Redis, driven
through both replicas. Needs KANDEV_TEST_POSTGRES_URL and KANDEV_TEST_REDIS_URL (the CI's PostgreSQL+Redis
pass runs it; the embedded pass deselects the `topology` marker)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.shared.exceptions import MCPError
from sqlalchemy import select

from kandev.models import Turn
from kandev.platform.database import Database
from tests.integration.mcp_transport.conftest import MODERN, Notifications, mcp_client
from tests.support.databases import create_postgres_database, drop_postgres_database, run
from tests.support.factories import CREATE_TASK, served_task
from tests.support.git_repos import make_repository
from tests.support.graphql_ws import GraphQLWebSocket
from tests.support.parallel import spare_redis_url
from tests.support.session_tokens import side_token
from tests.topology.topology import ERRORS, GraphQLError, Topology, running_topology

pytestmark = [pytest.mark.topology, pytest.mark.slow]

TASK_EVENTS = "subscription($w: ID!) { taskEvents(workspaceId: $w) { kind task { id title } } }"


def mutation(field_name: str, input_type: str, payload: str, selection: str) -> str:
    """A mutation document returning the payload's `selection`, or the typed error."""
    return (
        f"mutation($i: {input_type}!) {{ {field_name}(input: $i) {{ {ERRORS} ... on {payload} {{ {selection} }} }} }}"
    )


CREATE_PROFILE = mutation(
    "createAgentProfile", "CreateAgentProfileInput", "CreateAgentProfilePayload", "agentProfile { id }"
)
START_TASK = mutation("startTask", "StartTaskInput", "StartTaskPayload", "session { id }")
SEND_MESSAGE = mutation("sendMessage", "SendMessageInput", "SendMessagePayload", "task { id }")
UPDATE_TASK = mutation("updateTask", "UpdateTaskInput", "TaskPayload", "task { id }")
DELETE_TASK = f"mutation($t: ID!) {{ deleteTask(taskId: $t) {{ {ERRORS} ... on TaskPayload {{ task {{ id }} }} }} }}"
TRANSCRIPT = """query($id: ID!) { session(id: $id) { state turns { seq state stopReason error }
  messages(first: 500) { nodes { kind text } } } }"""
CONTEXT_BLOCK = re.compile(r"<kandev-context>.*?</kandev-context>\s*", re.S)


@pytest.fixture(scope="module")
def topology(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Topology]:
    server = os.environ.get("KANDEV_TEST_POSTGRES_URL")
    redis = os.environ.get("KANDEV_TEST_REDIS_URL")
    if not (server and redis):
        pytest.skip("the topology needs KANDEV_TEST_POSTGRES_URL and KANDEV_TEST_REDIS_URL")
    database_url = run(create_postgres_database(server, prefix="kandev_topology"))
    try:
        with running_topology(database_url, spare_redis_url(redis), tmp_path_factory.mktemp("topology")) as topology:
            yield topology
    finally:
        run(drop_postgres_database(server, database_url))


def wait_for(check: Any, timeout: float = 60, every: float = 0.2) -> Any:
    """Poll `check` until it returns something truthy (bounded); returns that."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(every)
    raise AssertionError(f"not within {timeout}s: {getattr(check, '__name__', check)}")


def transcript(topology: Topology, replica: int, session_id: str) -> dict[str, Any]:
    return topology.gql(replica, TRANSCRIPT, id=session_id)["session"]


def texts(session: dict[str, Any], kind: str) -> list[str]:
    return [m["text"] for m in session["messages"]["nodes"] if m["kind"] == kind]


def second_turn_ended(session: dict[str, Any]) -> dict[str, Any] | None:
    """The session once its second turn has ended (its agent's words stream before the turn ends)."""
    turns = session["turns"]
    return session if len(turns) >= 2 and turns[1]["state"] != "RUNNING" else None


async def turn_workers(topology: Topology, session_id: str) -> list[str | None]:
    db = Database(topology.database_url, pooled=False)
    try:
        async with db.read() as s:
            rows = await s.scalars(select(Turn).where(Turn.session_id == session_id).order_by(Turn.seq))
            return [t.worker_name for t in rows]
    finally:
        await db.dispose()


async def test_a_task_created_through_one_replica_reaches_a_subscriber_of_the_other(topology: Topology):
    socket = await GraphQLWebSocket.open(
        topology.replicas[1].removeprefix("http://"), {"Authorization": f"Bearer {topology.token}"}
    )
    try:
        await socket.listen(TASK_EVENTS, timeout=15, w=topology.workspace_id)
        task_id = (
            await asyncio.to_thread(
                served_task, partial(topology.mutate, 0), topology.workspace_id, "Made on the first replica"
            )
        )["id"]
        async with asyncio.timeout(15):
            event = await socket.next_message()
        assert event["type"] == "next", event
        assert event["payload"]["data"]["taskEvents"] == {
            "kind": "CREATED",
            "task": {"id": task_id, "title": "Made on the first replica"},
        }
    finally:
        await socket.close()


async def launched_session(topology: Topology, title: str) -> tuple[str, str]:
    """A task started through the first replica once its agent has spoken (its launch done), and a token for
    the test to act beside that agent: (task id, token)."""
    made = await asyncio.to_thread(served_task, partial(topology.mutate, 0), topology.workspace_id, title)
    started = await asyncio.to_thread(
        topology.mutate, 0, START_TASK, "startTask", i={"taskId": made["id"], "prompt": "/say launched"}
    )
    session_id = started["session"]["id"]
    await asyncio.to_thread(wait_for, lambda: texts(transcript(topology, 1, session_id), "AGENT") == ["launched"])
    db = Database(topology.database_url, pooled=False)
    try:
        return made["id"], await side_token(db, session_id)
    finally:
        await db.dispose()


async def test_list_changed_reaches_a_session_connected_to_the_other_replica(topology: Topology):
    # The launch stores the session's tool profile, with the title tool its first session owns.
    task_id, token = await launched_session(topology, "draft")
    heard = Notifications()
    async with mcp_client(f"{topology.replicas[1]}/mcp/session", MODERN, token, heard) as client:
        async with client.listen(tools_list_changed=True):
            before = {t.name for t in (await client.list_tools()).tools}
            await asyncio.to_thread(
                topology.mutate, 0, UPDATE_TASK, "updateTask", i={"taskId": task_id, "title": "Named by a person"}
            )
            await heard.settle_at(1)
            after = {t.name for t in (await client.list_tools()).tools}
    assert "set_task_title_kandev" in before and "set_task_title_kandev" not in after


async def test_a_session_whose_task_is_deleted_through_one_replica_is_refused_by_the_other_at_once(
    topology: Topology,
):
    task_id, token = await launched_session(topology, "deleted")
    async with mcp_client(f"{topology.replicas[1]}/mcp/session", MODERN, token) as client:
        for _ in range(3):  # the other replica now keeps this token's check
            assert not (await client.call_tool("list_workspaces_kandev", {})).is_error
        await asyncio.to_thread(topology.mutate, 0, DELETE_TASK, "deleteTask", t=task_id)
        with pytest.raises(MCPError):
            await client.call_tool("list_workspaces_kandev", {})


CREATE_TOKEN = f"""mutation {{ createAccessToken(input: {{name: "revoked soon"}}) {{ {ERRORS}
  ... on CreateAccessTokenPayload {{ token accessToken {{ id }} }} }} }}"""
REVOKE_TOKEN = (
    f"mutation($id: ID!) {{ revokeAccessToken(id: $id) {{ {ERRORS} ... on AccessTokenPayload {{ __typename }} }} }}"
)


async def test_a_token_revoked_through_one_replica_closes_its_socket_on_the_other_within_a_second(
    topology: Topology,
):
    made = await asyncio.to_thread(topology.mutate, 0, CREATE_TOKEN, "createAccessToken")
    socket = await GraphQLWebSocket.open(
        topology.replicas[1].removeprefix("http://"), {"Authorization": f"Bearer {made['token']}"}
    )
    await socket.listen(TASK_EVENTS, timeout=15, w=topology.workspace_id)
    await asyncio.to_thread(topology.mutate, 0, REVOKE_TOKEN, "revokeAccessToken", id=made["accessToken"]["id"])
    async with asyncio.timeout(1.0):
        await socket.connection.wait_closed()
    assert socket.connection.close_code == 4403


async def test_a_killed_workers_turn_is_reaped_and_the_next_prompt_resumes_on_the_other_worker(
    topology: Topology, tmp_path: Path
):
    log = tmp_path / "prompts.jsonl"
    profile = await asyncio.to_thread(
        topology.mutate,
        0,
        CREATE_PROFILE,
        "createAgentProfile",
        i={
            "workspaceId": topology.workspace_id,
            "name": "Scripted, logged",
            "kind": "SCRIPTED",
            "env": {"KANDEV_SCRIPTED_LOG": str(log)},
        },
    )
    task_id = (
        await asyncio.to_thread(served_task, partial(topology.mutate, 0), topology.workspace_id, "Survives its worker")
    )["id"]
    first_prompt = "/say started\n/sleep 120"
    started = await asyncio.to_thread(
        topology.mutate,
        0,
        START_TASK,
        "startTask",
        i={"taskId": task_id, "prompt": first_prompt, "agentProfileId": profile["agentProfile"]["id"]},
    )
    session_id = started["session"]["id"]
    await asyncio.to_thread(wait_for, lambda: "started" in texts(transcript(topology, 1, session_id), "AGENT"))
    [owner] = await turn_workers(topology, session_id)
    assert owner in ("worker-1", "worker-2")
    other = "worker-2" if owner == "worker-1" else "worker-1"
    killed_at = time.monotonic()
    topology.kill(owner)
    try:
        reaped = await asyncio.to_thread(
            wait_for, lambda: (s := transcript(topology, 1, session_id))["turns"][0]["state"] == "FAILED" and s
        )
        reap_seconds = time.monotonic() - killed_at
        assert texts(reaped, "ERROR"), reaped  # the transcript says what happened
        await asyncio.to_thread(
            topology.mutate, 1, SEND_MESSAGE, "sendMessage", i={"taskId": task_id, "prompt": "/say resumed"}
        )
        done = await asyncio.to_thread(wait_for, lambda: second_turn_ended(transcript(topology, 0, session_id)))
    finally:
        topology.start(topology.roles[owner])  # the rest of the module keeps two workers
    assert [t["state"] for t in done["turns"]] == ["FAILED", "COMPLETED"]
    assert "resumed" in texts(done, "AGENT")
    assert await turn_workers(topology, session_id) == [owner, other]
    prompts = [json.loads(line)["prompt"] for line in log.read_text().splitlines()]
    operator_words = [CONTEXT_BLOCK.sub("", p).strip() for p in prompts]
    assert operator_words == [first_prompt, "/say resumed"]  # the killed turn's prompt is never sent again
    # The fresh agent on the other worker resumed the conversation (synthesized history: no session/load).
    assert "The conversation so far" in prompts[1] and "started" in prompts[1]
    print(f"\ntopology: killed worker's turn reaped after {reap_seconds:.1f}s (lease 3s)")


CREATE_REPOSITORY = mutation("createRepository", "CreateRepositoryInput", "RepositoryPayload", "repository { id }")
CHANGES = """query($id: ID!) { task(id: $id) { changes { repositories { note stats { files additions }
  files { nodes { path status hunks { lines { kind text } } } } } } } }"""


async def test_a_replica_without_the_worktree_reads_changes_through_the_worker_holding_it(
    topology: Topology, tmp_path: Path
):
    """A third replica on another machine (no working trees) answers Task.changes by asking the worker that
    holds the task's worktree; with that worker gone it answers UNAVAILABLE naming it, within the 5 s wait."""
    source = make_repository(topology.home / "sources" / "changes-repo")
    repository = await asyncio.to_thread(
        topology.mutate,
        0,
        CREATE_REPOSITORY,
        "createRepository",
        i={"workspaceId": topology.workspace_id, "name": "changes-repo", "path": str(source)},
    )
    task_id = (
        await asyncio.to_thread(
            served_task,
            partial(topology.mutate, 0),
            topology.workspace_id,
            "Changes elsewhere",
            repositories=[{"repositoryId": repository["repository"]["id"]}],
        )
    )["id"]
    started = await asyncio.to_thread(
        topology.mutate,
        0,
        START_TASK,
        "startTask",
        i={"taskId": task_id, "prompt": "/write notes.txt\nhello\nthere\n/end-write\n/say written"},
    )
    session_id = started["session"]["id"]
    await asyncio.to_thread(wait_for, lambda: "written" in texts(transcript(topology, 0, session_id), "AGENT"))
    [owner] = await turn_workers(topology, session_id)
    assert owner is not None
    elsewhere = topology.add_replica("serve-elsewhere", work_dir=tmp_path / "no-worktrees-here")
    try:
        [repo] = (await asyncio.to_thread(topology.gql, elsewhere, CHANGES, id=task_id))["task"]["changes"][
            "repositories"
        ]
        assert repo["note"] is None and repo["stats"] == {"files": 1, "additions": 2}
        [file] = repo["files"]["nodes"]
        assert (file["path"], file["status"]) == ("notes.txt", "ADDED")
        assert [x["text"] for x in file["hunks"][0]["lines"]] == ["hello", "there"]

        topology.kill(owner)
        try:
            began = time.monotonic()
            with pytest.raises(GraphQLError) as refused:
                await asyncio.to_thread(topology.gql, elsewhere, CHANGES, id=task_id)
            waited = time.monotonic() - began
        finally:
            topology.start(topology.roles[owner])  # the rest of the module keeps two workers
    finally:
        topology.remove_replica("serve-elsewhere")
    assert "UNAVAILABLE" in str(refused.value) and owner in str(refused.value)
    assert 4.5 <= waited < 10


def test_a_replica_killed_mid_burst_loses_no_acknowledged_create(topology: Topology):
    acknowledged: list[str] = []
    stop_at = time.monotonic() + 20

    def burst(lane: int) -> None:
        with httpx.Client(timeout=10) as http:
            for n in range(10_000):
                if time.monotonic() > stop_at:
                    return
                try:
                    response = http.post(
                        f"{topology.replicas[1]}/graphql",
                        json={
                            "query": CREATE_TASK,
                            "variables": {"i": {"workspaceId": topology.workspace_id, "title": f"burst {lane}-{n}"}},
                        },
                        headers={"Authorization": f"Bearer {topology.token}"},
                    )
                except httpx.HTTPError:
                    return  # the replica is gone: what it did not answer was never acknowledged
                if response.status_code == 200:
                    acknowledged.append(response.json()["data"]["createTask"]["task"]["id"])

    with ThreadPoolExecutor(4) as pool:
        lanes = [pool.submit(burst, lane) for lane in range(4)]
        wait_for(lambda: len(acknowledged) >= 20, timeout=30, every=0.01)
        topology.kill("serve-2")
        for lane in lanes:
            lane.result(timeout=30)
    try:
        query = "query($w: ID!, $after: String) { tasks(workspaceId: $w, first: 500, after: $after) { nodes { id }"
        query += " pageInfo { hasNextPage endCursor } } }"
        present: set[str] = set()
        after = None
        while True:
            page = topology.gql(0, query, w=topology.workspace_id, after=after)["tasks"]
            present |= {n["id"] for n in page["nodes"]}
            if not page["pageInfo"]["hasNextPage"]:
                break
            after = page["pageInfo"]["endCursor"]
    finally:
        topology.start(topology.roles["serve-2"])
    assert len(acknowledged) >= 20
    assert set(acknowledged) <= present, set(acknowledged) - present
    print(f"\ntopology: {len(acknowledged)} acknowledged creates before kill -9 of a replica, all present")
