"""The tool surface in process: profiles pick the tools, arguments are validated, calls run GraphQL."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlalchemy import select

from kandev.domain.context import Principal
from kandev.domain.sessions.tool_profiles import Capability, Surface, compute_profile
from kandev.domain.tasks.service import CreateTask
from kandev.edge.mcp_bridge.surface import McpCaller
from kandev.edge.mcp_bridge.tool_surface import KandevToolSurface
from kandev.models import Session, Task
from kandev.models.enums import TaskOrigin
from tests.integration.mcp_bridge.conftest import run_session_caller, unknown_tool

SECRET = "sk-live-SECRET-VALUE-4242"


async def session_caller(services: Any, workspace_id: str, **task_fields: Any) -> McpCaller:
    task = (
        await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Agent's task", **task_fields))
    ).task
    session = (await services.sessions.start_task(task.id, "hi", None)).session
    agent = Principal(
        user_id=services.principal.user_id,
        login="agent",
        session_id=session.id,
        task_id=task.id,
        workspace_id=workspace_id,
    )
    return McpCaller(principal=agent, endpoint="session", session_id=session.id, task_id=task.id)


async def call(
    surface: KandevToolSurface, caller: McpCaller, name: str, **arguments: Any
) -> tuple[bool, dict[str, Any]]:
    result = await surface.call_tool(caller, name, arguments)
    payload = result.structured_content
    assert json.loads(result.content[0].text) == payload  # one object, as structured content and as text
    return bool(result.is_error), payload


async def names(surface: KandevToolSurface, caller: McpCaller) -> set[str]:
    return {tool.name for tool in await surface.list_tools(caller)}


async def test_each_surface_gets_its_own_tools(surface, external, services, workspace_id):
    task_tools = await names(surface, await session_caller(services, workspace_id))
    external_tools = await names(surface, external)
    assert {
        "message_task_kandev",
        "create_task_kandev",
        "update_task_kandev",
        "list_task_sessions_kandev",
    } <= task_tools
    assert not {"resolve_agent_permission_kandev", "list_pending_agent_permissions_kandev"} & task_tools
    assert {
        "create_task_kandev",
        "resolve_agent_permission_kandev",
        "list_pending_agent_permissions_kandev",
        "get_task_conversation_kandev",
        "list_workflow_steps_kandev",
    } <= external_tools
    assert not {"message_task_kandev", "update_task_kandev", "list_task_sessions_kandev"} & external_tools


@pytest.mark.parametrize(
    ("autopilot", "has_parent", "expected"),
    [
        (False, False, {Capability.USER_QUESTION}),
        (False, True, {Capability.USER_QUESTION}),
        (True, True, {Capability.PARENT_QUESTION}),
        (True, False, set()),
    ],
)
def test_question_capabilities_follow_autopilot_and_the_direct_parent(autopilot, has_parent, expected):
    task = Task(autopilot=autopilot, parent_id="p" if has_parent else None)
    profile = compute_profile(Session(purpose="task"), task)
    assert set(profile.capabilities) == expected


def test_an_automation_runs_hidden_task_gets_the_coordinator_surface_whatever_its_session_purpose():
    profile = compute_profile(Session(purpose="task"), Task(autopilot=False, origin=TaskOrigin.AUTOMATION_RUN))
    tools = set(profile.tool_names())
    assert profile.surface == Surface.AUTOMATION_COORDINATOR and not profile.capabilities
    assert {"create_task_kandev", "message_task_kandev", "archive_task_kandev", "answer_question_kandev"} <= tools
    forbidden = {"delete_task_kandev", "update_task_kandev", "move_task_kandev", "step_complete_kandev"}
    assert not forbidden & tools and not any(
        "workflow" in t and t.startswith(("create", "update", "delete")) for t in tools
    )


def test_a_configuration_session_gets_the_configuration_surface_without_task_creation():
    profile = compute_profile(Session(purpose="configuration"), Task(autopilot=False))
    assert "create_task_kandev" not in profile.tool_names() and "list_workflows_kandev" in profile.tool_names()


async def test_missing_required_fields_are_all_named(surface, external):
    error, payload = await call(surface, external, "move_task_kandev")
    assert error and payload["code"] == "INVALID_ARGUMENTS"
    assert "task_id" in payload["error"] and "workflow_step_id" in payload["error"]


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ({"title": 42}, "must be of type string"),
        ({"title": SECRET * 20}, "too long"),
        ({"title": "ok", "start_agent": SECRET}, "must be of type boolean"),
        ({"title": "ok", "unexpected_field": SECRET}, "unknown field: unexpected_field"),
        ({"title": "ok", SECRET: "x"}, "unknown field: 1 unnamed field(s)"),
        (
            {"title": "ok", "workspace_id": "w1", "repositories": [{"base_branch": SECRET}]},
            "exactly one of repositoryId or repositoryUrl",
        ),
    ],
)
async def test_bad_arguments_are_tool_errors_that_never_echo_a_value(surface, external, db, arguments, fragment):
    error, payload = await call(surface, external, "create_task_kandev", **arguments)
    assert error
    assert fragment in payload["error"]
    assert SECRET not in json.dumps(payload)
    async with db.read() as session:
        assert list(await session.scalars(select(Task.id))) == []


async def test_create_task_accepts_the_legacy_description_but_not_together_with_prompt(surface, external, workspace_id):
    error, payload = await call(
        surface,
        external,
        "create_task_kandev",
        workspace_id=workspace_id,
        title="Legacy",
        description="do it",
        start_agent=False,
    )
    assert not error and payload["title"] == "Legacy" and payload["id"]
    assert payload["deduplicated"] is False and payload["creation_complete"] is True
    error, payload = await call(
        surface,
        external,
        "create_task_kandev",
        workspace_id=workspace_id,
        title="Both",
        prompt="a",
        description="b",
    )
    assert error and "either prompt or description" in payload["error"]
    listed = await surface.list_tools(external)
    create = next(t for t in listed if t.name == "create_task_kandev")
    assert "description" not in create.input_schema["properties"]


async def test_a_session_creates_a_subtask_of_itself_in_its_own_workspace(surface, services, workspace_id):
    caller = await session_caller(services, workspace_id)
    error, payload = await call(
        surface, caller, "create_task_kandev", title="Child", parent_id="self", start_agent=False
    )
    assert not error
    assert payload["parent_id"] == caller.task_id and payload["workspace_id"] == workspace_id


async def test_unknown_targets_are_tool_errors_and_tools_outside_the_profile_protocol_errors(
    surface, external, services, workspace_id
):
    error, payload = await call(surface, external, "archive_task_kandev", task_id="no-such-task")
    assert error and payload == {"error": "task not found", "code": "NOT_FOUND", "fields": {"entity": "task"}}
    await unknown_tool(surface, external, "message_task_kandev", task_id="x", prompt="hi")


async def test_reads_return_snake_case_objects(surface, external, services, workspace_id):
    error, payload = await call(surface, external, "list_workflows_kandev", workspace_id=workspace_id)
    assert not error
    steps = payload["workflows"][0]["steps"]
    assert [s["name"] for s in steps] == ["Backlog", "In Progress", "Review", "Done"]
    assert all("auto_advance_requires_signal" in s for s in steps)
    error, payload = await call(
        surface, external, "list_workflow_steps_kandev", workflow_id=payload["workflows"][0]["id"]
    )
    assert [s["auto_advance_requires_signal"] for s in payload["steps"]] == [False] * 4  # opt-in


async def test_message_and_conversation_tools_work_on_a_started_task(surface, services, workspace_id):
    caller = await session_caller(services, workspace_id)
    error, sent = await call(
        surface,
        caller,
        "message_task_kandev",
        task_id=caller.task_id,
        prompt="more work",
        session_id=caller.session_id,
    )
    assert not error and sent["status"] == "queued" and sent["session_id"] == caller.session_id
    error, sessions = await call(surface, caller, "list_task_sessions_kandev", task_id="self")
    assert not error and [s["id"] for s in sessions["sessions"]] == [caller.session_id]
    error, conversation = await call(surface, caller, "get_task_conversation_kandev", task_id="self")
    assert not error and conversation["session_id"] == caller.session_id and conversation["messages"] == []


async def test_an_automation_run_coordinates_other_tasks_but_only_archives_its_own(
    surface, services, db, settings, workspace_id
):
    run_task_id, session_id, run = await run_session_caller(services, db, settings, workspace_id)
    other = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Other", start_agent=False))).task

    for name, arguments in [
        ("message_task_kandev", {"task_id": "self", "prompt": "hi", "session_id": session_id}),
        ("stop_task_kandev", {"task_id": run_task_id}),
        ("spawn_session_kandev", {}),
        ("add_task_dependency_kandev", {"depends_on_task_id": other.id}),
    ]:
        error, payload = await call(surface, run, name, **arguments)
        assert error and payload["code"] == "PERMISSION_DENIED", (name, payload)
    error, _ = await call(surface, run, "add_task_dependency_kandev", task_id=other.id, depends_on_task_id=run_task_id)
    assert error
    await unknown_tool(surface, run, "delete_task_kandev", task_id=other.id)  # not on this surface at all

    error, payload = await call(surface, run, "archive_task_kandev", task_id="self")
    assert not error and payload["archived_at"] is not None
