"""Task dependencies through schema.execute: the gate, the recorded start, cycles and the GraphQL fields."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from kandev.domain.context import Principal
from kandev.domain.services import Services
from kandev.models import AgentProfile, QueuedPrompt, Session, Task

TASK = """id title state blockReason blockedBy { id } blocking { id } deferredLaunch { prompt agentProfileId }
  sessions { id }"""
ERRORS = "... on Error { __typename code message } ... on ValidationError { field }"
CREATE = f"""mutation($input: CreateTaskInput!) {{ createTask(input: $input) {{ __typename
  ... on CreateTaskPayload {{ task {{ {TASK} }} }} {ERRORS} }} }}"""
UPDATE = f"""mutation($input: UpdateTaskInput!) {{ updateTask(input: $input) {{ __typename
  ... on TaskPayload {{ task {{ {TASK} }} }} {ERRORS} }} }}"""
ADD = f"""mutation($input: TaskDependencyInput!) {{ addTaskDependency(input: $input) {{ __typename
  ... on TaskDependencyPayload {{ changed dependsOnTaskId task {{ {TASK} }} }} {ERRORS} }} }}"""
REMOVE = f"""mutation($input: TaskDependencyInput!) {{ removeTaskDependency(input: $input) {{ __typename
  ... on TaskDependencyPayload {{ changed task {{ {TASK} }} }} {ERRORS} }} }}"""
START = f"""mutation($input: StartTaskInput!) {{ startTask(input: $input) {{ __typename
  ... on StartTaskPayload {{ task {{ {TASK} }} }} {ERRORS} }} }}"""
GET = f"query($id: ID!) {{ task(id: $id) {{ {TASK} }} }}"


async def create(gql: Any, workspace_id: str, title: str, **fields: Any) -> dict[str, Any]:
    result = (await gql(CREATE, input={"workspaceId": workspace_id, "title": title, **fields}))["createTask"]
    assert result["__typename"] == "CreateTaskPayload", result
    return result["task"]


async def get(gql: Any, task_id: str) -> dict[str, Any]:
    return (await gql(GET, id=task_id))["task"]


async def complete(gql: Any, task_id: str, state: str = "COMPLETED") -> dict[str, Any]:
    result = (await gql(UPDATE, input={"taskId": task_id, "state": state}))["updateTask"]
    assert result["__typename"] == "TaskPayload", result
    return result["task"]


async def queued_prompts(db: Any, task_id: str) -> list[str]:
    async with db.read() as s:
        rows = await s.scalars(
            select(QueuedPrompt.text)
            .join(Session, Session.id == QueuedPrompt.session_id)
            .where(Session.task_id == task_id)
            .order_by(QueuedPrompt.seq)
        )
        return list(rows)


async def test_a_three_task_chain_created_in_one_go_starts_one_agent_at_a_time(gql, db, workspace_id):
    first = await create(gql, workspace_id, "Design", prompt="/say design")
    second = await create(gql, workspace_id, "Build", prompt="/say build", blockedBy=[first["id"]])
    third = await create(gql, workspace_id, "Ship", prompt="/say ship", blockedBy=[second["id"]])

    assert first["state"] == "SCHEDULING" and len(first["sessions"]) == 1
    for task, waits_on in ((second, first), (third, second)):
        assert task["state"] == "BLOCKED" and task["sessions"] == []
        assert task["blockedBy"] == [{"id": waits_on["id"]}]
        assert waits_on["title"] in task["blockReason"] and waits_on["id"] in task["blockReason"]
        assert task["deferredLaunch"] == {"prompt": f"/say {task['title'].lower()}", "agentProfileId": None}
    assert await queued_prompts(db, first["id"]) == ["/say design"]
    assert await queued_prompts(db, second["id"]) == [] and await queued_prompts(db, third["id"]) == []
    assert (await get(gql, first["id"]))["blocking"] == [{"id": second["id"]}]

    await complete(gql, first["id"])
    second_now = await get(gql, second["id"])
    assert second_now["state"] == "SCHEDULING" and second_now["blockReason"] is None
    assert second_now["deferredLaunch"] is None  # consumed: it can't fire twice
    assert await queued_prompts(db, second["id"]) == ["/say build"]
    assert await queued_prompts(db, third["id"]) == []
    assert (await get(gql, third["id"]))["state"] == "BLOCKED"

    await complete(gql, second["id"])
    assert await queued_prompts(db, third["id"]) == ["/say ship"]
    assert await queued_prompts(db, second["id"]) == ["/say build"]  # nothing fired a second time


async def test_the_start_waits_for_every_predecessor(gql, db, workspace_id):
    a = await create(gql, workspace_id, "A", startAgent=False)
    b = await create(gql, workspace_id, "B", startAgent=False)
    c = await create(gql, workspace_id, "C", prompt="/say c", blockedBy=[a["id"], b["id"], a["id"]])
    assert [t["id"] for t in c["blockedBy"]] == [a["id"], b["id"]]
    await complete(gql, a["id"])
    still = await get(gql, c["id"])
    assert still["state"] == "BLOCKED" and b["id"] in still["blockReason"] and a["id"] not in still["blockReason"]
    assert await queued_prompts(db, c["id"]) == []
    await complete(gql, b["id"])
    assert await queued_prompts(db, c["id"]) == ["/say c"]


async def test_start_when_unblocked_false_links_without_recording_a_start(gql, db, workspace_id):
    a = await create(gql, workspace_id, "A", startAgent=False)
    b = await create(gql, workspace_id, "B", prompt="/say b", blockedBy=[a["id"]], startWhenUnblocked=False)
    assert b["state"] == "BLOCKED" and b["deferredLaunch"] is None and b["blockedBy"] == [{"id": a["id"]}]
    await complete(gql, a["id"])
    after = await get(gql, b["id"])
    assert after["state"] == "TODO" and after["blockReason"] is None and after["sessions"] == []
    assert await queued_prompts(db, b["id"]) == []


async def test_without_a_prompt_a_dependent_records_no_start(gql, workspace_id):
    a = await create(gql, workspace_id, "A", startAgent=False)
    b = await create(gql, workspace_id, "B", blockedBy=[a["id"]])
    assert b["state"] == "BLOCKED" and b["deferredLaunch"] is None


async def test_dependencies_already_completed_let_the_create_start_right_away(gql, db, workspace_id):
    a = await create(gql, workspace_id, "A", startAgent=False)
    await complete(gql, a["id"])
    b = await create(gql, workspace_id, "B", prompt="/say b", blockedBy=[a["id"]])
    assert b["state"] == "SCHEDULING" and b["deferredLaunch"] is None
    assert await queued_prompts(db, b["id"]) == ["/say b"]


@pytest.mark.parametrize(("outcome", "word"), [("FAILED", "failed"), ("CANCELLED", "was cancelled")])
async def test_a_failed_or_cancelled_predecessor_leaves_its_dependents_blocked_with_its_name(
    gql, db, workspace_id, outcome, word
):
    a = await create(gql, workspace_id, "Migrate the schema", startAgent=False)
    b = await create(gql, workspace_id, "B", prompt="/say b", blockedBy=[a["id"]])
    await complete(gql, a["id"], outcome)
    after = await get(gql, b["id"])
    assert after["state"] == "BLOCKED"
    assert f"'Migrate the schema' ({a['id']}) {word}" in after["blockReason"]
    assert after["deferredLaunch"] is not None and after["blockedBy"] == [{"id": a["id"]}]  # no retry, no drop
    assert await queued_prompts(db, b["id"]) == []
    # ... and success later still resolves it.
    await complete(gql, a["id"], "IN_PROGRESS")
    await complete(gql, a["id"])
    assert await queued_prompts(db, b["id"]) == ["/say b"]


async def test_deleting_a_predecessor_keeps_the_dependent_blocked_until_the_link_is_removed(gql, db, workspace_id):
    a = await create(gql, workspace_id, "Gone", startAgent=False)
    b = await create(gql, workspace_id, "B", prompt="/say b", blockedBy=[a["id"]])
    await gql("mutation($id: ID!) { deleteTask(taskId: $id) { __typename } }", id=a["id"])
    after = await get(gql, b["id"])
    assert after["state"] == "BLOCKED" and "was deleted" in after["blockReason"] and after["blockedBy"] == []
    removed = (await gql(REMOVE, input={"taskId": b["id"], "dependsOnTaskId": a["id"]}))["removeTaskDependency"]
    assert removed["changed"] is True
    assert await queued_prompts(db, b["id"]) == ["/say b"]


async def test_starting_a_chain_step_by_hand_consumes_its_recorded_start(gql, db, workspace_id):
    a = await create(gql, workspace_id, "A", startAgent=False)
    b = await create(gql, workspace_id, "B", prompt="/say recorded", blockedBy=[a["id"]])
    started = (await gql(START, input={"taskId": b["id"], "prompt": "/say by hand"}))["startTask"]
    assert started["__typename"] == "StartTaskPayload"
    assert started["task"]["deferredLaunch"] is None and started["task"]["blockReason"] is None
    await complete(gql, a["id"])
    assert await queued_prompts(db, b["id"]) == ["/say by hand"]  # the gate did not fire a second start


async def test_a_start_that_fails_keeps_the_recorded_start(gql, db, services, workspace_id):
    a = await create(gql, workspace_id, "A", startAgent=False)
    b = await create(gql, workspace_id, "B", prompt="/say b", blockedBy=[a["id"]])
    async with db.transaction() as s:
        task = await s.get(Task, b["id"])
        broken = AgentProfile(workspace_id=workspace_id, name="Broken", kind="ACP", command=["no-such-agent-binary"])
        s.add(broken)
        await s.flush()
        task.deferred_launch = {**task.deferred_launch, "agent_profile_id": broken.id}
    # The predecessor's completion commits even though the start it triggers fails.
    done = await complete(gql, a["id"])
    assert done["state"] == "COMPLETED"
    after = await get(gql, b["id"])
    assert after["state"] == "BLOCKED" and "recorded start failed" in after["blockReason"]
    assert after["deferredLaunch"] is not None and after["sessions"] == []
    assert await queued_prompts(db, b["id"]) == []


async def test_the_deferred_launch_prompt_can_change_while_waiting_and_not_after_start(gql, db, workspace_id):
    a = await create(gql, workspace_id, "A", startAgent=False)
    b = await create(gql, workspace_id, "B", prompt="/say stale", blockedBy=[a["id"]])
    updated = (await gql(UPDATE, input={"taskId": b["id"], "deferredLaunchPrompt": "/say fresh"}))["updateTask"]
    assert updated["task"]["deferredLaunch"]["prompt"] == "/say fresh"
    await complete(gql, a["id"])
    assert await queued_prompts(db, b["id"]) == ["/say fresh"]
    refused = (await gql(UPDATE, input={"taskId": b["id"], "deferredLaunchPrompt": "/say late"}))["updateTask"]
    assert refused["__typename"] == "ConflictError" and "message" in refused["message"]
    never = await create(gql, workspace_id, "Never recorded", startAgent=False)
    refused = (await gql(UPDATE, input={"taskId": never["id"], "deferredLaunchPrompt": "x"}))["updateTask"]
    assert refused["__typename"] == "ConflictError"


async def test_a_link_that_closes_a_cycle_is_refused_with_the_path(gql, workspace_id):
    a = await create(gql, workspace_id, "Alpha", startAgent=False)
    b = await create(gql, workspace_id, "Beta", startAgent=False, blockedBy=[a["id"]])
    c = await create(gql, workspace_id, "Gamma", startAgent=False, blockedBy=[b["id"]])
    refused = (await gql(ADD, input={"taskId": a["id"], "dependsOnTaskId": c["id"]}))["addTaskDependency"]
    assert refused["__typename"] == "ConflictError"
    expected = [("Alpha", a), ("Gamma", c), ("Beta", b), ("Alpha", a)]
    assert " -> ".join(f"'{t}' ({x['id']})" for t, x in expected) in refused["message"]
    itself = (await gql(ADD, input={"taskId": a["id"], "dependsOnTaskId": a["id"]}))["addTaskDependency"]
    assert itself["__typename"] == "ValidationError"
    assert (await get(gql, a["id"]))["blockedBy"] == []


async def test_adding_and_removing_links_updates_the_gate_and_is_idempotent(gql, db, workspace_id):
    a = await create(gql, workspace_id, "A", startAgent=False)
    b = await create(gql, workspace_id, "B", startAgent=False)
    added = (await gql(ADD, input={"taskId": b["id"], "dependsOnTaskId": a["id"]}))["addTaskDependency"]
    assert added["changed"] is True and added["task"]["state"] == "BLOCKED"
    again = (await gql(ADD, input={"taskId": b["id"], "dependsOnTaskId": a["id"]}))["addTaskDependency"]
    assert again["changed"] is False
    removed = (await gql(REMOVE, input={"taskId": b["id"], "dependsOnTaskId": a["id"]}))["removeTaskDependency"]
    assert removed["changed"] is True and removed["task"]["state"] == "TODO" and removed["task"]["blockReason"] is None
    missing = (await gql(REMOVE, input={"taskId": b["id"], "dependsOnTaskId": a["id"]}))["removeTaskDependency"]
    assert missing["__typename"] == "TaskDependencyPayload" and missing["changed"] is False
    unknown = (await gql(ADD, input={"taskId": b["id"], "dependsOnTaskId": "nope"}))["addTaskDependency"]
    assert unknown["__typename"] == "NotFoundError"
    no_task = (await gql(ADD, input={"dependsOnTaskId": a["id"]}))["addTaskDependency"]
    assert no_task["__typename"] == "ValidationError" and no_task["field"] == "taskId"


async def test_a_running_task_gets_the_link_but_keeps_its_state(gql, workspace_id):
    a = await create(gql, workspace_id, "A", startAgent=False)
    running = await create(gql, workspace_id, "Running", prompt="/say go")
    added = (await gql(ADD, input={"taskId": running["id"], "dependsOnTaskId": a["id"]}))["addTaskDependency"]
    assert added["task"]["state"] == "SCHEDULING" and added["task"]["blockedBy"] == [{"id": a["id"]}]


async def test_links_stay_inside_one_workspace_and_unauthorized_ends_are_not_found(gql, services, db, workspace_id):
    other_ws = await services.workspaces.create("Other")
    foreign = await create(gql, other_ws.id, "Elsewhere", startAgent=False)
    mine = await create(gql, workspace_id, "Mine", startAgent=False)
    across = (await gql(ADD, input={"taskId": mine["id"], "dependsOnTaskId": foreign["id"]}))["addTaskDependency"]
    assert across["__typename"] == "ValidationError"
    created = await gql(CREATE, input={"workspaceId": workspace_id, "title": "x", "blockedBy": [foreign["id"]]})
    assert created["createTask"]["__typename"] == "ValidationError"

    stranger = Principal(user_id="someone-else", login="stranger")
    from tests.conftest import GraphQLCaller

    theirs = GraphQLCaller(Services(services.ctx.with_principal(stranger)))
    refused = (await theirs(ADD, input={"taskId": mine["id"], "dependsOnTaskId": mine["id"]}))["addTaskDependency"]
    assert refused["__typename"] == "NotFoundError"


async def test_in_a_task_session_the_waiting_end_is_the_callers_own_task(gql, services, workspace_id):
    a = await create(gql, workspace_id, "A", startAgent=False)
    own = await create(gql, workspace_id, "Own", prompt="/say hi")
    other = await create(gql, workspace_id, "Other", startAgent=False)
    session_id = own["sessions"][0]["id"]
    agent = Principal(user_id=services.principal.user_id, login="agent", session_id=session_id, task_id=own["id"])
    from tests.conftest import GraphQLCaller

    as_agent = GraphQLCaller(Services(services.ctx.with_principal(agent)))
    defaulted = (await as_agent(ADD, input={"dependsOnTaskId": a["id"]}))["addTaskDependency"]
    assert defaulted["task"]["id"] == own["id"] and defaulted["changed"] is True
    refused = (await as_agent(ADD, input={"taskId": other["id"], "dependsOnTaskId": a["id"]}))["addTaskDependency"]
    assert refused["__typename"] == "PermissionDeniedError"
    assert (await get(gql, other["id"]))["blockedBy"] == []
