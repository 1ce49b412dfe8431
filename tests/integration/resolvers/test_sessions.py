"""Starting tasks, sending messages and stopping, through schema.execute (no worker runs here)."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import func, select

from kandev.domain.errors import NotFoundError, ValidationError
from kandev.domain.sessions.transcript import append_message
from kandev.models import QueuedPrompt, Session, StepTransition
from tests.support.board import add_tasks, add_transcript
from tests.support.client_ops import client_operations
from tests.support.factories import gql_task

START = """mutation($input: StartTaskInput!) { startTask(input: $input) { __typename
  ... on StartTaskPayload { task { id state workflowStepId } session { id state isPrimary } }
  ... on Error { code message } } }"""
SEND = """mutation($input: SendMessageInput!) { sendMessage(input: $input) { __typename
  ... on SendMessagePayload { session { id } queuedPromptId }
  ... on Error { code message } ... on ValidationError { field } } }"""
STOP = """mutation($id: ID!) { stopTask(taskId: $id) { __typename
  ... on StopTaskPayload { status task { state } stoppedSessions { id state } } ... on Error { code } } }"""
STEPS = "query($ws: ID!) { workflows(workspaceId: $ws) { steps { id name } } }"


async def prompts_of(db: Any, session_id: str) -> list[tuple[str, str]]:
    async with db.read() as s:
        rows = await s.scalars(
            select(QueuedPrompt).where(QueuedPrompt.session_id == session_id).order_by(QueuedPrompt.seq)
        )
        return [(p.text, p.state) for p in rows]


async def test_start_task_from_the_start_step_moves_to_in_progress_and_queues_exactly_one_prompt(gql, db, workspace_id):
    task = await gql_task(gql, workspace_id)
    started = (await gql(START, input={"taskId": task["id"], "prompt": "/say hello"}))["startTask"]
    assert started["__typename"] == "StartTaskPayload"
    steps = (await gql(STEPS, ws=workspace_id))["workflows"][0]["steps"]
    assert started["task"]["workflowStepId"] == steps[1]["id"]  # In Progress: its on-enter auto-starts
    assert started["task"]["state"] == "SCHEDULING"
    assert started["session"]["isPrimary"] is True and started["session"]["state"] == "CREATED"
    # the given prompt replaced the step prompt: one prompt, one turn
    assert await prompts_of(db, started["session"]["id"]) == [("/say hello", "QUEUED")]
    async with db.read() as s:
        triggers = list(await s.scalars(select(StepTransition.trigger).where(StepTransition.task_id == task["id"])))
    assert triggers == ["start_task"]


async def test_moving_a_task_into_an_auto_start_step_queues_the_step_prompt(gql, db, workspace_id):
    task = await gql_task(gql, workspace_id, prompt="Build the thing", startAgent=False)
    steps = (await gql(STEPS, ws=workspace_id))["workflows"][0]["steps"]
    move = "mutation($i: MoveTaskInput!) { moveTask(input: $i) { __typename } }"
    assert (await gql(move, i={"taskId": task["id"], "workflowStepId": steps[1]["id"]}))["moveTask"][
        "__typename"
    ] == "TaskPayload"
    async with db.read() as s:
        session = await s.scalar(select(Session).where(Session.task_id == task["id"]))
    assert session is not None
    assert await prompts_of(db, session.id) == [("Build the thing", "QUEUED")]


async def test_start_task_outside_the_start_step_starts_the_agent_where_the_task_is(gql, db, workspace_id):
    steps = (await gql(STEPS, ws=workspace_id))["workflows"][0]["steps"]
    task = await gql_task(gql, workspace_id, workflowStepId=steps[2]["id"])
    started = (await gql(START, input={"taskId": task["id"], "prompt": "review please"}))["startTask"]
    assert started["task"]["workflowStepId"] == steps[2]["id"]
    assert await prompts_of(db, started["session"]["id"]) == [("review please", "QUEUED")]


async def test_an_unavailable_profile_is_refused_by_name_before_any_session_exists(gql, db, workspace_id):
    created = await gql(
        """mutation($i: CreateAgentProfileInput!) { createAgentProfile(input: $i) {
        ... on CreateAgentProfilePayload { agentProfile { id available missingCommand } } } }""",
        i={
            "workspaceId": workspace_id,
            "name": "Ghost",
            "kind": "ACP",
            "command": ["no-such-agent-binary", "--acp"],
        },
    )
    profile = created["createAgentProfile"]["agentProfile"]
    assert profile["available"] is False and profile["missingCommand"] == "no-such-agent-binary"
    task = await gql_task(gql, workspace_id)
    result = (await gql(START, input={"taskId": task["id"], "agentProfileId": profile["id"]}))["startTask"]
    assert result["__typename"] == "ConflictError"
    assert "no-such-agent-binary" in result["message"]
    async with db.read() as s:
        assert await s.scalar(select(func.count()).select_from(Session)) == 0


async def test_send_message_goes_to_the_primary_session_and_refuses_a_terminal_one(gql, db, workspace_id):
    task = await gql_task(gql, workspace_id)
    no_session = (await gql(SEND, input={"taskId": task["id"], "prompt": "hi"}))["sendMessage"]
    assert no_session["__typename"] == "ConflictError" and "startTask" in no_session["message"]
    session_id = (await gql(START, input={"taskId": task["id"], "prompt": "first"}))["startTask"]["session"]["id"]
    sent = (await gql(SEND, input={"taskId": task["id"], "prompt": "second"}))["sendMessage"]
    assert sent["session"]["id"] == session_id
    assert await prompts_of(db, session_id) == [("first", "QUEUED"), ("second", "QUEUED")]
    empty = (await gql(SEND, input={"taskId": task["id"], "prompt": "   "}))["sendMessage"]
    assert empty["__typename"] == "ValidationError" and empty["field"] == "prompt"
    stopped = (await gql(STOP, id=task["id"]))["stopTask"]
    assert stopped["status"] == "stopped" and stopped["stoppedSessions"][0]["state"] == "CANCELLED"
    assert stopped["task"]["state"] == "REVIEW"  # it was SCHEDULING: a stopped task goes to review
    # Issue 13: queued prompts outlive a stop (they wait for the session the next startTask opens).
    assert await prompts_of(db, session_id) == [("first", "QUEUED"), ("second", "QUEUED")]
    explicit = (await gql(SEND, input={"taskId": task["id"], "prompt": "x", "sessionId": session_id}))["sendMessage"]
    assert explicit["__typename"] == "ConflictError"
    implicit = (await gql(SEND, input={"taskId": task["id"], "prompt": "x"}))["sendMessage"]
    assert implicit["__typename"] == "ConflictError" and "startTask" in implicit["message"]
    again = (await gql(STOP, id=task["id"]))["stopTask"]
    assert again["status"] == "not_running"


async def test_start_task_after_every_session_ended_opens_a_new_primary_session(gql, db, workspace_id):
    task = await gql_task(gql, workspace_id)
    first = (await gql(START, input={"taskId": task["id"], "prompt": "one"}))["startTask"]["session"]["id"]
    await gql(STOP, id=task["id"])
    second = (await gql(START, input={"taskId": task["id"], "prompt": "two"}))["startTask"]["session"]
    assert second["id"] != first and second["isPrimary"] is True
    listed = await gql("query($id: ID!) { task(id: $id) { sessions { id isPrimary state } } }", id=task["id"])
    assert [s["id"] for s in listed["task"]["sessions"]] == [second["id"], first]


async def test_unknown_ids_are_not_found(gql, workspace_id):
    assert (await gql(START, input={"taskId": "nope"}))["startTask"]["__typename"] == "NotFoundError"
    assert (await gql(SEND, input={"taskId": "nope", "prompt": "x"}))["sendMessage"]["__typename"] == "NotFoundError"
    assert (await gql(STOP, id="nope"))["stopTask"]["__typename"] == "NotFoundError"
    task = await gql_task(gql, workspace_id)
    await gql(START, input={"taskId": task["id"], "prompt": "x"})
    wrong = (await gql(SEND, input={"taskId": task["id"], "prompt": "x", "sessionId": "nope"}))["sendMessage"]
    assert wrong["__typename"] == "NotFoundError"


async def test_a_session_and_its_transcript_are_not_found_once_its_task_is_deleted(gql, services, db, workspace_id):
    task_id = (await add_tasks(db, workspace_id, 1))[0]
    session_id = await add_transcript(db, task_id, 3)
    assert await services.sessions.get(session_id)
    await services.tasks.delete(task_id)
    with pytest.raises(NotFoundError):
        await services.sessions.get(session_id)
    read = await gql.raw(client_operations()["SESSION"], id=session_id, page=100)
    assert read.data is None and [e.extensions["code"] for e in read.errors] == ["NOT_FOUND"]


MESSAGES = """query($id: ID!, $first: Int!, $after: String, $last: Int, $order: SortOrder!, $kinds: [MessageKind!],
  $newer: ID, $older: ID) { session(id: $id) { messages(first: $first, after: $after, last: $last, order: $order,
  kinds: $kinds, afterMessageId: $newer, beforeMessageId: $older) { nodes { id kind }
  pageInfo { hasNextPage endCursor } } } }"""


async def transcript_of(services: Any, gql: Any, workspace_id: str, kinds: list[str]) -> tuple[str, list[str]]:
    task = await gql_task(gql, workspace_id)
    session_id = (await gql(START, input={"taskId": task["id"], "prompt": "go"}))["startTask"]["session"]["id"]
    ids = []
    async with services.ctx.unit_of_work() as uow:
        session = await uow.db.get(Session, session_id)
        for kind in kinds:
            ids.append((await append_message(uow, session, kind, kind.lower())).id)
    return session_id, ids


async def test_session_messages_page_in_either_order_filtered_by_kind(gql, services, workspace_id):
    kinds = ["USER", "AGENT", "TOOL_CALL", "AGENT", "PLAN", "AGENT"]
    session_id, ids = await transcript_of(services, gql, workspace_id, kinds)
    base = {"id": session_id, "first": 2, "order": "DESC"}
    seen: list[str] = []
    after = None
    for _ in range(5):
        page = (await gql(MESSAGES, **base, after=after))["session"]["messages"]
        seen += [n["id"] for n in page["nodes"]]
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    assert seen == ids[::-1]
    agents = (await gql(MESSAGES, id=session_id, first=100, order="ASC", kinds=["AGENT"]))["session"]["messages"]
    assert [n["id"] for n in agents["nodes"]] == [ids[1], ids[3], ids[5]]
    oldest = (await gql(MESSAGES, id=session_id, first=100, last=2, order="DESC"))["session"]["messages"]
    assert [n["id"] for n in oldest["nodes"]] == [ids[1], ids[0]]
    window = (await gql(MESSAGES, id=session_id, first=100, order="ASC", newer=ids[0], older=ids[4]))["session"]
    assert [n["id"] for n in window["messages"]["nodes"]] == ids[1:4]


async def test_session_messages_refuse_a_bad_cursor_or_a_foreign_message_with_a_validation_error(
    gql, services, workspace_id
):
    session_id, _ = await transcript_of(services, gql, workspace_id, ["USER", "AGENT"])
    _, other_ids = await transcript_of(services, gql, workspace_id, ["USER"])
    refusals = [
        ({"after": "bm90LWEtY3Vyc29y"}, "after", "the cursor is not one this API gave out"),
        ({"older": other_ids[0]}, "beforeMessageId", "the message to read before is not in this session"),
        ({"first": 501}, "first", "first must be between 0 and 500"),
    ]
    for variables, field, message in refusals:
        result = await gql.raw(MESSAGES, **{"id": session_id, "first": 10, "order": "ASC", **variables})
        [error] = result.errors
        assert isinstance(error.original_error, ValidationError) and error.original_error.field == field
        assert error.message == message


TASK_SESSIONS = """query($id: ID!, $only: ID, $after: String) { task(id: $id) { sessions(only: $only) { id
  messages(first: 10, after: $after) { nodes { id } } } } }"""


async def test_a_task_read_by_session_answers_as_the_conversation_tool_does(gql, services, workspace_id):
    session_id, ids = await transcript_of(services, gql, workspace_id, ["USER", "AGENT"])
    other_id, _ = await transcript_of(services, gql, workspace_id, ["USER"])
    task_id = (await services.sessions.get(session_id)).task_id
    one = (await gql(TASK_SESSIONS, id=task_id, only=session_id))["task"]["sessions"]
    assert [s["id"] for s in one] == [session_id] and [m["id"] for m in one[0]["messages"]["nodes"]] == ids
    # Another task's session is not one of this task's: not found, never a quiet empty list.
    [error] = (await gql.raw(TASK_SESSIONS, id=task_id, only=other_id)).errors
    assert isinstance(error.original_error, NotFoundError) and error.message == "session not found"
    assert other_id not in error.message
    [error] = (await gql.raw(TASK_SESSIONS, id=task_id, only=session_id, after="bm90LWEtY3Vyc29y")).errors
    assert isinstance(error.original_error, ValidationError) and error.original_error.field == "after"
    assert error.message == "the cursor is not one this API gave out"
