"""A session token acts within its task's workspace: through the tool surface, as the caller that
/mcp/session's token check builds, another workspace of the same owner looks like an unknown id. The
one exception is message_task_kandev naming a task by its full id."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from kandev.domain.tasks.service import CreateTask
from kandev.edge.mcp_bridge.auth import SessionCallers, resolve_caller
from kandev.edge.mcp_bridge.surface import McpCaller
from kandev.edge.mcp_bridge.tool_surface import KandevToolSurface
from kandev.models import QueuedPrompt, Session, Task
from tests.integration.mcp_bridge.conftest import call_tool
from tests.support.session_tokens import launch_token

UNKNOWN = "00000000-0000-0000-0000-000000000000"


async def agent_of(surface: KandevToolSurface, services: Any, task_id: str) -> McpCaller:
    """The caller /mcp/session builds for a freshly launched session of the task."""
    session = (await services.sessions.start_task(task_id, "hi", None)).session
    token = await launch_token(services.ctx, session.id)
    caller = await resolve_caller(surface._state(), "session", f"Bearer {token}", SessionCallers())
    assert caller is not None
    return caller


@pytest.fixture
async def other_workspace(services) -> str:
    """A second workspace of the same owner."""
    return (await services.workspaces.create("Elsewhere")).id


@pytest.fixture
async def agent(surface, services, workspace_id) -> McpCaller:
    own = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Mine"))).task
    return await agent_of(surface, services, own.id)


@pytest.fixture
async def foreign(services, other_workspace) -> Task:
    """A task in the other workspace with a live session."""
    task = (await services.tasks.create(CreateTask(workspace_id=other_workspace, title="Theirs"))).task
    await services.sessions.start_task(task.id, "keep going", None)
    return await snapshot(services, task.id)


async def snapshot(services: Any, task_id: str) -> Task:
    async with services.ctx.db.read() as db:
        task = await db.get(Task, task_id)
        assert task is not None
        db.expunge(task)
        return task


async def session_states(services: Any, task_id: str) -> list[str]:
    async with services.ctx.db.read() as db:
        return list(await db.scalars(select(Session.state).where(Session.task_id == task_id)))


async def test_the_session_caller_carries_its_tasks_workspace(agent, workspace_id):
    assert agent.principal.workspace_id == workspace_id


async def test_a_session_lists_only_its_own_workspace_and_its_tasks(surface, agent, workspace_id, other_workspace):
    error, listed = await call_tool(surface, agent, "list_workspaces_kandev")
    assert not error and [w["id"] for w in listed["workspaces"]] == [workspace_id]
    for tool, arguments in [
        ("list_tasks_kandev", {"workspace_id": other_workspace}),
        ("list_workflows_kandev", {"workspace_id": other_workspace}),
        ("list_agents_kandev", {"workspace_id": other_workspace}),
    ]:
        error, refused = await call_tool(surface, agent, tool, **arguments)
        assert error and refused["code"] == "NOT_FOUND", (tool, refused)
        error, unknown = await call_tool(surface, agent, tool, workspace_id=UNKNOWN)
        assert refused == unknown, tool


async def test_a_session_cannot_read_another_workspaces_workflow_steps(surface, agent, services, other_workspace):
    workflow_id = (await services.workspaces.get(other_workspace)).default_workflow_id
    error, refused = await call_tool(surface, agent, "list_workflow_steps_kandev", workflow_id=workflow_id)
    assert error and refused["code"] == "NOT_FOUND"


async def test_a_session_cannot_create_a_task_in_another_workspace(surface, agent, services, other_workspace):
    error, refused = await call_tool(
        surface, agent, "create_task_kandev", workspace_id=other_workspace, title="Planted", start_agent=False
    )
    assert error and refused["code"] == "NOT_FOUND"
    async with services.ctx.db.read() as db:
        planted = await db.scalar(select(Task.id).where(Task.workspace_id == other_workspace, Task.title == "Planted"))
    assert planted is None


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("update_task_kandev", {"title": "Hijacked"}),
        ("update_task_kandev", {"state": "COMPLETED"}),
        ("move_task_kandev", {"workflow_step_id": "STEP"}),
        ("archive_task_kandev", {}),
        ("delete_task_kandev", {}),
        ("stop_task_kandev", {}),
    ],
)
async def test_a_session_cannot_change_a_task_in_another_workspace_of_the_same_owner(
    tool, arguments, surface, agent, services, foreign
):
    if arguments.get("workflow_step_id") == "STEP":
        steps = await services.workflows.steps(foreign.workflow_id)
        other_step = next(s.id for s in steps if s.id != foreign.workflow_step_id)
        arguments = {"workflow_step_id": other_step}
    error, refused = await call_tool(surface, agent, tool, task_id=foreign.id, **arguments)
    assert error and refused["code"] == "NOT_FOUND", refused
    error, unknown = await call_tool(surface, agent, tool, task_id=UNKNOWN, **arguments)
    assert refused == unknown  # indistinguishable from an id that names nothing
    after = await snapshot(services, foreign.id)
    assert (after.title, after.state, after.workflow_step_id, after.archived_at, after.deleted_at) == (
        foreign.title,
        foreign.state,
        foreign.workflow_step_id,
        foreign.archived_at,
        foreign.deleted_at,
    )
    states = await session_states(services, foreign.id)
    assert states and "CANCELLED" not in states


async def test_message_task_with_the_full_task_id_reaches_another_workspace_of_the_same_owner(
    surface, agent, services, foreign
):
    error, sent = await call_tool(surface, agent, "message_task_kandev", task_id=foreign.id, prompt="From next door")
    assert not error, sent
    assert sent["task_id"] == foreign.id
    async with services.ctx.db.read() as db:
        prompt = await db.get(QueuedPrompt, sent["queued_prompt_id"])
    assert prompt is not None and prompt.text == "From next door" and prompt.session_id == sent["session_id"]
    # The exception is this one call: the same agent still cannot read that task's conversation.
    error, refused = await call_tool(surface, agent, "get_task_conversation_kandev", task_id=foreign.id)
    assert error and refused["code"] == "NOT_FOUND"
