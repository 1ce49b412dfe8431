"""Workflow and step configuration through schema.execute: CRUD, reorder, invariants, loop warnings, YAML."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from sqlalchemy import select

from kandev.domain.context import Principal, ServiceContext
from kandev.domain.services import Services
from kandev.domain.tasks.service import CreateTask
from kandev.models import Session, StepTransition, Task, Workflow, WorkflowStep
from kandev.models.base import new_id
from kandev.platform.database import Database
from kandev.platform.event_bus import task_channel
from tests.conftest import GraphQLCaller

STEP_FIELDS = """id name position isStartStep isFinalStep autoAdvanceRequiresSignal allowManualMove wipLimit
  prompt events workflowId"""
WORKFLOW_FIELDS = f"id name description workspaceId warnings steps {{ {STEP_FIELDS} }}"
ERRORS = """__typename
  ... on Error { code message }
  ... on ValidationError { field }
  ... on NotFoundError { entity id }"""


def mutation(name: str, input_type: str | None, selection: str, arg: str = "input") -> str:
    declared = f"$input: {input_type}!" if input_type else "$input: ID!"
    return f"mutation({declared}) {{ {name}({arg}: $input) {{ {ERRORS} {selection} }} }}"


WORKFLOW_PAYLOAD = f"... on WorkflowPayload {{ warnings workflow {{ {WORKFLOW_FIELDS} }} }}"
STEP_PAYLOAD = f"... on WorkflowStepPayload {{ warnings step {{ {STEP_FIELDS} }} workflow {{ {WORKFLOW_FIELDS} }} }}"
CREATE_WORKFLOW = mutation("createWorkflow", "CreateWorkflowInput", WORKFLOW_PAYLOAD)
UPDATE_WORKFLOW = mutation("updateWorkflow", "UpdateWorkflowInput", WORKFLOW_PAYLOAD)
DELETE_WORKFLOW = mutation("deleteWorkflow", None, "... on DeleteWorkflowPayload { workflowId }", "workflowId")
CREATE_STEP = mutation("createWorkflowStep", "CreateWorkflowStepInput", STEP_PAYLOAD)
UPDATE_STEP = mutation("updateWorkflowStep", "UpdateWorkflowStepInput", STEP_PAYLOAD)
DELETE_STEP = mutation(
    "deleteWorkflowStep",
    None,
    f"... on DeleteWorkflowStepPayload {{ stepId warnings workflow {{ {WORKFLOW_FIELDS} }} }}",
    "stepId",
)
DELETE_STEP_MOVING = f"""mutation($step: ID!, $to: ID) {{ deleteWorkflowStep(stepId: $step, moveTasksToStepId: $to) {{
  {ERRORS} ... on DeleteWorkflowStepPayload {{ stepId warnings workflow {{ {WORKFLOW_FIELDS} }} }} }} }}"""
REORDER = mutation("reorderWorkflowSteps", "ReorderWorkflowStepsInput", WORKFLOW_PAYLOAD)
IMPORT = mutation("importWorkflow", "ImportWorkflowInput", WORKFLOW_PAYLOAD)
EXPORT = "query($id: ID!) { exportWorkflow(workflowId: $id) }"
WORKFLOW = f"query($id: ID!) {{ workflow(id: $id) {{ {WORKFLOW_FIELDS} }} }}"
WORKFLOWS = "query($ws: ID!) { workflows(workspaceId: $ws) { id name } }"

START = {"type": "auto_start_agent"}
NEXT = {"type": "move_to_next"}
PREVIOUS = {"type": "move_to_previous"}


async def run(gql: GraphQLCaller, document: str, value: Any) -> dict[str, Any]:
    data = await gql(document, input=value)
    return next(iter(data.values()))


async def new_workflow(gql: GraphQLCaller, workspace_id: str, name: str = "Pipeline", **fields: Any) -> dict[str, Any]:
    result = await run(gql, CREATE_WORKFLOW, {"workspaceId": workspace_id, "name": name, **fields})
    assert result["__typename"] == "WorkflowPayload", result
    return result["workflow"]


async def add_step(gql: GraphQLCaller, workflow_id: str, name: str, **fields: Any) -> dict[str, Any]:
    result = await run(gql, CREATE_STEP, {"workflowId": workflow_id, "name": name, **fields})
    assert result["__typename"] == "WorkflowStepPayload", result
    return result["step"]


async def update_step(gql: GraphQLCaller, step_id: str, **fields: Any) -> dict[str, Any]:
    return await run(gql, UPDATE_STEP, {"stepId": step_id, **fields})


async def three_steps(gql: GraphQLCaller, workspace_id: str) -> tuple[str, list[dict[str, Any]]]:
    workflow = await new_workflow(gql, workspace_id)
    steps = [await add_step(gql, workflow["id"], name) for name in ("Plan", "Build", "Ship")]
    return workflow["id"], steps


async def read_workflow(gql: GraphQLCaller, workflow_id: str) -> dict[str, Any]:
    return (await gql(WORKFLOW, id=workflow_id))["workflow"]


async def snapshot(db: Database) -> list[tuple[Any, ...]]:
    """Every stored workflow and step column, to show a refused write changed nothing."""
    async with db.read() as session:
        workflows = [
            (w.id, w.name, w.description, w.updated_at)
            for w in await session.scalars(select(Workflow).order_by(Workflow.id))
        ]
        steps = [
            (
                s.id,
                s.workflow_id,
                s.name,
                s.position,
                s.is_start_step,
                s.is_final_step,
                s.prompt,
                s.events,
                s.auto_advance_requires_signal,
                s.allow_manual_move,
                s.wip_limit,
                s.updated_at,
            )
            for s in await session.scalars(select(WorkflowStep).order_by(WorkflowStep.id))
        ]
        tasks = [(t.id, t.workflow_step_id) for t in await session.scalars(select(Task).order_by(Task.id))]
    return [*workflows, *steps, *tasks]


def flags(workflow: dict[str, Any]) -> list[tuple[str, int, bool, bool]]:
    return [(s["name"], s["position"], s["isStartStep"], s["isFinalStep"]) for s in workflow["steps"]]


# -- workflows ----------------------------------------------------------------------------------


async def test_a_new_workflow_is_empty_listed_and_renamable(gql, workspace_id):
    workflow = await new_workflow(gql, workspace_id, name="  Release  ", description="Ship things")
    assert workflow["name"] == "Release" and workflow["description"] == "Ship things"
    assert workflow["steps"] == [] and workflow["warnings"] == [] and workflow["workspaceId"] == workspace_id
    listed = (await gql(WORKFLOWS, ws=workspace_id))["workflows"]
    assert [w["name"] for w in listed] == ["Kanban", "Release"]
    renamed = await run(gql, UPDATE_WORKFLOW, {"workflowId": workflow["id"], "name": "Releases"})
    assert renamed["workflow"]["name"] == "Releases" and renamed["workflow"]["description"] == "Ship things"


@pytest.mark.parametrize(
    ("fields", "typename", "field"),
    [
        ({"name": ""}, "ValidationError", "name"),
        ({"name": " \t "}, "ValidationError", "name"),
        ({"name": "x" * 201}, "ValidationError", "name"),
        ({"name": "ok", "description": "d" * 10_001}, "ValidationError", "description"),
        ({"name": "ok", "workspaceId": new_id()}, "NotFoundError", None),
    ],
)
async def test_bad_workflow_input_gets_a_typed_error_and_changes_nothing(
    gql, db, workspace_id, fields, typename, field
):
    before = await snapshot(db)
    result = await run(gql, CREATE_WORKFLOW, {"workspaceId": workspace_id, **fields})
    assert result["__typename"] == typename and result.get("field") == field
    assert await snapshot(db) == before


async def test_a_name_of_exactly_200_characters_is_accepted(gql, workspace_id):
    assert (await new_workflow(gql, workspace_id, name="n" * 200))["name"] == "n" * 200


async def test_the_default_workflow_and_one_in_use_cannot_be_deleted(gql, services, db, workspace_id):
    default_id = (await services.workspaces.get(workspace_id)).default_workflow_id
    result = await gql(DELETE_WORKFLOW, input=default_id)
    assert result["deleteWorkflow"]["__typename"] == "ConflictError"
    workflow_id, _ = await three_steps(gql, workspace_id)
    task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="T", workflow_id=workflow_id))).task
    await services.tasks.archive(task.id)
    before = await snapshot(db)
    result = (await gql(DELETE_WORKFLOW, input=workflow_id))["deleteWorkflow"]
    assert result["__typename"] == "ConflictError" and "1 task" in result["message"]
    assert await snapshot(db) == before
    await services.tasks.delete(task.id)
    result = (await gql(DELETE_WORKFLOW, input=workflow_id))["deleteWorkflow"]
    assert result == {"__typename": "DeleteWorkflowPayload", "workflowId": workflow_id}
    async with db.read() as session:
        assert await session.get(Workflow, workflow_id) is None
        assert list(await session.scalars(select(WorkflowStep).where(WorkflowStep.workflow_id == workflow_id))) == []


async def test_another_users_workflow_looks_exactly_like_an_unknown_one(gql, services, db, workspace_id):
    workflow_id, steps = await three_steps(gql, workspace_id)
    mallory = Principal(user_id=new_id(), login="mallory")
    stranger = GraphQLCaller(Services(ServiceContext(**{**vars(services.ctx), "principal": mallory})))
    before = await snapshot(db)
    for real, unknown, document, key in [
        (workflow_id, new_id(), UPDATE_WORKFLOW, "workflowId"),
        (workflow_id, new_id(), CREATE_STEP, "workflowId"),
        (steps[0]["id"], new_id(), UPDATE_STEP, "stepId"),
    ]:
        extra = {"name": "x"} if document is not UPDATE_STEP else {}
        seen = await run(stranger, document, {key: real, **extra})
        missing = await run(gql, document, {key: unknown, **extra})
        assert seen["__typename"] == missing["__typename"] == "NotFoundError"
        assert seen["message"] == missing["message"] and seen["entity"] == missing["entity"]
    for document in (DELETE_WORKFLOW, DELETE_STEP):
        target = workflow_id if document is DELETE_WORKFLOW else steps[0]["id"]
        assert (await stranger(document, input=target)).popitem()[1]["__typename"] == "NotFoundError"
    exported = await stranger.raw(EXPORT, id=workflow_id)
    assert exported.errors[0].message == "workflow not found"
    assert await snapshot(db) == before


# -- steps --------------------------------------------------------------------------------------


async def test_steps_append_by_default_and_an_insert_shifts_the_rest(gql, workspace_id):
    workflow_id, _ = await three_steps(gql, workspace_id)
    await add_step(gql, workflow_id, "Triage", position=0)
    await add_step(gql, workflow_id, "Review", position=3)
    await add_step(gql, workflow_id, "Archive", position=5)
    workflow = await read_workflow(gql, workflow_id)
    assert [(s["name"], s["position"]) for s in workflow["steps"]] == [
        ("Triage", 0),
        ("Plan", 1),
        ("Build", 2),
        ("Review", 3),
        ("Ship", 4),
        ("Archive", 5),
    ]


async def test_a_new_step_has_false_flags_manual_moves_and_no_limit(gql, workspace_id):
    workflow = await new_workflow(gql, workspace_id)
    step = await add_step(gql, workflow["id"], "Only")
    assert step["isStartStep"] is True  # the first step of a workflow becomes its start
    assert step["isFinalStep"] is False and step["autoAdvanceRequiresSignal"] is False
    assert step["allowManualMove"] is True and step["wipLimit"] is None
    assert step["events"] == {} and step["prompt"] == "" and step["workflowId"] == workflow["id"]


async def test_exactly_one_start_step_and_at_most_one_final_step(gql, workspace_id):
    workflow_id, (plan, build, ship) = await three_steps(gql, workspace_id)
    assert flags(await read_workflow(gql, workflow_id)) == [
        ("Plan", 0, True, False),
        ("Build", 1, False, False),
        ("Ship", 2, False, False),
    ]
    await update_step(gql, build["id"], isStartStep=True)
    await update_step(gql, ship["id"], isFinalStep=True)
    await add_step(gql, workflow_id, "Done", isFinalStep=True)
    assert flags(await read_workflow(gql, workflow_id)) == [
        ("Plan", 0, False, False),
        ("Build", 1, True, False),
        ("Ship", 2, False, False),
        ("Done", 3, False, True),
    ]
    # Without a start step the first step is the start again.
    await update_step(gql, build["id"], isStartStep=False)
    assert [s["isStartStep"] for s in (await read_workflow(gql, workflow_id))["steps"]] == [
        True,
        False,
        False,
        False,
    ]


async def test_auto_advance_requires_signal_keeps_its_value_unless_sent(gql, workspace_id):
    workflow_id, (plan, _, _) = await three_steps(gql, workspace_id)
    assert plan["autoAdvanceRequiresSignal"] is False
    step = (await update_step(gql, plan["id"], autoAdvanceRequiresSignal=True))["step"]
    assert step["autoAdvanceRequiresSignal"] is True
    step = (await update_step(gql, plan["id"], name="Planning"))["step"]
    assert step["autoAdvanceRequiresSignal"] is True and step["name"] == "Planning"
    step = (await update_step(gql, plan["id"], autoAdvanceRequiresSignal=None))["step"]
    assert step["autoAdvanceRequiresSignal"] is True
    step = (await update_step(gql, plan["id"], autoAdvanceRequiresSignal=False))["step"]
    assert step["autoAdvanceRequiresSignal"] is False
    gated = await add_step(gql, workflow_id, "Gated", autoAdvanceRequiresSignal=True)
    assert gated["autoAdvanceRequiresSignal"] is True


async def test_wip_limit_is_kept_when_omitted_and_removed_by_null(gql, workspace_id):
    _, (plan, _, _) = await three_steps(gql, workspace_id)
    assert (await update_step(gql, plan["id"], wipLimit=3))["step"]["wipLimit"] == 3
    assert (await update_step(gql, plan["id"], prompt="Plan it"))["step"]["wipLimit"] == 3
    step = (await update_step(gql, plan["id"], wipLimit=None, allowManualMove=False))["step"]
    assert step["wipLimit"] is None and step["allowManualMove"] is False and step["prompt"] == "Plan it"


async def test_events_are_stored_normalized_and_move_to_step_names_a_step(gql, workspace_id):
    _, (plan, build, _) = await three_steps(gql, workspace_id)
    events = {
        "on_turn_complete": [{"type": "move_to_step", "step_id": plan["id"]}, {"type": "disable_plan_mode"}],
        "on_enter": [{"type": "auto_start_agent", "prompt": "Build it"}, {"type": "enable_plan_mode"}],
        "on_exit": [],
    }
    step = (await update_step(gql, build["id"], events=events))["step"]
    assert step["events"] == {
        "on_enter": [{"type": "auto_start_agent", "prompt": "Build it"}, {"type": "enable_plan_mode"}],
        "on_turn_complete": [{"type": "move_to_step", "step_id": plan["id"]}, {"type": "disable_plan_mode"}],
    }
    assert (await update_step(gql, build["id"], events={}))["step"]["events"] == {}


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"name": ""}, "name"),
        ({"name": "x" * 201}, "name"),
        ({"name": "plan"}, "name"),  # names are unique per workflow, whatever the case
        ({"position": -1}, "position"),
        ({"position": 4}, "position"),
        ({"wipLimit": 0}, "wipLimit"),
        ({"events": {"on_enter": [{"type": "move_to_next"}]}}, "events"),
        ({"events": {"on_start": []}}, "events"),
        ({"events": {"on_turn_complete": [{"type": "move_to_step", "step_id": "elsewhere"}]}}, "events"),
        ({"events": ["not", "an", "object"]}, "events"),
    ],
)
async def test_bad_step_input_gets_a_validation_error_and_changes_nothing(gql, db, workspace_id, fields, field):
    workflow_id, steps = await three_steps(gql, workspace_id)
    before = await snapshot(db)
    created = await run(gql, CREATE_STEP, {"workflowId": workflow_id, "name": "New", **fields})
    assert created["__typename"] == "ValidationError" and created["field"] == field
    update = {**fields, "position": 3} if fields.get("position") == 4 else fields
    if field == "name" and fields["name"] == "plan":
        update = {"name": "BUILD"}
    updated = await update_step(gql, steps[0]["id"], **update)
    assert updated["__typename"] == "ValidationError" and updated["field"] == field
    assert await snapshot(db) == before


async def test_a_move_to_a_step_of_another_workflow_is_refused(gql, services, db, workspace_id):
    _, (plan, _, _) = await three_steps(gql, workspace_id)
    kanban = (await services.workspaces.get(workspace_id)).default_workflow_id
    backlog = (await read_workflow(gql, kanban))["steps"][0]
    before = await snapshot(db)
    events = {"on_turn_complete": [{"type": "move_to_step", "step_id": backlog["id"]}]}
    result = await update_step(gql, plan["id"], events=events)
    assert result["__typename"] == "ValidationError" and result["field"] == "events"
    assert await snapshot(db) == before


async def test_moving_a_step_by_position_renumbers_the_others(gql, workspace_id):
    workflow_id, (plan, _, _) = await three_steps(gql, workspace_id)
    await update_step(gql, plan["id"], position=2)
    assert flags(await read_workflow(gql, workflow_id)) == [
        ("Build", 0, False, False),
        ("Ship", 1, False, False),
        ("Plan", 2, True, False),
    ]


async def test_a_step_with_tasks_or_referenced_by_a_move_cannot_be_deleted(gql, services, db, workspace_id):
    workflow_id, (plan, build, ship) = await three_steps(gql, workspace_id)
    task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="T", workflow_id=workflow_id))).task
    await services.tasks.archive(task.id)
    await update_step(gql, build["id"], events={"on_turn_complete": [{"type": "move_to_step", "step_id": ship["id"]}]})
    before = await snapshot(db)
    held = (await gql(DELETE_STEP, input=plan["id"]))["deleteWorkflowStep"]
    assert held["__typename"] == "ConflictError" and "move them first" in held["message"]
    referenced = (await gql(DELETE_STEP, input=ship["id"]))["deleteWorkflowStep"]
    assert referenced["__typename"] == "ConflictError" and "'Build'" in referenced["message"]
    assert await snapshot(db) == before
    # A deleted task no longer holds its step; the start flag moves to the new first step.
    await services.tasks.delete(task.id)
    deleted = (await gql(DELETE_STEP, input=plan["id"]))["deleteWorkflowStep"]
    assert deleted["__typename"] == "DeleteWorkflowStepPayload" and deleted["stepId"] == plan["id"]
    assert flags(deleted["workflow"]) == [("Build", 0, True, False), ("Ship", 1, False, False)]
    async with db.read() as session:
        assert await session.get(Task, task.id) is None


async def test_deleting_a_step_toward_another_moves_its_tasks_there_with_move_events_and_starts_no_agent(
    gql, services, bus, db, workspace_id
):
    workflow_id, (plan, build, ship) = await three_steps(gql, workspace_id)
    # The target auto-starts the agent and turns plan mode on: a relocation does neither.
    await update_step(gql, build["id"], events={"on_enter": [START, {"type": "enable_plan_mode"}]})
    ids = []
    for title in ("First", "Second"):
        made = await services.tasks.create(CreateTask(workspace_id=workspace_id, title=title, workflow_id=workflow_id))
        ids.append(made.task.id)
    await services.tasks.archive(ids[1])
    async with bus.subscribe(task_channel(workspace_id)) as events:
        deleted = (await gql(DELETE_STEP_MOVING, step=plan["id"], to=build["id"]))["deleteWorkflowStep"]
        received = [await asyncio.wait_for(anext(events), timeout=5) for _ in ids]
    assert deleted["__typename"] == "DeleteWorkflowStepPayload" and deleted["stepId"] == plan["id"]
    assert flags(deleted["workflow"]) == [("Build", 0, True, False), ("Ship", 1, False, False)]
    assert [(e["kind"], e["task"]["id"], e["task"]["workflow_step_id"]) for e in received] == [
        ("MOVED", ids[0], build["id"]),
        ("MOVED", ids[1], build["id"]),
    ]
    async with db.read() as session:
        tasks = list(await session.scalars(select(Task).where(Task.id.in_(ids))))
        transitions = list(await session.scalars(select(StepTransition).where(StepTransition.task_id.in_(ids))))
        sessions = list(await session.scalars(select(Session).where(Session.task_id.in_(ids))))
    assert {t.workflow_step_id for t in tasks} == {build["id"]}
    moves = [t for t in transitions if t.to_step_id == build["id"]]
    assert len(moves) == 2
    assert {(m.from_step_id, m.trigger, m.details["deleted_step_name"]) for m in moves} == {
        (plan["id"], "step_deleted", "Plan")
    }
    assert sessions == []


async def test_tasks_moved_onto_the_final_step_by_a_step_delete_are_completed_like_any_move(
    gql, services, workspace_id
):
    workflow_id, (plan, _, ship) = await three_steps(gql, workspace_id)
    await update_step(gql, ship["id"], isFinalStep=True)
    task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="T", workflow_id=workflow_id))).task
    deleted = (await gql(DELETE_STEP_MOVING, step=plan["id"], to=ship["id"]))["deleteWorkflowStep"]
    assert deleted["__typename"] == "DeleteWorkflowStepPayload"
    moved = await services.tasks.get(task.id)
    assert (moved.workflow_step_id, moved.state) == (ship["id"], "COMPLETED")


async def test_a_step_deleted_toward_another_workflows_step_or_itself_is_refused_and_changes_nothing(
    gql, services, db, workspace_id
):
    workflow_id, (plan, build, _) = await three_steps(gql, workspace_id)
    other = await new_workflow(gql, workspace_id, "Other")
    elsewhere = await add_step(gql, other["id"], "Elsewhere")
    await services.tasks.create(CreateTask(workspace_id=workspace_id, title="T", workflow_id=workflow_id))
    before = await snapshot(db)
    foreign = (await gql(DELETE_STEP_MOVING, step=plan["id"], to=elsewhere["id"]))["deleteWorkflowStep"]
    assert foreign["__typename"] == "NotFoundError" and foreign["entity"] == "workflow step"
    unknown = (await gql(DELETE_STEP_MOVING, step=plan["id"], to=new_id()))["deleteWorkflowStep"]
    assert unknown["__typename"] == "NotFoundError" and unknown["entity"] == "workflow step"
    itself = (await gql(DELETE_STEP_MOVING, step=plan["id"], to=plan["id"]))["deleteWorkflowStep"]
    assert itself["__typename"] == "ValidationError" and itself["field"] == "moveTasksToStepId"
    assert await snapshot(db) == before


async def test_a_step_another_step_moves_to_is_refused_even_with_a_target_for_its_tasks(
    gql, services, db, workspace_id
):
    workflow_id, (plan, build, ship) = await three_steps(gql, workspace_id)
    await update_step(gql, build["id"], events={"on_turn_complete": [{"type": "move_to_step", "step_id": ship["id"]}]})
    task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="T", workflow_id=workflow_id))).task
    await services.tasks.move(task.id, ship["id"])
    before = await snapshot(db)
    referenced = (await gql(DELETE_STEP_MOVING, step=ship["id"], to=plan["id"]))["deleteWorkflowStep"]
    assert referenced["__typename"] == "ConflictError" and "'Build'" in referenced["message"]
    assert await snapshot(db) == before


async def test_another_user_can_neither_delete_a_step_nor_move_its_tasks(gql, bob, db, workspace_id):
    workflow_id, (plan, build, _) = await three_steps(gql, workspace_id)
    before = await snapshot(db)
    theirs = (await GraphQLCaller(bob)(DELETE_STEP_MOVING, step=plan["id"], to=build["id"]))["deleteWorkflowStep"]
    assert theirs["__typename"] == "NotFoundError" and theirs["entity"] == "workflow step"
    assert await snapshot(db) == before


async def test_reorder_takes_every_step_once(gql, db, workspace_id):
    workflow_id, (plan, build, ship) = await three_steps(gql, workspace_id)
    before = await snapshot(db)
    for step_ids in (
        [ship["id"], plan["id"]],
        [ship["id"], plan["id"], plan["id"]],
        [ship["id"], plan["id"], build["id"], build["id"]],
        [ship["id"], plan["id"], new_id()],
    ):
        result = await run(gql, REORDER, {"workflowId": workflow_id, "stepIds": step_ids})
        assert result["__typename"] == "ValidationError" and result["field"] == "stepIds"
    assert await snapshot(db) == before
    result = await run(gql, REORDER, {"workflowId": workflow_id, "stepIds": [ship["id"], plan["id"], build["id"]]})
    assert flags(result["workflow"]) == [
        ("Ship", 0, False, False),
        ("Plan", 1, True, False),
        ("Build", 2, False, False),
    ]
    missing = await run(gql, REORDER, {"workflowId": new_id(), "stepIds": []})
    assert missing["__typename"] == "NotFoundError"


# -- loop warnings ------------------------------------------------------------------------------


async def test_saving_a_ping_pong_pair_warns_and_a_human_gate_clears_it(gql, workspace_id):
    workflow_id, (plan, build, _) = await three_steps(gql, workspace_id)
    first = await update_step(gql, plan["id"], events={"on_enter": [START], "on_turn_complete": [NEXT]})
    assert first["warnings"] == []
    second = await update_step(gql, build["id"], events={"on_enter": [START], "on_turn_complete": [PREVIOUS]})
    [warning] = second["warnings"]
    assert "'Plan' → 'Build' → 'Plan'" in warning
    assert second["workflow"]["warnings"] == [warning]
    assert (await read_workflow(gql, workflow_id))["warnings"] == [warning]
    gated = await update_step(gql, build["id"], events={"on_turn_complete": [PREVIOUS]})
    assert gated["warnings"] == [] and (await read_workflow(gql, workflow_id))["warnings"] == []


async def test_a_reorder_that_creates_a_loop_warns(gql, workspace_id):
    workflow_id, (plan, build, ship) = await three_steps(gql, workspace_id)
    await update_step(gql, plan["id"], events={"on_enter": [START], "on_turn_complete": [NEXT]})
    await update_step(gql, ship["id"], events={"on_enter": [START], "on_turn_complete": [PREVIOUS]})
    result = await run(gql, REORDER, {"workflowId": workflow_id, "stepIds": [plan["id"], ship["id"], build["id"]]})
    assert len(result["warnings"]) == 1 and "'Plan' → 'Ship'" in result["warnings"][0]


# -- YAML ---------------------------------------------------------------------------------------


def comparable(workflow: dict[str, Any]) -> dict[str, Any]:
    """A workflow with step ids in move_to_step replaced by step names, ids and owner dropped."""
    names = {s["id"]: s["name"] for s in workflow["steps"]}
    steps = []
    for step in workflow["steps"]:
        events = {
            event: [{**a, "step_id": names[a["step_id"]]} if "step_id" in a else a for a in actions]
            for event, actions in step["events"].items()
        }
        steps.append({k: v for k, v in step.items() if k not in ("id", "workflowId")} | {"events": events})
    return {
        "name": workflow["name"],
        "description": workflow["description"],
        "steps": steps,
        "warnings": workflow["warnings"],
    }


async def test_export_then_import_gives_an_equal_workflow(gql, workspace_id):
    workflow = await new_workflow(gql, workspace_id, name="Full", description="Every field: 'quotes', #hash\nand lines")
    review = await add_step(gql, workflow["id"], "Review: code", prompt="Check the diff.\nThen say so.\n", wipLimit=2)
    await add_step(
        gql,
        workflow["id"],
        "Build",
        position=0,
        isStartStep=True,
        autoAdvanceRequiresSignal=True,
        allowManualMove=False,
        events={
            "on_enter": [
                {"type": "auto_start_agent", "prompt": "Build: now"},
                {"type": "reset_agent_context"},
            ],
            "on_turn_complete": [{"type": "move_to_step", "step_id": review["id"]}],
            "on_exit": [{"type": "disable_plan_mode"}],
        },
    )
    await add_step(gql, workflow["id"], "Done", isFinalStep=True, events={"on_children_completed": [PREVIOUS]})
    original = await read_workflow(gql, workflow["id"])
    text = (await gql(EXPORT, id=workflow["id"]))["exportWorkflow"]
    assert "step: 'Review: code'" in text and "step_id" not in text and workflow["id"] not in text
    imported = await run(gql, IMPORT, {"workspaceId": workspace_id, "yaml": text})
    assert imported["__typename"] == "WorkflowPayload"
    copy = imported["workflow"]
    assert copy["id"] != original["id"] and {s["id"] for s in copy["steps"]}.isdisjoint(
        s["id"] for s in original["steps"]
    )
    assert comparable(copy) == comparable(original)
    assert (await gql(EXPORT, id=copy["id"]))["exportWorkflow"] == text


async def test_the_default_kanban_workflow_round_trips(gql, services, workspace_id):
    kanban = (await services.workspaces.get(workspace_id)).default_workflow_id
    text = (await gql(EXPORT, id=kanban))["exportWorkflow"]
    imported = await run(gql, IMPORT, {"workspaceId": workspace_id, "yaml": text})
    assert comparable(imported["workflow"]) == comparable(await read_workflow(gql, kanban))


async def test_an_imported_loop_is_saved_with_its_warning(gql, workspace_id):
    text = """
name: Ping pong
steps:
  - name: Ping
    events: {on_enter: [{type: auto_start_agent}], on_turn_complete: [{type: move_to_step, step: Pong}]}
  - name: Pong
    events: {on_enter: [{type: auto_start_agent}], on_turn_complete: [{type: move_to_previous}]}
"""
    result = await run(gql, IMPORT, {"workspaceId": workspace_id, "yaml": text})
    assert len(result["warnings"]) == 1 and "'Ping' → 'Pong' → 'Ping'" in result["warnings"][0]
    assert flags(result["workflow"]) == [("Ping", 0, True, False), ("Pong", 1, False, False)]


SECRET = "sk-live-SECRET-4242"
BAD_YAML = [
    ("", "must not be empty"),
    ("name: [unclosed", "could not be parsed (line 1"),
    (f"- {SECRET}", "must be a mapping"),
    (f"name: ok\n{SECRET}: 1", "unknown keys"),
    ("name: ok\nversion: 2", "version must be 1"),
    ("name: ''", "name must not be empty"),
    ("steps: []", "name must be a string"),
    ("name: ok\nsteps: {}", "steps must be a list"),
    ("name: ok\nsteps: [{prompt: x}]", "steps[0].name is required"),
    (f"name: ok\nsteps: [{{name: a, {SECRET}: 1}}]", "steps[0] has unknown keys"),
    ("name: ok\nsteps: [{name: a, wip_limit: 0}]", "steps[0]: wipLimit must be"),
    ("name: ok\nsteps: [{name: a, wip_limit: true}]", "steps[0].wip_limit has the wrong type"),
    (
        "name: ok\nsteps: [{name: a, is_start_step: 'yes please'}]",
        "steps[0].is_start_step has the wrong type",
    ),
    ("name: ok\nsteps: [{name: a}, {name: A}]", "steps[1]: another step already has this name"),
    (
        "name: ok\nsteps: [{name: a, is_final_step: true}, {name: b, is_final_step: true}]",
        "only one step may set",
    ),
    (
        f"name: ok\nsteps: [{{name: a, events: {{on_turn_complete: [{{type: move_to_step, step: {SECRET}}}]}}}}]",
        "steps[0].events.on_turn_complete[0].step must name a step",
    ),
    (
        "name: ok\nsteps: [{name: a, events: {on_enter: [{type: move_to_next}]}}]",
        "steps[0]: events.on_enter[0].type",
    ),
]


@pytest.mark.parametrize(("text", "fragment"), BAD_YAML)
async def test_bad_yaml_gets_a_validation_error_and_imports_nothing(gql, db, workspace_id, text, fragment):
    before = await snapshot(db)
    result = await run(gql, IMPORT, {"workspaceId": workspace_id, "yaml": text})
    assert result["__typename"] == "ValidationError" and result["field"] == "yaml"
    assert fragment in result["message"] and SECRET not in result["message"]
    assert await snapshot(db) == before


async def test_import_into_an_unknown_workspace_is_not_found(gql, db):
    before = await snapshot(db)
    result = await run(gql, IMPORT, {"workspaceId": new_id(), "yaml": "name: ok"})
    assert result["__typename"] == "NotFoundError" and await snapshot(db) == before
