"""Two users, auth on, every surface: GraphQL queries, mutations and subscriptions, REST and /mcp. Bob naming
Alice's workspace, task, session, workflow, step or agent profile gets exactly what an unknown id gets (not found,
nothing more), sees none of it and changes none of it."""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from kandev.domain.access.tokens import create_token
from kandev.domain.services import Services
from kandev.platform.database import Database
from kandev.platform.settings import Settings
from tests.integration.mcp_transport.conftest import MODERN, mcp_client
from tests.support.counts import row_counts
from tests.support.factories import settings_for, started_task
from tests.support.graphql_ws import GraphQLWebSocket
from tests.support.server import running_server
from tests.support.session_tokens import launch_token
from tests.support.users import services_as

pytestmark = [pytest.mark.reliability, pytest.mark.slow]

ERR = "__typename ... on Error { code message }"
BOB = '"Bob"'
QUERIES = {
    "workspace": [
        "query($id: ID!) { workflows(workspaceId: $id) { id } }",
        "query($id: ID!) { tasks(workspaceId: $id) { totalCount nodes { id } } }",
        "query($id: ID!) { agentProfiles(workspaceId: $id) { id } }",
        "query($id: ID!) { executorProfiles(workspaceId: $id) { id } }",
        "query($id: ID!) { repositories(workspaceId: $id) { id } }",
        "query($id: ID!) { secrets(workspaceId: $id) { id } }",
        "query($id: ID!) { pendingQuestions(workspaceId: $id) { nodes { id } } }",
        "query($id: ID!) { pendingPermissions(workspaceId: $id) { id } }",
        "query($id: ID!) { agenda(workspaceId: $id) { recent { id } } }",
    ],
    "task": [
        "query($id: ID!) { task(id: $id) { id title } }",
        "query($id: ID!) { parentQuestions(taskId: $id) { id } }",
    ],
    "session": ["query($id: ID!) { session(id: $id) { id } }"],
    "workflow": [
        "query($id: ID!) { workflow(id: $id) { id } }",
        "query($id: ID!) { exportWorkflow(workflowId: $id) }",
    ],
}
MUTATIONS = {
    "workspace": [
        f'mutation($id: ID!) {{ updateWorkspace(input: {{workspaceId: $id, name: "Bob was here"}}) {{ {ERR} }} }}',
        f'mutation($id: ID!) {{ createTask(input: {{workspaceId: $id, title: "Bob was here"}}) {{ {ERR} }} }}',
        f'mutation($id: ID!) {{ createWorkflow(input: {{workspaceId: $id, name: "Bob"}}) {{ {ERR} }} }}',
        f'mutation($id: ID!) {{ createSecret(input: {{workspaceId: $id, name: "B", value: "v"}}) {{ {ERR} }} }}',
        f"mutation($id: ID!) {{ createAgentProfile(input: {{workspaceId: $id, name: {BOB}, kind: SCRIPTED}}) "
        f"{{ {ERR} }} }}",
    ],
    "task": [
        f'mutation($id: ID!) {{ updateTask(input: {{taskId: $id, title: "Bob was here"}}) {{ {ERR} }} }}',
        f"mutation($id: ID!, $step: ID!) {{ moveTask(input: {{taskId: $id, workflowStepId: $step}}) {{ {ERR} }} }}",
        f"mutation($id: ID!) {{ archiveTask(taskId: $id) {{ {ERR} }} }}",
        f"mutation($id: ID!) {{ deleteTask(taskId: $id) {{ {ERR} }} }}",
        f"mutation($id: ID!) {{ stopTask(taskId: $id) {{ {ERR} }} }}",
        f'mutation($id: ID!) {{ startTask(input: {{taskId: $id, prompt: "/say hi"}}) {{ {ERR} }} }}',
        f'mutation($id: ID!) {{ sendMessage(input: {{taskId: $id, prompt: "/say hi"}}) {{ {ERR} }} }}',
        f"mutation($id: ID!, $task: ID!) {{ addTaskDependency(input: {{taskId: $task, dependsOnTaskId: $id}}) "
        f"{{ {ERR} }} }}",
        f"mutation($id: ID!, $task: ID!) {{ addTaskDependency(input: {{taskId: $id, dependsOnTaskId: $task}}) "
        f"{{ {ERR} }} }}",
    ],
    "session": [f"mutation($id: ID!) {{ markStepComplete(sessionId: $id) {{ {ERR} }} }}"],
    "workflow": [
        f'mutation($id: ID!) {{ updateWorkflow(input: {{workflowId: $id, name: "Bob"}}) {{ {ERR} }} }}',
        f"mutation($id: ID!) {{ deleteWorkflow(workflowId: $id) {{ {ERR} }} }}",
        f'mutation($id: ID!) {{ createWorkflowStep(input: {{workflowId: $id, name: "Bob"}}) {{ {ERR} }} }}',
        f"mutation($id: ID!) {{ reorderWorkflowSteps(input: {{workflowId: $id, stepIds: []}}) {{ {ERR} }} }}",
    ],
    "step": [
        f'mutation($id: ID!) {{ updateWorkflowStep(input: {{stepId: $id, name: "Bob"}}) {{ {ERR} }} }}',
        f"mutation($id: ID!) {{ deleteWorkflowStep(stepId: $id) {{ {ERR} }} }}",
        f"mutation($id: ID!, $task: ID!) {{ moveTask(input: {{taskId: $task, workflowStepId: $id}}) {{ {ERR} }} }}",
    ],
    "profile": [
        f'mutation($id: ID!) {{ updateAgentProfile(input: {{agentProfileId: $id, name: "Bob"}}) {{ {ERR} }} }}',
        f"mutation($id: ID!) {{ deleteAgentProfile(agentProfileId: $id) {{ {ERR} }} }}",
    ],
}
FOLDER = {"type": "folder", "path": "/tmp"}
SUBSCRIPTIONS = {
    "workspace": "subscription($id: ID!) { taskEvents(workspaceId: $id) { kind } }",
    "session": "subscription($id: ID!) { sessionEvents(sessionId: $id) { kind } }",
}
# Tool arguments naming an entity, by kind; the others a tool needs are filled with Bob's own.
TOOL_ID_KINDS = {
    "workspace_id": "workspace",
    "task_id": "task",
    "parent_id": "task",
    "depends_on_task_id": "task",
    "session_id": "session",
    "workflow_id": "workflow",
    "workflow_step_id": "step",
    "step_id": "step",
    "agent_profile_id": "profile",
}


@dataclass
class Owned:
    workspace: str
    task: str
    session: str
    workflow: str
    step: str
    profile: str

    def of(self, kind: str) -> str:
        return str(getattr(self, kind))


async def owned(services: Services, workspace_id: str, title: str) -> Owned:
    task_id, session_id = await started_task(services, workspace_id, "/say hi", title)
    workflow = (await services.workflows.list_for_workspace(workspace_id))[0]
    steps = (await services.lookups.steps_by_workflow([workflow.id]))[0]
    profiles = [p for p in await services.agent_profiles.list(workspace_id) if p.workspace_id == workspace_id]
    return Owned(workspace_id, task_id, session_id, workflow.id, steps[0].id, profiles[0].id if profiles else "")


def normalised(value: Any, ids: dict[str, str]) -> Any:
    """The answer with the probed id (and any uuid) replaced, so Alice's id and an unknown id compare."""
    text = json.dumps(value, sort_keys=True)
    for real, placeholder in ids.items():
        text = text.replace(real, placeholder)
    return json.loads(re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "<uuid>", text))


@pytest.fixture
def settings(database_url: str, redis_url: str, tmp_path: Path) -> Settings:
    return settings_for(database_url, redis_url, tmp_path, auth="on")


@dataclass
class World:
    address: str
    alice: Owned
    bob: Owned
    alice_token: str
    bob_token: str
    bob_agent_token: str
    db: Database


@pytest.fixture
async def world(settings: Settings, services: Services, db: Database, workspace_id: str) -> AsyncIterator[World]:
    bob_services = await services_as(services, "bob")
    bob_workspace = (await bob_services.workspaces.create("Bob's")).id
    alice = await owned(services, workspace_id, "Alice's task")  # Alice is the bootstrap user, "local"
    bob = await owned(bob_services, bob_workspace, "Bob's task")
    alice_token = (await create_token(db, name="alice", login="local")).token
    bob_token = (await create_token(db, name="bob", login="bob")).token
    bob_agent_token = await launch_token(bob_services.ctx, bob.session)
    async with running_server(settings) as address:
        yield World(address, alice, bob, alice_token, bob_token, bob_agent_token, db)


def probes(world: World, kind: str) -> list[tuple[str, str]]:
    """(Alice's id, an unknown id) for a kind."""
    return [(world.alice.of(kind), str(uuid.uuid4()))]


async def graphql(http: httpx.AsyncClient, query: str, **variables: Any) -> dict[str, Any]:
    response = await http.post("/graphql", json={"query": query, "variables": variables})
    assert response.status_code == 200, response.text
    return response.json()


def not_found(answer: dict[str, Any]) -> bool:
    errors = answer.get("errors") or []
    if errors:
        return all((e.get("extensions") or {}).get("code") == "NOT_FOUND" for e in errors)
    payload = next(iter((answer.get("data") or {}).values()))
    return isinstance(payload, dict) and payload.get("__typename") == "NotFoundError"


async def test_bob_gets_not_found_for_alices_ids_in_every_graphql_query_and_mutation(world: World):
    before = await row_counts(world.db)
    checked = 0
    headers = {"Authorization": f"Bearer {world.bob_token}"}
    async with httpx.AsyncClient(base_url=f"http://{world.address}", headers=headers, timeout=20) as http:
        mine = (await graphql(http, "{ workspaces { id } }"))["data"]["workspaces"]
        assert [w["id"] for w in mine] == [world.bob.workspace]
        for documents in (QUERIES, MUTATIONS):
            for kind, queries in documents.items():
                for query in queries:
                    bobs = {"step": world.bob.step, "task": world.bob.task}
                    extra = {name: value for name, value in bobs.items() if f"${name}" in query}
                    for alices, unknown in probes(world, kind):
                        seen = await graphql(http, query, id=alices, **extra)
                        unseen = await graphql(http, query, id=unknown, **extra)
                        assert not_found(seen) or seen.get("data") in ({"exportWorkflow": None},), (query, seen)
                        assert normalised(seen, {alices: "<id>"}) == normalised(unseen, {unknown: "<id>"}), query
                        checked += 1
    assert await row_counts(world.db) == before
    assert checked == sum(len(q) for d in (QUERIES, MUTATIONS) for q in d.values())
    print(f"\n[reliability] auth isolation: {checked} GraphQL operations as Bob on Alice's ids, all not found")


async def test_bob_cannot_subscribe_to_alices_workspace_or_session(world: World):
    for kind, query in SUBSCRIPTIONS.items():
        answers = []
        for target in (world.alice.of(kind), str(uuid.uuid4())):
            socket = await GraphQLWebSocket.open(world.address, {"Authorization": f"Bearer {world.bob_token}"})
            try:
                await socket.subscribe(query, id=target)
                async with asyncio.timeout(10):
                    message = await socket.next_message()
            finally:
                await socket.close()
            answers.append(normalised({k: v for k, v in message.items() if k != "id"}, {target: "<id>"}))
        assert answers[0] == answers[1], kind
        assert answers[0]["type"] == "error" or answers[0]["payload"].get("errors"), answers[0]
    # Alice's own subscription works, so the refusal above is about Bob.
    socket = await GraphQLWebSocket.open(world.address, {"Authorization": f"Bearer {world.alice_token}"})
    try:
        await socket.listen(SUBSCRIPTIONS["workspace"], id=world.alice.workspace)
        async with httpx.AsyncClient(base_url=f"http://{world.address}", timeout=20) as http:
            headers = {"Authorization": f"Bearer {world.alice_token}"}
            rename = 'mutation($id: ID!) { updateTask(input: {taskId: $id, title: "Renamed"}) { __typename } }'
            response = await http.post(
                "/graphql", json={"query": rename, "variables": {"id": world.alice.task}}, headers=headers
            )
            assert response.json()["data"]["updateTask"]["__typename"] == "TaskPayload"
        async with asyncio.timeout(10):
            event = await socket.next_message()
        assert event["type"] == "next" and event["payload"]["data"]["taskEvents"]["kind"], event
    finally:
        await socket.close()
    print(f"\n[reliability] auth isolation: {len(SUBSCRIPTIONS)} subscriptions as Bob refused like unknown ids")


async def test_bob_gets_the_unknown_id_answer_for_alices_ids_over_rest(world: World):
    before = await row_counts(world.db)
    headers = {"Authorization": f"Bearer {world.bob_token}"}
    by_external_id = "/api/v1/workspaces/{id}/tasks/by-external-id"
    requests: list[tuple[str, str, str, Any]] = [
        ("POST", "/api/v1/tasks", "workspace", lambda i: {"json": {"workspace_id": i, "title": "Bob was here"}}),
        ("GET", by_external_id, "workspace", lambda i: {"params": {"external_id": "x"}}),
        ("DELETE", by_external_id, "workspace", lambda i: {"params": {"external_id": "x"}}),
        ("POST", "/api/v1/tasks/{id}/workspace-sources", "task", lambda i: {"json": {"sources": [FOLDER]}}),
        ("GET", "/api/v1/workspaces/{id}/automations/export", "workspace", lambda i: {}),
        ("GET", "/api/v1/workspaces/{id}/automations/export/zip", "workspace", lambda i: {}),
    ]
    async with httpx.AsyncClient(base_url=f"http://{world.address}", headers=headers, timeout=20) as http:
        for method, path, kind, body in requests:
            answers = []
            for target in (world.alice.of(kind), str(uuid.uuid4())):
                response = await http.request(method, path.format(id=target), **body(target))
                answers.append((response.status_code, normalised(response.json(), {target: "<id>"})))
            assert answers[0] == answers[1], (method, path, answers)
            assert answers[0][0] == 404, (method, path, answers[0])
    assert await row_counts(world.db) == before
    print(f"\n[reliability] auth isolation: {len(requests)} REST requests as Bob on Alice's ids, all 404")


def tool_arguments(tool: Any, probed: str, target: str, bob: Owned) -> dict[str, Any]:
    """The tool's required arguments (Bob's own ids, plain fillers), with `probed` naming `target`."""
    schema = tool.input_schema
    arguments: dict[str, Any] = {}
    for name in schema.get("required") or []:
        prop = schema["properties"][name]
        if name in TOOL_ID_KINDS and bob.of(TOOL_ID_KINDS[name]):
            arguments[name] = bob.of(TOOL_ID_KINDS[name])
        else:
            arguments[name] = {"string": "x", "array": [], "integer": 1, "boolean": False, "object": {}}.get(
                prop.get("type"), "x"
            )
    arguments[probed] = target
    return arguments


@pytest.mark.parametrize("endpoint", ["/mcp", "/mcp/session"])
async def test_bob_and_his_agent_get_the_unknown_id_answer_for_alices_ids_from_every_mcp_tool(world: World, endpoint):
    before = await row_counts(world.db)
    checked = found_nothing = 0
    token = world.bob_token if endpoint == "/mcp" else world.bob_agent_token
    async with mcp_client(f"http://{world.address}{endpoint}", MODERN, token) as client:
        if endpoint == "/mcp":
            listed = await client.call_tool("list_workspaces_kandev", {})
            assert [w["id"] for w in (listed.structured_content or {})["workspaces"]] == [world.bob.workspace]
        for tool in (await client.list_tools()).tools:
            for probed in tool.input_schema.get("properties", {}):
                if probed not in TOOL_ID_KINDS:
                    continue
                answers = []
                for target in (world.alice.of(TOOL_ID_KINDS[probed]), str(uuid.uuid4())):
                    result = await client.call_tool(tool.name, tool_arguments(tool, probed, target, world.bob))
                    answer = normalised(result.structured_content, {target: "<id>"})
                    if isinstance(answer, dict):
                        answer.pop("acked_at", None)  # a dry run's check time: the same answer, a moment later
                    answers.append(answer)
                assert answers[0] == answers[1], (tool.name, probed, answers)
                checked += 1
                found_nothing += answers[0].get("code") == "NOT_FOUND"
    assert await row_counts(world.db) == before
    assert checked > 15
    print(
        f"\n[reliability] auth isolation: {checked} {endpoint} tool arguments naming Alice's ids answered like "
        f"unknown ids ({found_nothing} NOT_FOUND; the rest the same validation error or empty filter)"
    )
