"""create_task_kandev with external_id and blocked_by, the dependency tools and deferred_launch_prompt."""

from __future__ import annotations

from sqlalchemy import select

from kandev.domain.context import Principal
from kandev.edge.mcp_bridge.surface import McpCaller
from kandev.models import QueuedPrompt, Session
from kandev.models.enums import TaskState
from tests.integration.mcp_bridge.conftest import agent_on, call_tool
from tests.support.factories import new_task


async def prompts_of(db, task_id: str) -> list[str]:
    async with db.read() as s:
        rows = await s.scalars(
            select(QueuedPrompt.text)
            .join(Session, Session.id == QueuedPrompt.session_id)
            .where(Session.task_id == task_id)
            .order_by(QueuedPrompt.seq)
        )
        return list(rows)


async def names(surface, caller: McpCaller) -> set[str]:
    return {tool.name for tool in await surface.list_tools(caller)}


async def test_the_task_surface_gets_dependency_and_rich_output_tools_and_external_gets_dependencies(
    tool_surface, services, workspace_id, principal
):
    agent = await agent_on(services, await new_task(services, workspace_id, "Mine"))
    external = McpCaller(principal=principal, endpoint="external")
    assert {
        "add_task_dependency_kandev",
        "remove_task_dependency_kandev",
        "show_rich_output_kandev",
    } <= await names(tool_surface, agent)
    external_tools = await names(tool_surface, external)
    assert {"add_task_dependency_kandev", "remove_task_dependency_kandev"} <= external_tools
    assert "show_rich_output_kandev" not in external_tools


async def test_an_orchestrator_decomposes_a_plan_into_a_chain_and_retries_safely(
    tool_surface, services, db, workspace_id
):
    orchestrator = await agent_on(services, await new_task(services, workspace_id, "Plan"))
    ids: list[str] = []
    for step in ("Design", "Build", "Ship"):
        arguments = {"title": step, "prompt": f"/say {step}", "external_id": f"plan-1/{step}"}
        if ids:
            arguments["blocked_by"] = [ids[-1]]
        error, created = await call_tool(tool_surface, orchestrator, "create_task_kandev", **arguments)
        assert not error, created
        assert created["deduplicated"] is False and created["creation_complete"] is True
        assert created["blocked_by"] == ids[-1:]
        ids.append(created["id"])
    error, retried = await call_tool(
        tool_surface,
        orchestrator,
        "create_task_kandev",
        title="Build",
        prompt="/say Build",
        external_id="plan-1/Build",
        blocked_by=[ids[0]],
    )
    assert not error and retried["id"] == ids[1] and retried["deduplicated"] is True
    assert retried["creation_complete"] is True

    assert [len(await prompts_of(db, i)) for i in ids] == [1, 0, 0]
    error, _ = await call_tool(tool_surface, orchestrator, "update_task_kandev", task_id=ids[0], state="COMPLETED")
    assert not error
    assert [len(await prompts_of(db, i)) for i in ids] == [1, 1, 0]
    await call_tool(tool_surface, orchestrator, "update_task_kandev", task_id=ids[1], state="COMPLETED")
    assert await prompts_of(db, ids[2]) == ["/say Ship"]


async def test_blocked_by_self_waits_on_the_callers_own_task(tool_surface, services, workspace_id):
    own = await new_task(services, workspace_id, "Mine")
    agent = await agent_on(services, own)
    error, created = await call_tool(
        tool_surface, agent, "create_task_kandev", title="Follow-up", prompt="/say later", blocked_by=["self"]
    )
    assert not error and created["blocked_by"] == [own] and created["state"] == "BLOCKED"


async def test_in_a_task_session_task_id_defaults_to_and_may_only_be_the_own_task(tool_surface, services, workspace_id):
    own = await new_task(services, workspace_id, "Mine")
    first = await new_task(services, workspace_id, "First", start_agent=False)
    other = await new_task(services, workspace_id, "Other", start_agent=False)
    agent = await agent_on(services, own)
    error, added = await call_tool(tool_surface, agent, "add_task_dependency_kandev", depends_on_task_id=first)
    assert not error and added == {
        "task_id": own,
        "depends_on_task_id": first,
        "added": True,
        "state": "SCHEDULING",
        "block_reason": None,
        "blocked_by": [first],
    }
    error, refused = await call_tool(
        tool_surface, agent, "add_task_dependency_kandev", task_id=other, depends_on_task_id=first
    )
    assert error and refused["code"] == "PERMISSION_DENIED"
    error, same = await call_tool(
        tool_surface, agent, "add_task_dependency_kandev", task_id="self", depends_on_task_id=first
    )
    assert not error and same["added"] is False
    error, removed = await call_tool(tool_surface, agent, "remove_task_dependency_kandev", depends_on_task_id=first)
    assert not error and removed["removed"] is True and removed["blocked_by"] == []
    error, again = await call_tool(tool_surface, agent, "remove_task_dependency_kandev", depends_on_task_id=first)
    assert not error and again["removed"] is False


async def test_external_callers_name_both_ends_and_see_cycles_refused_with_the_path(
    tool_surface, services, principal, workspace_id
):
    external = McpCaller(principal=principal, endpoint="external")
    a = await new_task(services, workspace_id, "Alpha", start_agent=False)
    b = await new_task(services, workspace_id, "Beta", start_agent=False)
    error, added = await call_tool(
        tool_surface, external, "add_task_dependency_kandev", task_id=b, depends_on_task_id=a
    )
    assert not error and added["state"] == "BLOCKED" and "'Alpha'" in added["block_reason"]
    error, cycle = await call_tool(
        tool_surface, external, "add_task_dependency_kandev", task_id=a, depends_on_task_id=b
    )
    assert error and cycle["code"] == "CONFLICT"
    assert f"'Alpha' ({a}) -> 'Beta' ({b}) -> 'Alpha' ({a})" in cycle["error"]
    error, missing = await call_tool(tool_surface, external, "add_task_dependency_kandev", depends_on_task_id=a)
    assert error and missing["code"] == "VALIDATION"
    error, unknown = await call_tool(
        tool_surface, external, "add_task_dependency_kandev", task_id=a, depends_on_task_id="nope"
    )
    assert error and unknown["code"] == "NOT_FOUND"


async def test_an_agent_of_another_user_cannot_link_tasks_it_cannot_see(tool_surface, services, workspace_id):
    a = await new_task(services, workspace_id, "A", start_agent=False)
    b = await new_task(services, workspace_id, "B", start_agent=False)
    stranger = McpCaller(principal=Principal(user_id="nobody", login="nobody"), endpoint="external")
    error, refused = await call_tool(
        tool_surface, stranger, "add_task_dependency_kandev", task_id=b, depends_on_task_id=a
    )
    assert error and refused["code"] == "NOT_FOUND"


async def test_deferred_launch_prompt_replaces_the_waiting_prompt_and_is_refused_after_start(
    tool_surface, services, db, workspace_id
):
    agent = await agent_on(services, await new_task(services, workspace_id, "Orchestrator"))
    a = await new_task(services, workspace_id, "A", start_agent=False)
    error, b = await call_tool(
        tool_surface, agent, "create_task_kandev", title="B", prompt="/say stale brief", blocked_by=[a]
    )
    assert not error
    error, updated = await call_tool(
        tool_surface, agent, "update_task_kandev", task_id=b["id"], deferred_launch_prompt="/say fresh brief"
    )
    assert not error and updated["state"] == "BLOCKED"
    await services.tasks.update(a, state=TaskState.COMPLETED)
    assert await prompts_of(db, b["id"]) == ["/say fresh brief"]
    error, refused = await call_tool(
        tool_surface, agent, "update_task_kandev", task_id=b["id"], deferred_launch_prompt="/say too late"
    )
    assert error and refused["code"] == "CONFLICT" and "message" in refused["error"]


async def test_an_update_carrying_an_external_id_is_accepted_and_leaves_the_identity_alone(
    tool_surface, services, workspace_id
):
    agent = await agent_on(services, await new_task(services, workspace_id, "Plan"))
    error, created = await call_tool(
        tool_surface, agent, "create_task_kandev", title="Build", external_id="plan-7/Build", start_agent=False
    )
    assert not error
    error, updated = await call_tool(
        tool_surface, agent, "update_task_kandev", task_id=created["id"], title="Build it", external_id="plan-7/Ship"
    )
    assert not error and updated["title"] == "Build it" and updated["external_id"] == "plan-7/Build"
    error, only_identity = await call_tool(
        tool_surface, agent, "update_task_kandev", task_id=created["id"], external_id=None
    )
    assert not error and only_identity["external_id"] == "plan-7/Build"
    error, retried = await call_tool(
        tool_surface, agent, "create_task_kandev", title="Build", external_id="plan-7/Build", start_agent=False
    )
    assert not error and retried["id"] == created["id"] and retried["deduplicated"] is True
    error, fresh = await call_tool(
        tool_surface, agent, "create_task_kandev", title="Ship", external_id="plan-7/Ship", start_agent=False
    )
    assert not error and fresh["id"] != created["id"] and fresh["deduplicated"] is False
    error, refused = await call_tool(tool_surface, agent, "update_task_kandev", task_id=created["id"], external_id=7)
    assert error and refused["error"] == "field 'external_id' must be of type string or null"
    listed = {tool.name: tool for tool in await tool_surface.list_tools(agent)}
    assert "external_id" not in listed["update_task_kandev"].input_schema["properties"]
