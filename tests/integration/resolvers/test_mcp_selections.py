"""Selecting workspace MCP servers over GraphQL: what a scope selects, a session's effective set with every origin,
and a narrower scope that can only add (removing an inherited server there is a typed conflict that changes nothing)."""

from __future__ import annotations

from sqlalchemy import Select, select

from kandev.domain.tasks.service import CreateTask
from kandev.models import McpServerSelection
from tests.conftest import GraphQLCaller
from tests.support.factories import new_agent_profile

CREATE = """mutation($i: CreateMcpServerInput!) { createMcpServer(input: $i) { __typename
  ... on McpServerPayload { mcpServer { id name } } ... on Error { code message } } }"""
SELECT = """mutation($i: McpSelectionInput!) { selectMcpServer(input: $i) { __typename
  ... on McpServerPayload { mcpServer { name } } ... on Error { code message fields } } }"""
DESELECT = """mutation($i: McpSelectionInput!) { deselectMcpServer(input: $i) { __typename
  ... on McpServerPayload { mcpServer { name } } ... on Error { code message fields } } }"""
SELECTED = "query($s: McpScope!, $t: ID!) { selectedMcpServers(scope: $s, targetId: $t) { name } }"
SESSION = """query($id: ID!) { sessionMcpServers(sessionId: $id) { desiredRevision appliedRevision
  servers { name kind origins { scope id } } } }"""


async def test_a_session_gets_the_union_of_its_scopes_and_cannot_remove_what_it_inherits(services, workspace_id):
    gql = GraphQLCaller(services)
    remote = {"workspaceId": workspace_id, "kind": "REMOTE", "url": "https://mcp.example.test/mcp"}
    docs = (await gql(CREATE, i={**remote, "name": "docs"}))["createMcpServer"]["mcpServer"]
    notes = (await gql(CREATE, i={**remote, "name": "notes"}))["createMcpServer"]["mcpServer"]
    created = await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Scoped"))
    task_id = created.task.id
    started = await services.sessions.start_task(task_id, None, None)
    session_id = started.session.id
    profile_id = started.session.agent_profile_id

    def selection(server: dict[str, str], scope: str, target: str) -> dict[str, str]:
        return {"mcpServerId": server["id"], "scope": scope, "targetId": target}

    for args in (
        selection(docs, "PROFILE", profile_id),
        selection(docs, "TASK", task_id),
        selection(notes, "SESSION", session_id),
    ):
        assert (await gql(SELECT, i=args))["selectMcpServer"]["__typename"] == "McpServerPayload"
    assert (await gql(SELECTED, s="TASK", t=task_id))["selectedMcpServers"] == [{"name": "docs"}]
    effective = (await gql(SESSION, id=session_id))["sessionMcpServers"]
    assert effective["servers"] == [
        {
            "name": "docs",
            "kind": "REMOTE",
            "origins": [{"scope": "PROFILE", "id": profile_id}, {"scope": "TASK", "id": task_id}],
        },
        {"name": "notes", "kind": "REMOTE", "origins": [{"scope": "SESSION", "id": session_id}]},
    ]
    assert effective["desiredRevision"] >= 1 and effective["appliedRevision"] == 0

    refused = (await gql(DESELECT, i=selection(docs, "SESSION", session_id)))["deselectMcpServer"]
    assert refused["__typename"] == "ConflictError"
    assert refused["fields"] == {"field": "scope", "inherited_from": "PROFILE", "reason": "inherited"}
    assert (await gql(DESELECT, i=selection(docs, "TASK", task_id)))["deselectMcpServer"]["__typename"] == (
        "McpServerPayload"
    )
    still = (await gql(SESSION, id=session_id))["sessionMcpServers"]["servers"]
    assert [(s["name"], [o["scope"] for o in s["origins"]]) for s in still] == [
        ("docs", ["PROFILE"]),
        ("notes", ["SESSION"]),
    ]
    unknown = (await gql(DESELECT, i=selection(notes, "TASK", task_id)))["deselectMcpServer"]
    assert unknown["__typename"] == "NotFoundError"


async def test_deleting_an_agent_profile_removes_its_selections(services, workspace_id):

    gql = GraphQLCaller(services)
    remote = {"workspaceId": workspace_id, "kind": "REMOTE", "url": "https://mcp.example.test/mcp", "name": "docs"}
    docs = (await gql(CREATE, i=remote))["createMcpServer"]["mcpServer"]
    profile = await new_agent_profile(services, workspace_id, "Short-lived")
    await gql(SELECT, i={"mcpServerId": docs["id"], "scope": "PROFILE", "targetId": profile.id})
    await services.agent_profiles.delete(profile.id)
    async with services.ctx.db.read() as db:
        left = await db.execute(select_target(profile.id))
        assert left.first() is None


def select_target(target_id: str) -> Select[tuple[str]]:
    return select(McpServerSelection.id).where(McpServerSelection.target_id == target_id)
