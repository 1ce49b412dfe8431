"""The session token rule, in the domain: a live session's current token grants its agent, bound to the
session, its task and the task's workspace, with the session's tool profile; anything else grants nothing."""

from __future__ import annotations

import pytest

from kandev.domain.access.session_grants import SESSION_LOGIN, SessionPrincipal, session_principal
from kandev.domain.access.tokens import create_token
from kandev.domain.access.users import create_user, remove_user
from kandev.domain.errors import ConflictError, NotFoundError
from kandev.domain.sessions.tool_profiles import McpProfile, Surface
from kandev.domain.tasks.service import CreateTask
from kandev.models.enums import TaskOrigin
from tests.support.session_tokens import launch_token
from tests.support.users import services_as


async def live_session(services, workspace_id: str) -> tuple[str, str, str]:
    """(task id, session id, token) of a freshly launched session."""
    task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Work"))).task
    session = (await services.sessions.start_task(task.id, "hi", None)).session
    return task.id, session.id, await launch_token(services.ctx, session.id)


async def test_a_live_sessions_token_grants_its_agent_with_the_sessions_profile(
    services, db, workspace_id, settings, principal
):
    task_id, session_id, token = await live_session(services, workspace_id)
    granted = await session_principal(db, session_id, token, settings.server_key)
    assert isinstance(granted, SessionPrincipal)
    assert (granted.user_id, granted.login) == (principal.user_id, SESSION_LOGIN)
    assert (granted.session_id, granted.task_id, granted.workspace_id) == (session_id, task_id, workspace_id)
    assert isinstance(granted.mcp_profile, McpProfile)
    assert granted.mcp_profile == await services.sessions.mcp_profile(session_id)


async def test_a_token_names_one_session_only(services, db, workspace_id, settings):
    _, first, token = await live_session(services, workspace_id)
    _, second, _ = await live_session(services, workspace_id)
    assert await session_principal(db, first, token, settings.server_key) is not None
    assert await session_principal(db, second, token, settings.server_key) is None


async def test_a_relaunch_revokes_the_previous_token(services, db, workspace_id, settings):
    _, session_id, old = await live_session(services, workspace_id)
    new = await launch_token(services.ctx, session_id)
    assert await session_principal(db, session_id, old, settings.server_key) is None
    assert await session_principal(db, session_id, new, settings.server_key) is not None


async def test_a_terminal_session_grants_nothing(services, db, workspace_id, settings):
    task_id, session_id, token = await live_session(services, workspace_id)
    await services.sessions.stop_task(task_id)
    assert await session_principal(db, session_id, token, settings.server_key) is None


async def test_a_deleted_tasks_session_grants_nothing(services, db, workspace_id, settings):
    task_id, session_id, token = await live_session(services, workspace_id)
    await services.tasks.delete(task_id)
    assert await session_principal(db, session_id, token, settings.server_key) is None


async def test_the_session_of_an_automation_runs_hidden_task_is_granted_the_coordinator_surface(
    services, db, workspace_id, settings
):
    task = (
        await services.tasks.create(
            CreateTask(workspace_id=workspace_id, title="Nightly", origin=TaskOrigin.AUTOMATION_RUN)
        )
    ).task
    session = (await services.sessions.start_task(task.id, "hi", None)).session
    token = await launch_token(services.ctx, session.id)
    granted = await session_principal(db, session.id, token, settings.server_key)
    assert granted is not None and granted.mcp_profile.surface == Surface.AUTOMATION_COORDINATOR
    tools = granted.mcp_profile.tool_names()
    assert "archive_task_kandev" in tools and "message_task_kandev" in tools
    assert not {"delete_task_kandev", "update_task_kandev", "step_complete_kandev"} & set(tools)


async def test_a_removed_users_agents_are_granted_nothing_and_their_sessions_are_named_for_announcing(
    services, db, settings
):
    mallory = await services_as(services, "mallory")
    workspace = await mallory.workspaces.create("Mallory's")
    _, session_id, token = await live_session(mallory, workspace.id)
    user, changes, sessions = await remove_user(db, "mallory")
    assert await session_principal(db, session_id, token, settings.server_key) is None
    assert changes == [{"user": user.id, "removed": True}] and sessions == [session_id]
    with pytest.raises(NotFoundError):  # no new token for them either
        await create_token(db, name="again", login="mallory")
    with pytest.raises(ConflictError):  # and the login is not given to anyone else
        await create_user(db, "mallory")
