"""Agents coordinating over MCP: who may interrupt and stop whom, sibling sessions, related tasks."""

from __future__ import annotations

from tests.integration.mcp_bridge.conftest import agent_on, call_tool
from tests.support.factories import new_task


async def test_only_the_direct_parent_may_interrupt_or_stop_a_task(tool_surface, services, workspace_id):
    parent_id = await new_task(services, workspace_id, "Parent")
    child_id = await new_task(services, workspace_id, "Child", parent_id=parent_id)
    other_id = await new_task(services, workspace_id, "Other")
    parent = await agent_on(services, parent_id)
    other = await agent_on(services, other_id)
    await agent_on(services, child_id)
    error, payload = await call_tool(
        tool_surface,
        other,
        "message_task_kandev",
        task_id=child_id,
        prompt="stop that",
        delivery_mode="interrupt",
    )
    assert error and payload["code"] == "PERMISSION_DENIED"
    error, payload = await call_tool(
        tool_surface,
        parent,
        "message_task_kandev",
        task_id=child_id,
        prompt="new plan",
        delivery_mode="interrupt",
    )
    assert not error and payload["status"] == "queued"
    error, payload = await call_tool(tool_surface, other, "stop_task_kandev", task_id=child_id)
    assert error and payload["code"] == "PERMISSION_DENIED"
    error, payload = await call_tool(tool_surface, parent, "stop_task_kandev", task_id=child_id)
    assert not error and payload["status"] == "stopped" and payload["state"] == "REVIEW"
    error, payload = await call_tool(tool_surface, parent, "stop_task_kandev", task_id=child_id)
    assert not error and payload["status"] == "not_running" and payload["stopped_session_ids"] == []


async def test_a_task_whose_sessions_all_ended_is_reached_again_through_spawn_session(
    tool_surface, services, workspace_id
):
    parent_id = await new_task(services, workspace_id, "Parent")
    child_id = await new_task(services, workspace_id, "Child", parent_id=parent_id)
    parent = await agent_on(services, parent_id)
    await agent_on(services, child_id)
    await services.sessions.stop_task(child_id)
    error, payload = await call_tool(tool_surface, parent, "message_task_kandev", task_id=child_id, prompt="hello?")
    assert error and "spawn_session_kandev" in payload["error"]
    error, spawned = await call_tool(
        tool_surface, parent, "spawn_session_kandev", task_id=child_id, name="retry", prompt="try again"
    )
    assert not error and spawned["name"] == "retry" and spawned["queued_prompt_id"]
    error, sent = await call_tool(tool_surface, parent, "message_task_kandev", task_id=child_id, prompt="and this")
    assert not error and sent["session_id"] == spawned["id"]


async def test_messaging_your_own_task_needs_the_sibling_session_id(tool_surface, services, workspace_id):
    task_id = await new_task(services, workspace_id, "Self")
    me = await agent_on(services, task_id)
    error, payload = await call_tool(tool_surface, me, "message_task_kandev", task_id="self", prompt="note to self")
    assert error and "session_id" in payload["error"]
    error, sibling = await call_tool(tool_surface, me, "spawn_session_kandev", name="reviewer")
    assert not error
    error, sent = await call_tool(
        tool_surface, me, "message_task_kandev", task_id="self", prompt="review", session_id=sibling["id"]
    )
    assert not error and sent["session_id"] == sibling["id"]


async def test_related_tasks_show_parent_children_and_siblings(tool_surface, services, workspace_id):
    parent_id = await new_task(services, workspace_id, "Parent")
    first = await new_task(services, workspace_id, "First", parent_id=parent_id)
    second = await new_task(services, workspace_id, "Second", parent_id=parent_id)
    grandchild = await new_task(services, workspace_id, "Grandchild", parent_id=first)
    me = await agent_on(services, first)
    error, related = await call_tool(tool_surface, me, "list_related_tasks_kandev")
    assert not error
    assert related["parent"]["id"] == parent_id
    assert [t["id"] for t in related["siblings"]] == [second]
    assert [t["id"] for t in related["children"]] == [grandchild]


async def test_create_task_kandev_creates_an_autopilot_subtask_whose_flag_is_not_inherited(
    tool_surface, services, workspace_id
):
    parent_id = await new_task(services, workspace_id, "Parent", autopilot=True)
    parent = await agent_on(services, parent_id)
    error, child = await call_tool(
        tool_surface,
        parent,
        "create_task_kandev",
        title="Child",
        parent_id="self",
        autopilot=True,
        start_agent=False,
    )
    assert not error and child["autopilot"] is True and child["parent_id"] == parent_id
    error, plain = await call_tool(
        tool_surface, parent, "create_task_kandev", title="Plain", parent_id="self", start_agent=False
    )
    assert not error and plain["autopilot"] is False  # never inherited from the autopilot parent
    listed = {t.name: t for t in await tool_surface.list_tools(parent)}
    assert "fixed at creation" in listed["create_task_kandev"].input_schema["properties"]["autopilot"]["description"]
