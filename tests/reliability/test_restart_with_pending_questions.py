"""A restart of the server and the worker while two questions wait: an autopilot child's question to its parent
and an agent's question to the operator (hard-paused). Both are still pending afterwards, both are answered through
the restarted app, and each answer resumes its session exactly once."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from kandev.models import QueuedPrompt, Turn
from kandev.platform.settings import Settings
from tests.integration.e2e.conftest import LiveSystem
from tests.integration.e2e.test_autopilot_scenarios import (
    ASK_USER,
    QUESTIONS,
    SEND,
    WAIT,
    App,
    ask_and_wait,
    reply_call,
    rows,
    user_messages,
)
from tests.support.factories import settings_for
from tests.support.server import running_server
from tests.support.watch import watching
from tests.support.workers import running_worker

pytestmark = [pytest.mark.reliability, pytest.mark.slow]

ASK_OPERATOR = {"questions": [{"prompt": "Which colour?", "options": [{"label": "blue"}, {"label": "red"}]}]}
PENDING = """query($ws: ID!) { pendingQuestions(workspaceId: $ws) { nodes { id state detached sessionId } } }"""
ANSWER = """mutation($input: AnswerClarificationInput!) { answerClarification(input: $input) { __typename
  ... on Error { code message } } }"""


@pytest.fixture
def settings(database_url: str, redis_url: str, tmp_path: Path) -> Settings:
    # The operator's question hard-pauses its turn after a second without an answer.
    return settings_for(database_url, redis_url, tmp_path, turn_lease_seconds=5, clarification_timeout_s=1.0)


@asynccontextmanager
async def running_app(settings: Settings, db: Any) -> AsyncIterator[App]:
    """The server and a worker wired to it, as an operator reaches them."""
    async with running_server(settings) as address:
        wired = settings.model_copy(update={"public_url": f"http://{address}"})
        with running_worker(wired):
            async with httpx.AsyncClient(base_url=f"http://{address}", timeout=20) as http:
                yield App(LiveSystem(wired, address), http, db)


async def test_questions_pending_across_a_restart_stay_pending_and_each_answer_resumes_its_session_once(
    settings, bus, db, workspace_id
):
    async with running_app(settings, db) as app:
        parent = await app.create(workspaceId=workspace_id, title="Parent", startAgent=False)
        child = await app.create(workspaceId=workspace_id, title="Child", parentId=parent["id"], autopilot=True)
        child_session, _, call = await ask_and_wait(app, bus, db, parent["id"], child["id"])
        asker = await app.create(workspaceId=workspace_id, title="Asker", startAgent=False)
        asker_session = await app.start(asker["id"], f"/tool {ASK_USER} {json.dumps(ASK_OPERATOR)}")
        async with watching(bus, db, asker_session) as watch:
            await watch.turns_ended(1, timeout=WAIT)  # hard-paused: the turn ends, the question stays
    question_id = call["raw_output"]["question_id"]
    began = time.monotonic()
    async with running_app(settings, db) as app:
        [parent_question] = (await app.graphql(QUESTIONS, id=child["id"], status=None))["parentQuestions"]
        assert (parent_question["id"], parent_question["status"]) == (question_id, "PENDING")
        [operator_question] = (await app.graphql(PENDING, ws=workspace_id))["pendingQuestions"]["nodes"]
        assert operator_question["sessionId"] == asker_session
        assert operator_question["state"] == "PENDING" and operator_question["detached"] is True
        answer = {"questionId": "q1", "selectedOptions": ["blue"]}
        answered = await app.graphql(ANSWER, input={"clarificationId": operator_question["id"], "answers": [answer]})
        assert "code" not in answered["answerClarification"], answered
        await app.mutate(
            "sendMessage", SEND, input={"taskId": parent["id"], "prompt": reply_call(child["id"], question_id, "Keep")}
        )
        async with watching(bus, db, child_session) as child_watch, watching(bus, db, asker_session) as asker_watch:
            child_turns = await child_watch.turns_ended(2, timeout=WAIT)
            asker_turns = await asker_watch.turns_ended(2, timeout=WAIT)
        [parent_question] = (await app.graphql(QUESTIONS, id=child["id"], status=None))["parentQuestions"]
        assert (await app.graphql(PENDING, ws=workspace_id))["pendingQuestions"]["nodes"] == []
    resumed_in = time.monotonic() - began
    assert parent_question["status"] == "ANSWERED" and parent_question["answer"] == "Keep"
    assert [m.text for m in await user_messages(db, child_session)][1:] == [
        f"Your parent answered your question ({question_id}):\nKeep"
    ]
    assert child_turns[1].state == "COMPLETED"
    resumed = [m.text for m in await user_messages(db, asker_session)][1:]
    assert resumed == ["The user answered your question(s):\n- Which colour?: blue"]
    assert asker_turns[1].state == "COMPLETED"
    for session_id, source in ((child_session, "parent_answer"), (asker_session, "clarification_answer")):
        delivered = await rows(db, QueuedPrompt, QueuedPrompt.session_id == session_id, QueuedPrompt.source == source)
        assert [p.state for p in delivered] == ["CLAIMED"], source  # once, and run
    assert len(await rows(db, Turn, Turn.session_id.in_([child_session, asker_session]))) == 4
    print(f"\n[reliability] restart with 2 pending questions: both answered and resumed {resumed_in:.1f}s after it")
