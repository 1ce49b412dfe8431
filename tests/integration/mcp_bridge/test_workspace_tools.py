"""create_workspace_kandev on the configuration surface, through the in-process tool surface."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kandev.domain.sessions.tool_profiles import McpProfile, Surface
from kandev.edge.mcp_bridge.surface import McpCaller
from tests.integration.mcp_bridge.conftest import call_tool
from tests.support.factories import settings_for
from tests.support.users import services_as


@pytest.fixture
def settings(database_url, redis_url, tmp_path):
    return settings_for(database_url, redis_url, tmp_path, auth="on")


def test_the_configuration_and_external_surfaces_offer_create_workspace_and_task_sessions_do_not():
    assert "create_workspace_kandev" in McpProfile(Surface.CONFIGURATION).tool_names()
    assert "create_workspace_kandev" in McpProfile(Surface.EXTERNAL).tool_names()
    assert "create_workspace_kandev" not in McpProfile(Surface.KANBAN_TASK).tool_names()


async def test_a_second_user_creates_a_workspace_through_the_tool_and_can_use_it(surface, services):
    bob = await services_as(services, "bob")
    caller = McpCaller(principal=bob.principal, endpoint="external")
    error, created = await call_tool(surface, caller, "create_workspace_kandev", name="Bob's")
    assert not error, created
    assert created["name"] == "Bob's" and created["id"] and created["default_workflow_id"]
    error, listed = await call_tool(surface, caller, "list_workspaces_kandev")
    assert listed["workspaces"] == [created]
    error, agents = await call_tool(surface, caller, "list_agents_kandev", workspace_id=created["id"])
    assert not error and "Scripted" in {a["name"] for a in agents["agents"]}


async def test_a_blank_name_is_a_tool_error_that_creates_nothing(surface, services):
    bob = await services_as(services, "bob")
    caller = McpCaller(principal=bob.principal, endpoint="external")
    error, answer = await call_tool(surface, caller, "create_workspace_kandev", name="   ")
    assert error and answer["code"] == "VALIDATION"
    error, missing = await call_tool(surface, caller, "create_workspace_kandev")
    assert error and missing["code"] == "INVALID_ARGUMENTS"
    assert (await bob.workspaces.list()) == []


async def test_an_agent_session_on_the_configuration_surface_cannot_create_a_workspace(surface, services):
    bob = await services_as(services, "bob")
    workspace = await bob.workspaces.create("Bob's")
    agent = replace(bob.principal, login="agent", session_id="s-1", task_id="t-1", workspace_id=workspace.id)
    caller = McpCaller(principal=agent, endpoint="session", profile=McpProfile(Surface.CONFIGURATION))
    error, answer = await call_tool(surface, caller, "create_workspace_kandev", name="Outside")
    assert error and answer["code"] == "PERMISSION_DENIED"
    assert [w.name for w in await bob.workspaces.list()] == ["Bob's"]
