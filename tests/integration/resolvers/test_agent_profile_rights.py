"""With KANDEV_AUTH=on only admins decide what the machine runs: agent kinds, commands and env, and
server-wide profiles, which every workspace lists and may start tasks with."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from sqlalchemy import select

from kandev.domain.services import Services
from kandev.domain.sessions.turn_setup import prepare_turn
from kandev.domain.sessions.turns import claim_turn
from kandev.domain.tasks.service import CreateTask
from kandev.models import AgentProfile, Session
from tests.conftest import GraphQLCaller
from tests.support.factories import settings_for

PROFILE = "id name kind command env supportsMcp permissionPolicy serverWide workspaceId"
CREATE = f"""mutation($i: CreateAgentProfileInput!) {{ createAgentProfile(input: $i) {{ __typename
  ... on CreateAgentProfilePayload {{ agentProfile {{ {PROFILE} }} }} ... on Error {{ code message }} }} }}"""
UPDATE = f"""mutation($i: UpdateAgentProfileInput!) {{ updateAgentProfile(input: $i) {{ __typename
  ... on AgentProfilePayload {{ agentProfile {{ {PROFILE} }} }} ... on Error {{ code message }} }} }}"""
DELETE = """mutation($id: ID!) { deleteAgentProfile(agentProfileId: $id) { __typename ... on Error { code } } }"""
LIST = f"query($ws: ID!) {{ agentProfiles(workspaceId: $ws) {{ {PROFILE} builtin }} }}"
RUNNABLE = [sys.executable, "-c", "pass"]


@pytest.fixture
def settings(database_url, redis_url, tmp_path):
    return settings_for(database_url, redis_url, tmp_path, auth="on")


async def snapshot(services: Services) -> list[tuple[Any, ...]]:
    async with services.ctx.db.read() as session:
        rows = await session.scalars(select(AgentProfile).order_by(AgentProfile.id))
        return [
            (p.id, p.workspace_id, p.name, p.kind, list(p.command), dict(p.env), p.supports_mcp, p.permission_policy)
            for p in rows
        ]


async def preset(gql: GraphQLCaller, workspace_id: str, name: str) -> dict[str, Any]:
    return next(p for p in (await gql(LIST, ws=workspace_id))["agentProfiles"] if p["name"] == name)


@pytest.mark.parametrize(
    "fields",
    [
        {"kind": "ACP", "command": RUNNABLE},
        {"command": RUNNABLE},
        {"kind": "SCRIPTED", "command": RUNNABLE},
        {"kind": "SCRIPTED", "env": {"PYTHONSTARTUP": "/tmp/evil.py"}},
    ],
    ids=["acp-with-command", "default-kind", "scripted-with-command", "scripted-with-env"],
)
async def test_a_non_admin_cannot_create_a_profile_with_a_kind_command_or_env_and_nothing_is_stored(
    services, bob, bob_workspace, fields
):
    before = await snapshot(services)
    answer = await GraphQLCaller(bob)(CREATE, i={"workspaceId": bob_workspace, "name": "Mine", **fields})
    assert answer["createAgentProfile"]["__typename"] == "PermissionDeniedError"
    assert answer["createAgentProfile"]["code"] == "PERMISSION_DENIED"
    assert await snapshot(services) == before


@pytest.mark.parametrize(
    "change",
    [{"command": RUNNABLE}, {"env": {"NODE_OPTIONS": "--require /tmp/evil.js"}}, {"kind": "SCRIPTED"}],
    ids=["command", "env", "kind"],
)
async def test_a_non_admin_cannot_change_the_kind_command_or_env_of_their_own_profile(
    services, bob, bob_workspace, change
):
    gql = GraphQLCaller(bob)
    claude = await preset(gql, bob_workspace, "Claude Code")
    before = await snapshot(services)
    answer = (await gql(UPDATE, i={"agentProfileId": claude["id"], "name": "Renamed", **change}))["updateAgentProfile"]
    assert answer["__typename"] == "PermissionDeniedError"
    assert await snapshot(services) == before


async def test_a_non_admin_creates_a_scripted_profile_and_renames_or_sets_the_policy_of_their_own(bob, bob_workspace):
    gql = GraphQLCaller(bob)
    created = await gql(CREATE, i={"workspaceId": bob_workspace, "name": "Echo", "kind": "SCRIPTED"})
    profile = created["createAgentProfile"]["agentProfile"]
    assert profile["kind"] == "SCRIPTED" and profile["command"] == [] and profile["env"] == {}
    assert profile["workspaceId"] == bob_workspace and profile["serverWide"] is False
    claude = await preset(gql, bob_workspace, "Claude Code")
    # The web client may send the form's unchanged command along: that sets nothing.
    same = {"command": claude["command"], "env": claude["env"], "kind": "ACP"}
    changed = await gql(
        UPDATE, i={"agentProfileId": claude["id"], "name": "Claude", "permissionPolicy": "DENY", **same}
    )
    expected = {k: v for k, v in claude.items() if k != "builtin"} | {"name": "Claude", "permissionPolicy": "DENY"}
    assert changed["updateAgentProfile"]["agentProfile"] == expected
    assert (await gql(DELETE, id=profile["id"]))["deleteAgentProfile"]["__typename"] == "AgentProfilePayload"


async def test_only_an_admin_defines_server_wide_profiles(services, gql, bob, bob_workspace):
    before = await snapshot(services)
    fields = {"workspaceId": None, "name": "Team Scripted", "kind": "SCRIPTED"}
    refused = await GraphQLCaller(bob)(CREATE, i=fields)
    assert refused["createAgentProfile"]["__typename"] == "PermissionDeniedError"
    assert await snapshot(services) == before
    made = (await gql(CREATE, i=fields))["createAgentProfile"]
    assert made["__typename"] == "CreateAgentProfilePayload"
    assert made["agentProfile"]["serverWide"] is True and made["agentProfile"]["workspaceId"] is None
    twice = await gql(CREATE, i=fields)
    assert twice["createAgentProfile"]["__typename"] == "ConflictError"


async def test_omitting_the_workspace_is_a_validation_error_not_a_server_wide_profile(services, gql):
    before = await snapshot(services)
    answer = await gql(CREATE, i={"name": "Oops", "kind": "SCRIPTED"})
    assert answer["createAgentProfile"]["__typename"] == "ValidationError"
    assert await snapshot(services) == before


async def test_an_admins_server_wide_profile_is_listed_in_another_users_workspace_and_starts_their_task(
    services, gql, workspace_id, bob, bob_workspace
):
    made = await gql(
        CREATE,
        i={"workspaceId": None, "name": "Team agent", "kind": "ACP", "command": RUNNABLE, "env": {"K": "${secret:K}"}},
    )
    shared = made["createAgentProfile"]["agentProfile"]
    listed = (await GraphQLCaller(bob)(LIST, ws=bob_workspace))["agentProfiles"]
    assert {p["name"] for p in listed} >= {"Scripted", "Claude Code", "Team agent"}
    assert [p["serverWide"] for p in listed if p["id"] == shared["id"]] == [True]
    assert all(p["workspaceId"] == bob_workspace for p in listed if p["id"] != shared["id"])

    # The profile's secret reference resolves in the task's workspace, never the admin's.
    await services.secrets.create(workspace_id, "K", "the-admins-value")
    await bob.secrets.create(bob_workspace, "K", "bobs-own-value")
    task = (await bob.tasks.create(CreateTask(workspace_id=bob_workspace, title="Uses the team agent"))).task
    started = await bob.sessions.start_task(task.id, "hi", shared["id"])
    async with services.ctx.db.read() as session:
        row = await session.get(Session, started.session.id)
        assert row is not None and row.agent_profile_id == shared["id"]
    claimed = await claim_turn(bob.ctx, started.session.id, worker_name="t", job_id=None, lease_seconds=60)
    setup = await prepare_turn(bob.ctx, claimed)
    assert setup.argv == RUNNABLE and setup.env["K"] == "bobs-own-value" and setup.secrets == ["bobs-own-value"]

    pinned = await bob.tasks.create(
        CreateTask(workspace_id=bob_workspace, title="Pinned", agent_profile_id=shared["id"])
    )
    assert pinned.task.agent_profile_id == shared["id"]


async def test_a_non_admin_cannot_change_or_delete_a_server_wide_profile(services, gql, bob):
    made = await gql(CREATE, i={"workspaceId": None, "name": "Team", "kind": "SCRIPTED"})
    shared_id = made["createAgentProfile"]["agentProfile"]["id"]
    before = await snapshot(services)
    bobs = GraphQLCaller(bob)
    renamed = await bobs(UPDATE, i={"agentProfileId": shared_id, "name": "Mine now", "permissionPolicy": "ALLOW"})
    assert renamed["updateAgentProfile"]["__typename"] == "PermissionDeniedError"
    assert (await bobs(DELETE, id=shared_id))["deleteAgentProfile"]["__typename"] == "PermissionDeniedError"
    assert await snapshot(services) == before
    admin_rename = await gql(UPDATE, i={"agentProfileId": shared_id, "name": "Team 2"})
    assert admin_rename["updateAgentProfile"]["agentProfile"]["name"] == "Team 2"


async def test_a_workspace_profile_of_another_user_stays_not_found(services, gql, bob, bob_workspace):
    claude = await preset(GraphQLCaller(bob), bob_workspace, "Claude Code")
    before = await snapshot(services)
    # The admin has no rights in bob's workspace beyond what the machine runs: it is not theirs.
    answer = await gql(UPDATE, i={"agentProfileId": claude["id"], "command": RUNNABLE})
    assert answer["updateAgentProfile"]["__typename"] == "NotFoundError"
    assert await snapshot(services) == before


async def test_an_admins_agent_session_has_no_admin_rights(services, workspace_id):
    from kandev.domain.context import Principal

    task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="T"))).task
    session = (await services.sessions.start_task(task.id, "hi", None)).session
    agent = Principal(
        user_id=services.principal.user_id, login="agent", session_id=session.id, task_id=task.id, admin=True
    )
    before = await snapshot(services)
    answer = await GraphQLCaller(Services(services.ctx.with_principal(agent)))(
        CREATE, i={"workspaceId": workspace_id, "name": "Agent made", "kind": "ACP", "command": RUNNABLE}
    )
    assert answer["createAgentProfile"]["__typename"] == "PermissionDeniedError"
    assert await snapshot(services) == before


async def test_non_admins_see_a_server_wide_profiles_secret_references_but_not_its_literal_values(
    gql, bob, bob_workspace
):
    env = {"API_KEY": "${secret:API_KEY}", "PROXY": "https://admin:hunter2@proxy", "AUTH": "Bearer ${secret:T}"}
    made = await gql(CREATE, i={"workspaceId": None, "name": "Shared", "kind": "ACP", "command": RUNNABLE, "env": env})
    assert made["createAgentProfile"]["agentProfile"]["env"] == env
    seen = next(p for p in (await GraphQLCaller(bob)(LIST, ws=bob_workspace))["agentProfiles"] if p["name"] == "Shared")
    assert seen["env"] == {"API_KEY": "${secret:API_KEY}", "PROXY": "[REDACTED]", "AUTH": "[REDACTED]${secret:T}"}
