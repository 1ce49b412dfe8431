"""What an agent writes through its tools is stored without the secrets its environment holds."""

from __future__ import annotations

from typing import Any

from kandev.domain.context import Principal
from kandev.edge.mcp_bridge.surface import McpCaller
from tests.integration.mcp_bridge.conftest import call_tool
from tests.support.factories import new_agent_profile, new_task

SECRET = "sk-live-agent-knows-0123456789"


async def agent_with_secret(services: Any, workspace_id: str) -> McpCaller:
    """A live session whose agent profile puts SECRET in the agent's env."""
    await services.secrets.create(workspace_id, "API_KEY", SECRET)
    profile = await new_agent_profile(services, workspace_id, "With key", env={"API_KEY": "${secret:API_KEY}"})
    task_id = await new_task(services, workspace_id, "Parent")
    session = (await services.sessions.start_task(task_id, "hi", profile.id)).session
    agent = Principal(
        user_id=services.principal.user_id,
        login="agent",
        session_id=session.id,
        task_id=task_id,
        workspace_id=workspace_id,
    )
    return McpCaller(principal=agent, endpoint="session", session_id=session.id, task_id=task_id)


async def test_a_sessions_create_task_with_a_secret_in_title_and_prompt_stores_redacted(
    tool_surface, services, workspace_id
):
    agent = await agent_with_secret(services, workspace_id)
    error, created = await call_tool(
        tool_surface,
        agent,
        "create_task_kandev",
        title=f"Rotate {SECRET}",
        prompt=f"use key {SECRET} then {SECRET[:6]}",
        parent_id="self",
        start_agent=False,
    )
    assert not error, created
    task = await services.tasks.get(created["id"])
    assert task.title == "Rotate [REDACTED]"
    assert task.prompt == f"use key [REDACTED] then {SECRET[:6]}"

    error, _ = await call_tool(tool_surface, agent, "update_task_kandev", task_id=created["id"], title=f"x{SECRET}x")
    assert not error
    assert (await services.tasks.get(created["id"])).title == "x[REDACTED]x"


async def test_an_external_caller_and_a_session_without_secrets_write_text_unchanged(
    tool_surface, services, workspace_id, external
):
    error, created = await call_tool(
        tool_surface, external, "create_task_kandev", workspace_id=workspace_id, title=f"Mine {SECRET}"
    )
    assert not error, created
    assert (await services.tasks.get(created["id"])).title == f"Mine {SECRET}"
