"""workspaceEvents over a real WebSocket with KANDEV_AUTH=on: each configuration change of a workspace reaches
its owner once, after commit, as a kind and an id; another user hears nothing of it. A personal access token
issued or revoked reaches its owner's tabs, whatever workspace they have open, and nobody else."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from kandev.domain.access.tokens import create_token, hash_token
from kandev.domain.errors import ConflictError
from kandev.domain.mcp.rules import McpServerFields
from kandev.domain.services import Services
from kandev.domain.tasks.service import CreateTask
from kandev.domain.workflow.service import StepFields
from kandev.domain.workspace.agent_profiles import AgentProfileFields
from kandev.models.enums import ExecutorKind, McpScope, McpServerKind
from kandev.platform.event_bus import server_settings_channel
from kandev.platform.settings import Settings
from tests.support.factories import settings_for
from tests.support.graphql_ws import GraphQLWebSocket
from tests.support.server import running_server

SUBSCRIPTION = "subscription($ws: ID!) { workspaceEvents(workspaceId: $ws) { kind id } }"


@pytest.fixture
def settings(database_url: str, redis_url: str, tmp_path: Path) -> Settings:
    return settings_for(database_url, redis_url, tmp_path, auth="on")


async def _socket(address: str, services: Services, login: str) -> GraphQLWebSocket:
    token = (await create_token(services.ctx.db, name="tab", login=login)).token
    return await GraphQLWebSocket.open(address, {"Authorization": f"Bearer {token}"})


async def _next(ws: GraphQLWebSocket) -> dict[str, Any]:
    message = await asyncio.wait_for(ws.next_message(), timeout=10)
    assert message["type"] == "next", message
    event: dict[str, Any] = message["payload"]["data"]["workspaceEvents"]
    return event


async def test_each_configuration_change_reaches_the_owner_once_and_never_another_user(
    settings, services, workspace_id, bob, bob_workspace
):
    workflow = (await services.workflows.list_for_workspace(workspace_id))[0]
    profile = (await services.agent_profiles.list(workspace_id))[0]
    async with running_server(settings) as address:
        mine = await _socket(address, services, "local")
        bobs = await _socket(address, services, "bob")
        try:
            await mine.listen(SUBSCRIPTION, ws=workspace_id)
            await bobs.listen(SUBSCRIPTION, ws=bob_workspace)

            step = await services.workflows.create_step(workflow.id, StepFields(name="Security check"))
            secret = await services.secrets.create(workspace_id, "API_KEY", "s3cr3t-value")
            await services.agent_profiles.update(profile.id, AgentProfileFields(name="Renamed"))
            await services.workspaces.update(workspace_id, name="Mine, renamed")
            # A refused change is rolled back: nothing is told.
            with pytest.raises(ConflictError):
                await services.secrets.create(workspace_id, "API_KEY", "a-second-s3cr3t-value")
            await services.secrets.delete(secret.id)
            # The change Bob can see: the first thing his tab hears, so none of the above reached him.
            bobs_secret = await bob.secrets.create(bob_workspace, "BOBS", "bob-value")

            heard = [await _next(mine) for _ in range(5)]
            bob_heard = await _next(bobs)
        finally:
            await mine.close()
            await bobs.close()
    assert heard == [
        {"kind": "WORKFLOW", "id": workflow.id},
        {"kind": "SECRET", "id": secret.id},
        {"kind": "AGENT_PROFILE", "id": profile.id},
        {"kind": "WORKSPACE", "id": workspace_id},
        {"kind": "SECRET", "id": secret.id},
    ]
    assert step.step is not None
    assert bob_heard == {"kind": "SECRET", "id": bobs_secret.id}


async def test_selecting_and_deselecting_an_mcp_server_at_a_task_tells_the_workspace_which_server(
    settings, services, workspace_id
):
    """The session and scope MCP panels reload on it: a selection made in another tab shows at once."""
    server = await services.mcp_servers.create(
        workspace_id, McpServerFields(name="docs", kind=McpServerKind.REMOTE, url="https://docs.example/mcp")
    )
    task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Uses docs"))).task
    async with running_server(settings) as address:
        mine = await _socket(address, services, "local")
        try:
            await mine.listen(SUBSCRIPTION, ws=workspace_id)
            await services.mcp_selections.select(server.id, McpScope.TASK, task.id)
            await services.mcp_selections.deselect(server.id, McpScope.TASK, task.id)
            heard = [await _next(mine) for _ in range(2)]
        finally:
            await mine.close()
    assert heard == [{"kind": "MCP_SERVER", "id": server.id}] * 2


async def test_a_non_member_subscribing_to_someone_elses_workspace_gets_not_found_and_no_events(
    settings, services, workspace_id, bob
):
    async with running_server(settings) as address:
        bobs = await _socket(address, services, "bob")
        try:
            await bobs.subscribe(SUBSCRIPTION, ws=workspace_id)
            message = await asyncio.wait_for(bobs.next_message(), timeout=10)
        finally:
            await bobs.close()
    assert message["payload"]["data"] is None
    assert message["payload"]["errors"][0]["message"] == "workspace not found"


async def test_a_new_workspace_is_told_only_to_its_owner_and_a_server_wide_profile_to_everyone(
    settings, services, workspace_id, bob, bob_workspace
):
    async with running_server(settings) as address:
        mine = await _socket(address, services, "local")
        bobs = await _socket(address, services, "bob")
        try:
            await mine.listen(SUBSCRIPTION, ws=workspace_id)
            await bobs.listen(SUBSCRIPTION, ws=bob_workspace)
            created = await bob.workspaces.create("Bob's second")
            # Executor profiles are listed by every member (only admins write them): all hear of the change.
            shared = await services.executor_profiles.create(None, "Scratch for all", ExecutorKind.SCRATCH)
            bob_heard = [await _next(bobs), await _next(bobs)]
            my_first = await _next(mine)
        finally:
            await mine.close()
            await bobs.close()
    assert bob_heard == [{"kind": "WORKSPACE", "id": created.id}, {"kind": "EXECUTOR_PROFILE", "id": shared.id}]
    assert my_first == {"kind": "EXECUTOR_PROFILE", "id": shared.id}


async def test_an_access_token_issued_or_revoked_is_told_to_its_owner_in_every_workspace_and_never_another_user(
    settings, services, workspace_id, bob, bob_workspace
):
    second = await services.workspaces.create("My second")  # told before anyone listens
    async with running_server(settings) as address:
        mine = await _socket(address, services, "local")
        my_other_tab = await _socket(address, services, "local")
        bobs = await _socket(address, services, "bob")
        try:
            await mine.listen(SUBSCRIPTION, ws=workspace_id)
            await my_other_tab.listen(SUBSCRIPTION, ws=second.id)
            await bobs.listen(SUBSCRIPTION, ws=bob_workspace)

            issued = await services.access_tokens.create("laptop-7c2e")
            await services.access_tokens.revoke(issued.info.id)
            await services.access_tokens.revoke(issued.info.id)  # already revoked: nothing changes, nothing told
            bobs_token = await bob.access_tokens.create("bobs-laptop-91d4")
            # Something my tab hears next: Bob's token would have come before it.
            secret = await services.secrets.create(workspace_id, "API_KEY", "s3cr3t-value-5b1f")

            heard = [await _next(mine) for _ in range(3)]
            other_tab_heard = [await _next(my_other_tab) for _ in range(2)]
            bob_heard = await _next(bobs)
        finally:
            await mine.close()
            await my_other_tab.close()
            await bobs.close()
    token = {"kind": "ACCESS_TOKEN", "id": issued.info.id}
    assert heard == [token, token, {"kind": "SECRET", "id": secret.id}]
    assert other_tab_heard == [token, token]
    assert bob_heard == {"kind": "ACCESS_TOKEN", "id": bobs_token.info.id}


async def test_an_access_token_event_carries_its_kind_id_and_owner_never_its_text_or_hash(services, principal):
    async with services.ctx.bus.subscribe(server_settings_channel()) as events:
        issued = await services.access_tokens.create("desktop-0a6d")
        payload = await asyncio.wait_for(anext(events), timeout=10)
    assert payload == {"kind": "ACCESS_TOKEN", "id": issued.info.id, "owner_id": principal.user_id}
    assert issued.token not in json.dumps(payload) and hash_token(issued.token) not in json.dumps(payload)
