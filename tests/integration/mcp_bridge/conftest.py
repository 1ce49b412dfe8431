"""The in-process tool surface and callers for MCP tool tests."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from kandev.domain.access.session_grants import session_principal
from kandev.domain.context import Principal
from kandev.domain.tasks.service import CreateTask
from kandev.edge.mcp_bridge.surface import McpCaller
from kandev.edge.mcp_bridge.tool_surface import KandevToolSurface
from kandev.models.enums import TaskOrigin
from kandev.wiring import AppState
from tests.support.session_tokens import launch_token


@pytest.fixture
def tool_surface(settings, db, bus, redis_url, principal, jobs) -> KandevToolSurface:
    import redis.asyncio as aioredis

    state = AppState(
        settings=settings,
        db=db,
        bus=bus,
        redis=aioredis.from_url(redis_url),
        local_principal=principal,
        jobs=jobs,
    )
    return KandevToolSurface(lambda: state)


@pytest.fixture
def surface(tool_surface: KandevToolSurface) -> KandevToolSurface:
    return tool_surface


@pytest.fixture
def external(principal: Principal) -> McpCaller:
    """An external (/mcp) caller: the local user."""
    return McpCaller(principal=principal, endpoint="external")


async def agent_on(services: Any, task_id: str, prompt: str = "hi") -> McpCaller:
    """An agent caller with a live session on `task_id`."""
    session = (await services.sessions.start_task(task_id, prompt, None)).session
    workspace_id = (await services.tasks.get(task_id)).workspace_id
    agent = Principal(
        user_id=services.principal.user_id,
        login="agent",
        session_id=session.id,
        task_id=task_id,
        workspace_id=workspace_id,
    )
    return McpCaller(principal=agent, endpoint="session", session_id=session.id, task_id=task_id)


async def call_tool(
    surface: KandevToolSurface, caller: McpCaller, tool: str, /, **arguments: Any
) -> tuple[bool, dict[str, Any]]:
    result = await surface.call_tool(caller, tool, arguments)
    assert json.loads(result.content[0].text) == result.structured_content
    return bool(result.is_error), result.structured_content


async def unknown_tool(surface: KandevToolSurface, caller: McpCaller, tool: str, /, **arguments: Any) -> None:
    """Assert `caller` has no tool `tool`: the MCP protocol error (Invalid params) with the UNKNOWN_TOOL code."""
    with pytest.raises(MCPError) as refused:
        await surface.call_tool(caller, tool, arguments)
    assert (refused.value.code, refused.value.error.data) == (INVALID_PARAMS, {"code": "UNKNOWN_TOOL"})


async def run_session_caller(services: Any, db: Any, settings: Any, workspace_id: str) -> tuple[str, str, McpCaller]:
    """An automation run's hidden task with a started session, and that session's coordinator caller (from a
    real session token): (task id, session id, caller)."""
    hidden = (
        await services.tasks.create(
            CreateTask(workspace_id=workspace_id, title="Nightly", origin=TaskOrigin.AUTOMATION_RUN)
        )
    ).task
    session = (await services.sessions.start_task(hidden.id, "hi", None)).session
    return hidden.id, session.id, await token_caller(services, db, settings, hidden.id, session.id)


async def token_caller(services: Any, db: Any, settings: Any, task_id: str, session_id: str) -> McpCaller:
    """The caller a session's agent is, from a real launch token: its principal and MCP profile."""
    agent = await session_principal(db, session_id, await launch_token(services.ctx, session_id), settings.server_key)
    assert agent is not None
    return McpCaller(
        principal=agent, endpoint="session", session_id=session_id, task_id=task_id, profile=agent.mcp_profile
    )
