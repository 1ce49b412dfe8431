"""Task queries and mutations through schema.execute, against the suite's database."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import func, select

from kandev.models import StepTransition, Task
from kandev.platform.database import Database

TASK_FIELDS = "id title state autopilot parentId pendingAction workflowStepId externalId sessions { id }"
ERROR_FIELDS = """
    ... on Error { __typename code message }
    ... on ValidationError { field }
    ... on NotFoundError { entity id }
"""
CREATE = f"""
mutation($input: CreateTaskInput!) {{
  createTask(input: $input) {{
    __typename
    ... on CreateTaskPayload {{ deduplicated creationComplete task {{ {TASK_FIELDS} }} }}
    {ERROR_FIELDS}
  }}
}}"""
UPDATE = f"""
mutation($input: UpdateTaskInput!) {{
  updateTask(input: $input) {{ __typename ... on TaskPayload {{ task {{ {TASK_FIELDS} }} }} {ERROR_FIELDS} }}
}}"""
MOVE = f"""
mutation($input: MoveTaskInput!) {{
  moveTask(input: $input) {{ __typename ... on TaskPayload {{ task {{ {TASK_FIELDS} }} }} {ERROR_FIELDS} }}
}}"""
WORKFLOWS = """
query($ws: ID!) { workflows(workspaceId: $ws) { id name steps { id name position isStartStep isFinalStep
  autoAdvanceRequiresSignal } } }"""


async def create(gql: Any, workspace_id: str, **fields: Any) -> dict[str, Any]:
    data = await gql(CREATE, input={"workspaceId": workspace_id, **fields})
    return data["createTask"]


async def steps(gql: Any, workspace_id: str) -> list[dict[str, Any]]:
    return (await gql(WORKFLOWS, ws=workspace_id))["workflows"][0]["steps"]


async def table_counts(db: Database) -> tuple[int, int]:
    async with db.read() as session:
        tasks = await session.scalar(select(func.count()).select_from(Task))
        moves = await session.scalar(select(func.count()).select_from(StepTransition))
    return tasks or 0, moves or 0


async def test_the_default_workspace_has_the_kanban_workflow_with_no_step_waiting_for_a_signal(gql, workspace_id):
    names = [
        (s["name"], s["isStartStep"], s["isFinalStep"], s["autoAdvanceRequiresSignal"])
        for s in await steps(gql, workspace_id)
    ]
    assert names == [
        ("Backlog", True, False, False),
        ("In Progress", False, False, False),
        ("Review", False, False, False),
        ("Done", False, True, False),
    ]


async def test_create_task_puts_it_in_the_start_step_as_todo(gql, workspace_id):
    result = await create(gql, workspace_id, title="  Write the docs  ", prompt="Explain the CLI", startAgent=False)
    assert result["__typename"] == "CreateTaskPayload"
    assert result["deduplicated"] is False and result["creationComplete"] is True
    task = result["task"]
    assert task["title"] == "Write the docs"
    assert task["state"] == "TODO"
    assert task["autopilot"] is False
    assert task["pendingAction"] == "NONE"
    assert task["sessions"] == []
    assert task["workflowStepId"] == (await steps(gql, workspace_id))[0]["id"]
    fetched = await gql(f"query($id: ID!) {{ task(id: $id) {{ {TASK_FIELDS} }} }}", id=task["id"])
    assert fetched["task"] == task


async def test_a_subtask_records_its_parent_and_its_own_autopilot_flag(gql, workspace_id):
    parent = (await create(gql, workspace_id, title="Parent", autopilot=True))["task"]
    child = (await create(gql, workspace_id, title="Child", parentId=parent["id"]))["task"]
    assert child["parentId"] == parent["id"]
    assert parent["autopilot"] is True and child["autopilot"] is False


@pytest.mark.parametrize(
    ("fields", "typename", "field"),
    [
        ({"title": ""}, "ValidationError", "title"),
        ({"title": "   \t "}, "ValidationError", "title"),
        ({"title": "x" * 201}, "ValidationError", "title"),
        ({"title": "ok", "workspaceId": "00000000-0000-0000-0000-000000000000"}, "NotFoundError", None),
        ({"title": "ok", "workflowId": "nope"}, "NotFoundError", None),
        ({"title": "ok", "workflowStepId": "nope"}, "NotFoundError", None),
        ({"title": "ok", "parentId": "nope"}, "NotFoundError", None),
        ({"title": "ok", "agentProfileId": "nope"}, "NotFoundError", None),
    ],
)
async def test_bad_create_input_gets_a_typed_error_and_stores_nothing(gql, db, workspace_id, fields, typename, field):
    before = await table_counts(db)
    result = await create(gql, workspace_id, **fields)
    assert result["__typename"] == typename
    if field:
        assert result["field"] == field
    assert await table_counts(db) == before


async def test_a_title_of_exactly_200_characters_is_accepted(gql, workspace_id):
    result = await create(gql, workspace_id, title="y" * 200)
    assert result["__typename"] == "CreateTaskPayload"


async def test_a_parent_in_another_workspace_is_not_found_and_nothing_is_stored(gql, services, db, workspace_id):
    other = await services.workspaces.create("Other")
    foreign_parent = (await create(gql, other.id, title="Elsewhere"))["task"]
    before = await table_counts(db)
    result = await create(gql, workspace_id, title="Child", parentId=foreign_parent["id"])
    assert result["__typename"] == "NotFoundError"
    assert result["entity"] == "parent task"
    assert await table_counts(db) == before


async def test_a_step_of_another_workspaces_workflow_is_not_found(gql, services, db, workspace_id):
    other = await services.workspaces.create("Other")
    foreign_step = (await steps(gql, other.id))[1]["id"]
    before = await table_counts(db)
    result = await create(gql, workspace_id, title="t", workflowStepId=foreign_step)
    assert result["__typename"] == "NotFoundError"
    assert await table_counts(db) == before


async def test_update_task_renames_and_rejects_bad_titles_without_changing_anything(gql, db, workspace_id):
    task = (await create(gql, workspace_id, title="Old"))["task"]
    renamed = await gql(UPDATE, input={"taskId": task["id"], "title": "New"})
    assert renamed["updateTask"]["task"]["title"] == "New"
    for bad in ("", " ", "z" * 201):
        result = (await gql(UPDATE, input={"taskId": task["id"], "title": bad}))["updateTask"]
        assert result["__typename"] == "ValidationError"
    fetched = await gql("query($id: ID!) { task(id: $id) { title } }", id=task["id"])
    assert fetched["task"]["title"] == "New"
    missing = (await gql(UPDATE, input={"taskId": "missing", "title": "x"}))["updateTask"]
    assert missing["__typename"] == "NotFoundError"


async def test_marking_a_task_completed_moves_it_to_the_final_step(gql, db, workspace_id):
    task = (await create(gql, workspace_id, title="Finish me"))["task"]
    done = (await gql(UPDATE, input={"taskId": task["id"], "state": "COMPLETED"}))["updateTask"]["task"]
    final = (await steps(gql, workspace_id))[-1]["id"]
    assert done["state"] == "COMPLETED" and done["workflowStepId"] == final
    async with db.read() as session:
        history = list(await session.scalars(select(StepTransition).where(StepTransition.task_id == task["id"])))
    assert [(h.to_step_id, h.trigger) for h in history] == [(final, "task_update")]


async def test_moving_into_the_final_step_completes_and_moving_out_reopens(gql, db, workspace_id):
    task = (await create(gql, workspace_id, title="Move me"))["task"]
    all_steps = await steps(gql, workspace_id)
    review, done = all_steps[2]["id"], all_steps[3]["id"]
    moved = (await gql(MOVE, input={"taskId": task["id"], "workflowStepId": review}))["moveTask"]["task"]
    assert moved["workflowStepId"] == review and moved["state"] == "TODO"
    completed = (await gql(MOVE, input={"taskId": task["id"], "workflowStepId": done}))["moveTask"]["task"]
    assert completed["state"] == "COMPLETED"
    reopened = (await gql(MOVE, input={"taskId": task["id"], "workflowStepId": review}))["moveTask"]["task"]
    assert reopened["state"] == "TODO"
    async with db.read() as session:
        history = list(
            await session.scalars(
                select(StepTransition).where(StepTransition.task_id == task["id"]).order_by(StepTransition.created_at)
            )
        )
    assert [(h.to_step_id, h.trigger, h.actor) for h in history] == [
        (review, "manual", "user:local"),
        (done, "manual", "user:local"),
        (review, "manual", "user:local"),
    ]


async def test_moving_to_a_step_of_another_workflow_is_not_found_and_changes_nothing(gql, services, db, workspace_id):
    other = await services.workspaces.create("Other")
    foreign_step = (await steps(gql, other.id))[2]["id"]
    task = (await create(gql, workspace_id, title="Stay"))["task"]
    before = await table_counts(db)
    result = (await gql(MOVE, input={"taskId": task["id"], "workflowStepId": foreign_step}))["moveTask"]
    assert result["__typename"] == "NotFoundError"
    assert await table_counts(db) == before
    fetched = await gql("query($id: ID!) { task(id: $id) { workflowStepId } }", id=task["id"])
    assert fetched["task"]["workflowStepId"] == task["workflowStepId"]


async def test_archived_tasks_leave_the_default_list_and_deleted_tasks_disappear(gql, workspace_id):
    keep = (await create(gql, workspace_id, title="Keep"))["task"]
    archived = (await create(gql, workspace_id, title="Archive"))["task"]
    deleted = (await create(gql, workspace_id, title="Delete"))["task"]
    await gql("mutation($id: ID!) { archiveTask(taskId: $id) { __typename } }", id=archived["id"])
    await gql("mutation($id: ID!) { deleteTask(taskId: $id) { __typename } }", id=deleted["id"])
    listing = "query($ws: ID!, $a: Boolean) { tasks(workspaceId: $ws, archived: $a) { nodes { id } totalCount } }"
    live = (await gql(listing, ws=workspace_id, a=False))["tasks"]
    assert [n["id"] for n in live["nodes"]] == [keep["id"]]
    only_archived = (await gql(listing, ws=workspace_id, a=True))["tasks"]
    assert [n["id"] for n in only_archived["nodes"]] == [archived["id"]]
    result = await gql.raw("query($id: ID!) { task(id: $id) { id } }", id=deleted["id"])
    assert result.errors and "not found" in result.errors[0].message
    again = await gql("mutation($id: ID!) { deleteTask(taskId: $id) { __typename } }", id=deleted["id"])
    assert again["deleteTask"]["__typename"] == "NotFoundError"


async def test_tasks_paginate_newest_first_and_filter_by_step_state_and_parent(gql, workspace_id):
    parent = (await create(gql, workspace_id, title="Parent"))["task"]
    children = [(await create(gql, workspace_id, title=f"Child {i}", parentId=parent["id"]))["task"] for i in range(5)]
    query = """query($ws: ID!, $after: String, $parent: ID, $state: TaskState, $step: ID) {
      tasks(workspaceId: $ws, first: 2, after: $after, parentId: $parent, state: $state, workflowStepId: $step) {
        edges { cursor node { id } } pageInfo { hasNextPage endCursor } totalCount } }"""
    seen: list[str] = []
    after = None
    while True:
        page = (await gql(query, ws=workspace_id, after=after, parent=parent["id"]))["tasks"]
        assert page["totalCount"] == 5
        seen += [e["node"]["id"] for e in page["edges"]]
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    assert seen == [c["id"] for c in reversed(children)]
    await gql(UPDATE, input={"taskId": children[0]["id"], "state": "COMPLETED"})
    completed = (await gql(query, ws=workspace_id, state="COMPLETED"))["tasks"]
    assert [e["node"]["id"] for e in completed["edges"]] == [children[0]["id"]]
    start = (await steps(gql, workspace_id))[0]["id"]
    in_start = (await gql(query, ws=workspace_id, step=start))["tasks"]
    assert in_start["totalCount"] == 5  # the parent and four children; one child completed


async def test_an_external_id_makes_a_repeat_create_answer_with_the_same_task(gql, workspace_id):
    first = await create(gql, workspace_id, title="Once", externalId="  ticket-42 ")
    again = await create(gql, workspace_id, title="Twice", externalId="ticket-42")
    assert first["deduplicated"] is False and again["deduplicated"] is True
    assert again["task"]["id"] == first["task"]["id"]
    assert again["task"]["externalId"] == "ticket-42"


async def test_a_create_with_a_prompt_starts_the_agent_unless_told_not_to(gql, db, workspace_id):
    started = (await create(gql, workspace_id, title="Go", prompt="Do the work"))["task"]
    idle = (await create(gql, workspace_id, title="Wait", prompt="Later", startAgent=False))["task"]
    bare = (await create(gql, workspace_id, title="No prompt"))["task"]
    in_progress = (await steps(gql, workspace_id))[1]["id"]
    assert started["workflowStepId"] == in_progress and len(started["sessions"]) == 1
    assert idle["sessions"] == [] and bare["sessions"] == []
    async with db.read() as session:
        from kandev.models import QueuedPrompt

        texts = list(await session.scalars(select(QueuedPrompt.text)))
    assert texts == ["Do the work"]  # the task prompt, once: the auto-start step did not add its own


async def test_autopilot_is_refused_for_a_profile_that_cannot_receive_the_task_tools(gql, db, workspace_id):
    created = await gql(
        """mutation($i: CreateAgentProfileInput!) { createAgentProfile(input: $i) {
        ... on CreateAgentProfilePayload { agentProfile { id } } } }""",
        i={
            "workspaceId": workspace_id,
            "name": "No MCP",
            "kind": "ACP",
            "command": ["python3"],
            "supportsMcp": False,
        },
    )
    profile_id = created["createAgentProfile"]["agentProfile"]["id"]
    before = await table_counts(db)
    result = await create(gql, workspace_id, title="Alone", autopilot=True, agentProfileId=profile_id)
    assert result["__typename"] == "ValidationError" and result["field"] == "autopilot"
    assert await table_counts(db) == before
    normal = await create(gql, workspace_id, title="Fine", agentProfileId=profile_id)
    assert normal["__typename"] == "CreateTaskPayload" and normal["task"]["autopilot"] is False
