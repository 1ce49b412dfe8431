"""A parent question outlives neither its asker nor its parent, end to end: the running app, a real rq worker,
scripted ACP agents calling the tools over MCP. When the parent goes away, the waiting child is told (as
SYSTEM) to proceed and runs a turn; a peer's message waits behind the question until the parent answers."""

from __future__ import annotations

import json

import pytest

from kandev.models import Message, ParentQuestion, QueuedPrompt, Turn
from tests.integration.e2e import test_autopilot_scenarios as scenarios
from tests.integration.e2e.test_autopilot_scenarios import (
    ARCHIVE,
    QUESTIONS,
    SEND,
    WAIT,
    ask_and_wait,
    finished_tool_calls,
    received,
    reply_call,
    rows,
)
from tests.support.watch import watching

pytestmark = pytest.mark.slow
# The scenarios' fixtures: the running app as operators and agents reach it, and the agents' prompt log.
app, agent_log = scenarios.app, scenarios.agent_log

COMPLETE = """mutation($id: ID!) { updateTask(input: { taskId: $id, state: COMPLETED }) { __typename } }"""


@pytest.mark.parametrize("parent_goes", ["archived", "completed"])
async def test_when_the_parent_goes_away_the_waiting_child_is_told_as_system_to_proceed_and_runs_a_turn(
    parent_goes, app, bus, db, workspace_id, agent_log
):
    parent = await app.create(workspaceId=workspace_id, title="Parent", startAgent=False)
    child = await app.create(workspaceId=workspace_id, title="Child", parentId=parent["id"], autopilot=True)
    child_session, parent_session, call = await ask_and_wait(app, bus, db, parent["id"], child["id"])
    question_id = call["raw_output"]["question_id"]
    async with watching(bus, db, child_session) as watch:
        if parent_goes == "archived":
            await app.mutate("archiveTask", ARCHIVE, id=parent["id"])
        else:  # the parent reaches its final step, so its last (only) session ends (COMPLETED)
            assert (await app.graphql(COMPLETE, id=parent["id"]))["updateTask"]["__typename"] == "TaskPayload"
        [turn_one, turn_two] = await watch.turns_ended(2, timeout=WAIT)
    [question] = (await app.graphql(QUESTIONS, id=child["id"], status=None))["parentQuestions"]
    assert question["status"] == "STALE" and question["answer"] is None
    assert (await app.task(child["id"]))["pendingAction"] != "CLARIFICATION"
    [notice] = await rows(
        db, QueuedPrompt, QueuedPrompt.session_id == child_session, QueuedPrompt.source == "parent_stale"
    )
    assert question_id in notice.text and "will not be answered" in notice.text and "autopilot contract" in notice.text
    # The notice is the second turn's prompt, SYSTEM in the transcript, and the agent received it.
    turn_rows = await rows(db, Message, Message.session_id == child_session, Message.turn_id == turn_two.id)
    [shown] = [m for m in turn_rows if m.kind in ("SYSTEM", "USER")]
    assert (shown.kind, shown.text) == ("SYSTEM", notice.text)
    assert received(agent_log, child_session)[-1].endswith(notice.text)
    assert turn_one.seq == 1 and turn_two.state == "COMPLETED"


async def test_a_peers_message_waits_behind_the_question_until_the_parent_answers(
    app, bus, db, workspace_id, agent_log
):
    parent = await app.create(workspaceId=workspace_id, title="Parent", startAgent=False)
    child = await app.create(workspaceId=workspace_id, title="Child", parentId=parent["id"], autopilot=True)
    child_session, parent_session, call = await ask_and_wait(app, bus, db, parent["id"], child["id"])
    question_id = call["raw_output"]["question_id"]
    # A task that is not the child's parent messages it through its agent's MCP tool.
    peer = await app.create(workspaceId=workspace_id, title="Peer", startAgent=False)
    note = {"task_id": child["id"], "prompt": "/say peer note handled"}
    peer_session = await app.start(peer["id"], f"/tool message_task_kandev {json.dumps(note)}")
    [sent] = await finished_tool_calls(db, peer_session, 1)
    assert sent.data["status"] == "completed", sent.data
    [held] = await rows(db, QueuedPrompt, QueuedPrompt.session_id == child_session, QueuedPrompt.source == "peer")
    assert held.state == "QUEUED"
    [question] = (await app.graphql(QUESTIONS, id=child["id"], status=None))["parentQuestions"]
    assert question["status"] == "PENDING"
    assert len(await rows(db, Turn, Turn.session_id == child_session)) == 1
    assert (await app.task(child["id"]))["pendingAction"] == "CLARIFICATION"
    # The parent's agent answers: the answer runs first, then the peer's message.
    await app.mutate(
        "sendMessage",
        SEND,
        input={"taskId": parent["id"], "prompt": reply_call(child["id"], question_id, "/say parent answer handled")},
    )
    async with watching(bus, db, child_session) as watch:
        await watch.message("AGENT", "peer note handled", timeout=WAIT)
        await watch.turns_ended(3, timeout=WAIT)
    said = [m.text for m in await rows(db, Message, Message.session_id == child_session, Message.kind == "AGENT")]
    assert said.index("parent answer handled") < said.index("peer note handled")
    [answered] = (await app.graphql(QUESTIONS, id=child["id"], status=None))["parentQuestions"]
    assert answered["status"] == "ANSWERED"
    assert await rows(db, ParentQuestion, ParentQuestion.state == "SUPERSEDED") == []
