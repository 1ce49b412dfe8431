"""The workflow configuration tools through the in-process tool surface."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlalchemy import select

from kandev.domain.context import Principal
from kandev.domain.sessions.tool_profiles import McpProfile, Surface
from kandev.domain.tasks.service import CreateTask
from kandev.edge.mcp_bridge.surface import McpCaller
from kandev.edge.mcp_bridge.tool_surface import KandevToolSurface
from kandev.models import Workflow, WorkflowStep
from kandev.models.base import new_id

WORKFLOW_TOOLS = {
    "create_workflow_kandev",
    "update_workflow_kandev",
    "delete_workflow_kandev",
    "create_workflow_step_kandev",
    "update_workflow_step_kandev",
    "delete_workflow_step_kandev",
    "reorder_workflow_steps_kandev",
    "list_workflow_steps_kandev",
}
STEP_KEYS = {
    "id",
    "name",
    "position",
    "is_start_step",
    "is_final_step",
    "auto_advance_requires_signal",
    "allow_manual_move",
    "prompt",
    "workflow_id",
    "wip_limit",
    "events",
}
START = {"type": "auto_start_agent"}
SECRET = "sk-live-SECRET-VALUE-4242"


async def call(
    surface: KandevToolSurface, caller: McpCaller, tool: str, /, **arguments: Any
) -> tuple[bool, dict[str, Any]]:
    result = await surface.call_tool(caller, tool, arguments)
    payload = result.structured_content
    assert json.loads(result.content[0].text) == payload
    return bool(result.is_error), payload


async def ok(surface: KandevToolSurface, caller: McpCaller, tool: str, /, **arguments: Any) -> dict[str, Any]:
    error, payload = await call(surface, caller, tool, **arguments)
    assert not error, payload
    return payload


async def stored(db) -> list[tuple[Any, ...]]:
    async with db.read() as session:
        workflows = [
            (w.id, w.name, w.description) for w in await session.scalars(select(Workflow).order_by(Workflow.id))
        ]
        steps = [
            (
                s.id,
                s.name,
                s.position,
                s.is_start_step,
                s.is_final_step,
                s.prompt,
                s.events,
                s.auto_advance_requires_signal,
                s.allow_manual_move,
                s.wip_limit,
            )
            for s in await session.scalars(select(WorkflowStep).order_by(WorkflowStep.id))
        ]
    return [*workflows, *steps]


async def pipeline(
    surface: KandevToolSurface, caller: McpCaller, workspace_id: str
) -> tuple[str, list[dict[str, Any]]]:
    workflow = await ok(
        surface, caller, "create_workflow_kandev", workspace_id=workspace_id, name="Pipeline", description=""
    )
    steps = [
        await ok(surface, caller, "create_workflow_step_kandev", workflow_id=workflow["id"], name=n)
        for n in ("Plan", "Build", "Ship")
    ]
    return workflow["id"], steps


def test_the_configuration_and_external_surfaces_carry_the_workflow_tools_and_task_sessions_do_not():
    assert set(McpProfile(Surface.CONFIGURATION).tool_names()) >= WORKFLOW_TOOLS
    assert set(McpProfile(Surface.EXTERNAL).tool_names()) >= WORKFLOW_TOOLS
    assert not (WORKFLOW_TOOLS - {"list_workflow_steps_kandev"}) & set(McpProfile(Surface.KANBAN_TASK).tool_names())


async def test_step_tool_schemas_are_closed_at_the_top_and_open_inside_events(surface, external):
    tools = {t.name: t for t in await surface.list_tools(external)}
    assert set(tools) >= WORKFLOW_TOOLS
    for name in ("create_workflow_step_kandev", "update_workflow_step_kandev"):
        schema = tools[name].input_schema
        assert schema["additionalProperties"] is False
        assert "auto_advance_requires_signal" in schema["properties"]
        assert schema["properties"]["events"].get("additionalProperties", True) is not False


async def test_a_workflow_is_built_step_by_step_and_listed_with_every_field(surface, external, workspace_id):
    workflow = await ok(
        surface,
        external,
        "create_workflow_kandev",
        workspace_id=workspace_id,
        name="Release",
        description="Ship it",
    )
    assert workflow["id"] and workflow["name"] == "Release" and workflow["description"] == "Ship it"
    assert workflow["steps"] == [] and workflow["warnings"] == []
    first = await ok(
        surface,
        external,
        "create_workflow_step_kandev",
        workflow_id=workflow["id"],
        name="Work",
        prompt="Do it",
        auto_advance_requires_signal=True,
        wip_limit=2,
        events={"on_enter": [START], "on_turn_complete": [{"type": "move_to_next"}]},
    )
    assert first["id"] and first["workflow_id"] == workflow["id"] and first["warnings"] == []
    await ok(
        surface,
        external,
        "create_workflow_step_kandev",
        workflow_id=workflow["id"],
        name="Done",
        is_final_step=True,
    )
    await ok(surface, external, "create_workflow_step_kandev", workflow_id=workflow["id"], name="Todo", position=0)
    listed = await ok(surface, external, "list_workflow_steps_kandev", workflow_id=workflow["id"])
    assert set(listed) == {"steps"}
    assert all(set(step) == STEP_KEYS for step in listed["steps"])
    assert [
        (s["name"], s["position"], s["is_start_step"], s["is_final_step"], s["auto_advance_requires_signal"])
        for s in listed["steps"]
    ] == [("Todo", 0, False, False, False), ("Work", 1, True, False, True), ("Done", 2, False, True, False)]
    work = listed["steps"][1]
    assert work["wip_limit"] == 2 and work["allow_manual_move"] is True and work["prompt"] == "Do it"
    assert work["events"] == {"on_enter": [START], "on_turn_complete": [{"type": "move_to_next"}]}
    renamed = await ok(surface, external, "update_workflow_kandev", workflow_id=workflow["id"], name="Releases")
    assert renamed["name"] == "Releases" and renamed["description"] == "Ship it" and len(renamed["steps"]) == 3


async def test_auto_advance_requires_signal_changes_only_when_sent(surface, external, workspace_id):
    _, (plan, _, _) = await pipeline(surface, external, workspace_id)
    assert plan["auto_advance_requires_signal"] is False
    step = await ok(
        surface,
        external,
        "update_workflow_step_kandev",
        step_id=plan["id"],
        auto_advance_requires_signal=True,
    )
    assert step["auto_advance_requires_signal"] is True
    step = await ok(surface, external, "update_workflow_step_kandev", step_id=plan["id"], prompt="New prompt")
    assert step["auto_advance_requires_signal"] is True and step["prompt"] == "New prompt"
    step = await ok(
        surface,
        external,
        "update_workflow_step_kandev",
        step_id=plan["id"],
        auto_advance_requires_signal=False,
    )
    assert step["auto_advance_requires_signal"] is False
    step = await ok(surface, external, "update_workflow_step_kandev", step_id=plan["id"], wip_limit=4)
    step = await ok(surface, external, "update_workflow_step_kandev", step_id=plan["id"], name="Planning")
    assert step["wip_limit"] == 4 and step["auto_advance_requires_signal"] is False
    assert (await ok(surface, external, "update_workflow_step_kandev", step_id=plan["id"], wip_limit=None))[
        "wip_limit"
    ] is None


async def test_a_loop_is_saved_and_answered_with_a_warning(surface, external, workspace_id):
    _, (plan, build, _) = await pipeline(surface, external, workspace_id)
    events = {"on_enter": [START], "on_turn_complete": [{"type": "move_to_step", "step_id": build["id"]}]}
    assert (await ok(surface, external, "update_workflow_step_kandev", step_id=plan["id"], events=events))[
        "warnings"
    ] == []
    back = {"on_enter": [START], "on_turn_complete": [{"type": "move_to_previous"}]}
    answer = await ok(surface, external, "update_workflow_step_kandev", step_id=build["id"], events=back)
    assert len(answer["warnings"]) == 1 and "'Plan' → 'Build' → 'Plan'" in answer["warnings"][0]
    assert answer["events"] == back


@pytest.mark.parametrize(
    ("arguments", "code", "fragment"),
    [
        ({"name": "x", "unexpected": SECRET}, "INVALID_ARGUMENTS", "unknown field: unexpected"),
        (
            {"name": "x", "auto_advance_requires_signal": SECRET},
            "INVALID_ARGUMENTS",
            "must be of type boolean",
        ),
        ({"name": "x", "wip_limit": 0}, "INVALID_ARGUMENTS", "too small"),
        ({"name": "x", "position": -1}, "INVALID_ARGUMENTS", "too small"),
        ({"name": "x", "events": {"on_enter": [{"type": SECRET}]}}, "INVALID_ARGUMENTS", "must be one of"),
        ({"name": "x", "events": {SECRET: []}}, "VALIDATION", "unknown event name"),
        (
            {"name": "x", "events": {"on_enter": [{"type": "auto_start_agent", SECRET: "v"}]}},
            "VALIDATION",
            "does not take",
        ),
        (
            {"name": "x", "events": {"on_turn_start": [{"type": "move_to_step", "step_id": SECRET}]}},
            "VALIDATION",
            "same workflow",
        ),
        ({"name": "plan"}, "VALIDATION", "already has this name"),
        ({"name": "x", "position": 9}, "VALIDATION", "position must be between 0 and 3"),
    ],
)
async def test_bad_step_arguments_are_tool_errors_that_change_nothing(
    surface, external, db, workspace_id, arguments, code, fragment
):
    workflow_id, _ = await pipeline(surface, external, workspace_id)
    before = await stored(db)
    error, payload = await call(surface, external, "create_workflow_step_kandev", workflow_id=workflow_id, **arguments)
    assert error and payload["code"] == code and fragment in payload["error"]
    assert SECRET not in json.dumps(payload)
    assert await stored(db) == before


async def test_reorder_and_delete_through_the_tools(surface, external, services, db, workspace_id):
    workflow_id, (plan, build, ship) = await pipeline(surface, external, workspace_id)
    before = await stored(db)
    error, payload = await call(
        surface, external, "reorder_workflow_steps_kandev", workflow_id=workflow_id, step_ids=[ship["id"]]
    )
    assert error and payload["code"] == "VALIDATION" and await stored(db) == before
    reordered = await ok(
        surface,
        external,
        "reorder_workflow_steps_kandev",
        workflow_id=workflow_id,
        step_ids=[ship["id"], build["id"], plan["id"]],
    )
    assert reordered["workflow_id"] == workflow_id and reordered["warnings"] == []
    assert [(s["name"], s["position"]) for s in reordered["steps"]] == [
        ("Ship", 0),
        ("Build", 1),
        ("Plan", 2),
    ]

    task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="T", workflow_id=workflow_id))).task
    error, payload = await call(surface, external, "delete_workflow_step_kandev", step_id=plan["id"])
    assert error and payload["code"] == "CONFLICT"
    deleted = await ok(surface, external, "delete_workflow_step_kandev", step_id=build["id"])
    assert deleted == {"id": build["id"], "deleted": True, "workflow_id": workflow_id, "warnings": []}
    error, payload = await call(surface, external, "delete_workflow_kandev", workflow_id=workflow_id)
    assert error and payload["code"] == "CONFLICT"
    await services.tasks.delete(task.id)
    assert await ok(surface, external, "delete_workflow_kandev", workflow_id=workflow_id) == {
        "id": workflow_id,
        "deleted": True,
    }
    error, payload = await call(surface, external, "list_workflow_steps_kandev", workflow_id=workflow_id)
    assert error and payload == {"error": "workflow not found", "code": "NOT_FOUND", "fields": {"entity": "workflow"}}


async def test_unknown_and_foreign_targets_are_the_same_not_found(surface, services, db, workspace_id, external):
    workflow_id, (plan, _, _) = await pipeline(surface, external, workspace_id)
    mallory = McpCaller(principal=Principal(user_id=new_id(), login="mallory"), endpoint="external")
    before = await stored(db)
    for caller, target in ((mallory, workflow_id), (external, new_id())):
        error, payload = await call(surface, caller, "update_workflow_kandev", workflow_id=target, name="Mine")
        assert error and payload == {
            "error": "workflow not found",
            "code": "NOT_FOUND",
            "fields": {"entity": "workflow"},
        }
    for caller, target in ((mallory, plan["id"]), (external, new_id())):
        error, payload = await call(surface, caller, "delete_workflow_step_kandev", step_id=target)
        assert error and payload == {
            "error": "workflow step not found",
            "code": "NOT_FOUND",
            "fields": {"entity": "workflow step"},
        }
    error, payload = await call(surface, mallory, "create_workflow_kandev", workspace_id=workspace_id, name="Mine")
    assert error and payload == {"error": "workspace not found", "code": "NOT_FOUND", "fields": {"entity": "workspace"}}
    assert await stored(db) == before


async def test_the_delete_step_tool_moves_the_steps_tasks_to_the_step_it_names(
    surface, external, services, db, workspace_id
):
    workflow_id, (plan, build, _) = await pipeline(surface, external, workspace_id)
    task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="T", workflow_id=workflow_id))).task
    before = await stored(db)
    error, payload = await call(
        surface, external, "delete_workflow_step_kandev", step_id=plan["id"], move_tasks_to_step_id=plan["id"]
    )
    assert error and payload["code"] == "VALIDATION" and await stored(db) == before
    deleted = await ok(
        surface, external, "delete_workflow_step_kandev", step_id=plan["id"], move_tasks_to_step_id=build["id"]
    )
    assert deleted == {"id": plan["id"], "deleted": True, "workflow_id": workflow_id, "warnings": []}
    assert (await services.tasks.get(task.id)).workflow_step_id == build["id"]
