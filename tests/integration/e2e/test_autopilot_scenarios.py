"""spec/autopilot-mode.md's acceptance scenarios end to end: the running app (GraphQL over HTTP and
WebSocket, MCP), a real rq worker and scripted ACP agents. What an agent received is read from the
scripted agent's own prompt log; operators act over the app's GraphQL endpoint."""

from __future__ import annotations

import asyncio
import contextlib
import json
import statistics
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from sqlalchemy import func, select

from kandev.domain.tasks.service import CreateTask
from kandev.domain.workspace.agent_profiles import AgentProfileFields
from kandev.models import Message, ParentQuestion, QueuedPrompt, Turn
from kandev.platform.database import Database
from tests.integration.e2e.conftest import LiveSystem
from tests.support.graphql_ws import GraphQLWebSocket
from tests.support.server import running_server
from tests.support.session_tokens import side_token
from tests.support.waiting import wait_until
from tests.support.watch import watching
from tests.support.workers import running_worker

pytestmark = pytest.mark.slow

WAIT = 60.0
ASK_USER, ASK_PARENT = "ask_user_question_kandev", "ask_parent_question_kandev"
CONTRACT = "This task is in autopilot mode"
WITH_PARENT = "ask your direct parent task with ask_parent_question_kandev, only as the last action"
NO_PARENT = "You have no parent to ask: proceed on your best judgement"
ASK = {
    "questions": [{"prompt": "Drop the legacy endpoint?", "options": [{"label": "drop"}, {"label": "keep"}]}],
    "context": "Deciding the migration path",
}
ASK_DIRECTIVE = f"/tool {ASK_PARENT} {json.dumps(ASK)}"
ERRORS = "... on Error { code message }"
CREATE = f"""mutation($input: CreateTaskInput!) {{ createTask(input: $input) {{ {ERRORS}
  ... on CreateTaskPayload {{ task {{ id autopilot parentId sessions {{ id }} }} }} }} }}"""
START = f"""mutation($input: StartTaskInput!) {{ startTask(input: $input) {{ {ERRORS}
  ... on StartTaskPayload {{ session {{ id }} }} }} }}"""
SEND = f"""mutation($input: SendMessageInput!) {{ sendMessage(input: $input) {{ {ERRORS}
  ... on SendMessagePayload {{ queuedPromptId session {{ id }} }} }} }}"""
ARCHIVE = f"""mutation($id: ID!) {{ archiveTask(taskId: $id) {{ {ERRORS}
  ... on ArchiveTaskPayload {{ task {{ id }} }} }} }}"""
TASK = """query($id: ID!) { task(id: $id) { id autopilot pendingAction
  pendingParentQuestion { id status questions } sessions { id state mcpTools } } }"""
LIST = """query($ws: ID!, $parent: ID) { tasks(workspaceId: $ws, parentId: $parent) {
  nodes { id autopilot pendingAction } } }"""
QUESTIONS = """query($id: ID!, $status: String) { parentQuestions(taskId: $id, status: $status) {
  id status answer resolution parentTaskId childSessionId } }"""
OPERATOR_QUESTIONS = """query($ws: ID!) { pendingQuestions(workspaceId: $ws) { nodes { id } } }"""


# -- the system, seen from outside ------------------------------------------------------------


class App:
    """The running app as an operator and as agents reach it: GraphQL over HTTP, MCP with a session token."""

    def __init__(self, live: LiveSystem, http: httpx.AsyncClient, db: Database) -> None:
        self.live = live
        self.http = http
        self.db = db

    async def graphql(self, query: str, **variables: Any) -> dict[str, Any]:
        body = (await self.http.post("/graphql", json={"query": query, "variables": variables})).json()
        assert "errors" not in body, body
        return body["data"]

    async def mutate(self, name: str, query: str, **variables: Any) -> dict[str, Any]:
        """A mutation's payload; an error member of its result union fails the test."""
        payload = (await self.graphql(query, **variables))[name]
        assert "code" not in payload, payload
        return payload

    async def task(self, task_id: str) -> dict[str, Any]:
        return (await self.graphql(TASK, id=task_id))["task"]

    async def create(self, **fields: Any) -> dict[str, Any]:
        return (await self.mutate("createTask", CREATE, input=fields))["task"]

    async def start(self, task_id: str, prompt: str) -> str:
        return (await self.mutate("startTask", START, input={"taskId": task_id, "prompt": prompt}))["session"]["id"]

    async def send(self, task_id: str, prompt: str) -> dict[str, Any]:
        return (await self.graphql(SEND, input={"taskId": task_id, "prompt": prompt}))["sendMessage"]

    async def send_reply(self, task_id: str, question_id: str, prompt: str) -> dict[str, Any]:
        fields = {"taskId": task_id, "prompt": prompt, "replyToQuestionId": question_id}
        return (await self.graphql(SEND, input=fields))["sendMessage"]

    @asynccontextmanager
    async def as_agent(self, session_id: str) -> AsyncIterator[Client]:
        """An MCP client holding a token of the session (its agent has launched), like the session's agent."""
        token = await side_token(self.db, session_id)
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(20.0)) as http,
            Client(
                streamable_http_client(f"http://{self.live.address}/mcp/session", http_client=http), mode="legacy"
            ) as client,
        ):
            yield client

    async def discovered_tools(self, session_id: str) -> set[str]:
        async with asyncio.timeout(20), self.as_agent(session_id) as client:
            return {tool.name for tool in (await client.list_tools()).tools}


@pytest.fixture
def agent_log(tmp_path: Path) -> Path:
    return tmp_path / "scripted-prompts.jsonl"


@pytest.fixture
async def app(live: LiveSystem, services: Any, workspace_id: str, agent_log: Path) -> AsyncIterator[App]:
    # Every scripted agent of the workspace logs the prompts it receives.
    for profile in await services.agent_profiles.list(workspace_id):
        env = {**(profile.env or {}), "KANDEV_SCRIPTED_LOG": str(agent_log)}
        await services.agent_profiles.update(profile.id, AgentProfileFields(env=env))
    async with httpx.AsyncClient(base_url=f"http://{live.address}", timeout=20) as http:
        yield App(live, http, services.ctx.db)


def received(log: Path, session_id: str) -> list[str]:
    """The prompts the agents of one Kandev session received, in order. Every agent launch opens with
    the context block, which names the session; later prompts of that launch share its ACP session id."""
    entries = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    launches = {e["session_id"] for e in entries if f"\nSession: {session_id}\n" in e["prompt"]}
    return [e["prompt"] for e in entries if e["session_id"] in launches]


async def rows(db: Any, model: Any, *conditions: Any) -> list[Any]:
    """The rows of `model` matching `conditions`, oldest first (PostgreSQL keeps no insertion order on its own)."""
    oldest_first = getattr(model, "seq", None) or getattr(model, "created_at", None)
    async with db.read() as s:
        query = select(model).where(*conditions)
        return list(await s.scalars(query if oldest_first is None else query.order_by(oldest_first)))


async def user_messages(db: Any, session_id: str) -> list[Message]:
    async with db.read() as s:
        query = select(Message).where(Message.session_id == session_id, Message.kind == "USER").order_by(Message.seq)
        return list(await s.scalars(query))


async def tool_calls(db: Any, session_id: str) -> list[Message]:
    async with db.read() as s:
        query = select(Message).where(Message.session_id == session_id, Message.kind == "TOOL_CALL")
        return list(await s.scalars(query.order_by(Message.seq)))


async def finished_tool_calls(db: Any, session_id: str, count: int) -> list[Message]:
    """The session's tool calls once `count` of them have finished (bounded)."""

    async def done() -> bool:
        calls = await tool_calls(db, session_id)
        return sum(c.data.get("status") in ("completed", "failed") for c in calls) >= count

    await wait_until(done, timeout=WAIT, interval=0.1)
    return await tool_calls(db, session_id)


async def ask_and_wait(app: App, bus: Any, db: Any, parent_id: str, child_id: str) -> tuple[str, str, dict[str, Any]]:
    """The child's agent asks its parent; returns (child session, parent session, the tool's result)
    once the asking turn has ended and the parent's agent has had the question delivered."""
    child_session = await app.start(child_id, ASK_DIRECTIVE)
    async with watching(bus, db, child_session) as watch:
        await watch.turns_ended(1, timeout=WAIT)
    [call] = await tool_calls(db, child_session)
    [question] = await rows(db, ParentQuestion, ParentQuestion.child_task_id == child_id)
    [parent_prompt] = await rows(db, QueuedPrompt, QueuedPrompt.id == question.parent_prompt_id)
    async with watching(bus, db, parent_prompt.session_id) as watch:
        await watch.until(lambda: _delivered(db, parent_prompt.session_id), timeout=WAIT)
    return child_session, parent_prompt.session_id, call.data


async def _delivered(db: Any, parent_session: str) -> bool:
    """The parent's agent got the question and its turn ended."""
    async with db.read() as s:
        got = await s.scalar(
            select(func.count())
            .select_from(Message)
            .join(Turn, Turn.id == Message.turn_id)
            .where(
                Message.session_id == parent_session,
                Message.kind == "USER",
                Message.data["source"].as_string() == "parent_question",
                Turn.ended_at.is_not(None),
            )
        )
    return bool(got)


def reply_call(child_id: str, question_id: str, answer: str) -> str:
    arguments = {"task_id": child_id, "reply_to_question_id": question_id, "prompt": answer}
    return f"/tool message_task_kandev {json.dumps(arguments)}"


# -- the scenarios ------------------------------------------------------------------------------


async def test_a_task_created_without_autopilot_launches_with_the_normal_prompt_and_the_operator_question_tool(
    app, bus, db, workspace_id, agent_log
):
    created = await app.create(workspaceId=workspace_id, title="Plain", prompt="/say working normally")
    assert created["autopilot"] is False
    [session_id] = [s["id"] for s in created["sessions"]]
    async with watching(bus, db, session_id) as watch:
        await watch.message("AGENT", "working normally", timeout=WAIT)
    [first] = received(agent_log, session_id)
    assert first.startswith("<kandev-context>") and f"task {created['id']}: Plain" in first
    assert CONTRACT not in first and ASK_PARENT not in first and NO_PARENT not in first
    discovered = await app.discovered_tools(session_id)
    assert ASK_USER in discovered and ASK_PARENT not in discovered
    task = await app.task(created["id"])
    assert task["autopilot"] is False and task["pendingParentQuestion"] is None
    assert set(task["sessions"][0]["mcpTools"]) == discovered
    listed = (await app.graphql(LIST, ws=workspace_id, parent=None))["tasks"]["nodes"]
    assert [t["autopilot"] for t in listed if t["id"] == created["id"]] == [False]


async def test_an_autopilot_child_keeps_its_flag_gets_the_autonomy_contract_and_discovers_only_the_parent_tool(
    app, bus, db, workspace_id, agent_log
):
    parent = await app.create(workspaceId=workspace_id, title="Parent", startAgent=False)
    child = await app.create(
        workspaceId=workspace_id, title="Child", parentId=parent["id"], autopilot=True, prompt="/say on my own"
    )
    assert child["autopilot"] is True and parent["autopilot"] is False
    [session_id] = [s["id"] for s in child["sessions"]]
    async with watching(bus, db, session_id) as watch:
        await watch.message("AGENT", "on my own", timeout=WAIT)
    [first] = received(agent_log, session_id)
    context = first.split("</kandev-context>", 1)[0]
    assert CONTRACT in context and WITH_PARENT in context and "Never ask the operator" in context
    assert NO_PARENT not in context
    discovered = await app.discovered_tools(session_id)
    assert ASK_PARENT in discovered and ASK_USER not in discovered
    read = await app.task(child["id"])
    assert read["autopilot"] is True and set(read["sessions"][0]["mcpTools"]) == discovered
    listed = (await app.graphql(LIST, ws=workspace_id, parent=parent["id"]))["tasks"]["nodes"]
    assert [(t["id"], t["autopilot"]) for t in listed] == [(child["id"], True)]
    assert (await app.task(parent["id"]))["autopilot"] is False  # never inherited either way


async def test_an_autopilot_childs_question_returns_at_once_reaches_its_parent_once_and_leaves_it_waiting(
    app, bus, db, workspace_id, agent_log
):
    parent = await app.create(workspaceId=workspace_id, title="Parent", startAgent=False)
    child = await app.create(workspaceId=workspace_id, title="Child", parentId=parent["id"], autopilot=True)
    child_session, parent_session, call = await ask_and_wait(app, bus, db, parent["id"], child["id"])
    # The call came back while nobody had answered: the asking turn ended with the question still open.
    assert call["status"] == "completed", call
    result = call["raw_output"]
    assert result["status"] == "waiting_for_parent" and result["parent_task_id"] == parent["id"]
    [question] = (await app.graphql(QUESTIONS, id=child["id"], status=None))["parentQuestions"]
    assert question["id"] == result["question_id"] and question["status"] == "PENDING"
    assert question["answer"] is None and question["childSessionId"] == child_session
    # Exactly one structured, attributed prompt reached the parent's agent.
    [queued] = await rows(db, QueuedPrompt, QueuedPrompt.session_id == parent_session)
    assert queued.source == "parent_question"
    assert queued.sender == {"kind": "child", "task_id": child["id"], "session_id": child_session}
    [delivered] = received(agent_log, parent_session)
    for fragment in (child["id"], child_session, "Drop the legacy endpoint?", 'option "keep"', question["id"]):
        assert fragment in delivered
    assert f'"reply_to_question_id": "{question["id"]}"' in delivered
    # The child waits, and the sidebar row (read and list) shows the question indicator.
    task = await app.task(child["id"])
    assert task["sessions"][0]["state"] == "WAITING_FOR_INPUT"
    assert task["pendingAction"] == "CLARIFICATION" and task["pendingParentQuestion"]["id"] == question["id"]
    listed = (await app.graphql(LIST, ws=workspace_id, parent=parent["id"]))["tasks"]["nodes"]
    assert listed == [{"id": child["id"], "autopilot": True, "pendingAction": "CLARIFICATION"}]
    # No operator clarification exists, and the parent's own row is not flagged.
    assert (await app.graphql(OPERATOR_QUESTIONS, ws=workspace_id))["pendingQuestions"]["nodes"] == []
    assert (await app.task(parent["id"]))["pendingAction"] != "CLARIFICATION"
    assert len(await user_messages(db, child_session)) == 1


async def test_a_correlated_answer_clears_the_indicator_live_and_starts_exactly_one_child_turn_with_it(
    app, live, bus, db, workspace_id, agent_log
):
    parent = await app.create(workspaceId=workspace_id, title="Parent", startAgent=False)
    parent_session = await app.start(parent["id"], "/on-question Drop it, nobody calls it")
    async with watching(bus, db, parent_session) as watch:
        await watch.turns_ended(1, timeout=WAIT)
    child = await app.create(workspaceId=workspace_id, title="Child", parentId=parent["id"], autopilot=True)
    ws = await GraphQLWebSocket.open(live.address)
    indicators: list[str] = []
    following: asyncio.Task[None] | None = None

    async def follow() -> None:
        while True:
            event = (await ws.next_message())["payload"]["data"]["taskEvents"]
            if event["task"] and event["task"]["id"] == child["id"]:
                indicators.append(event["task"]["pendingAction"])

    try:
        await ws.listen(
            "subscription($ws: ID!) { taskEvents(workspaceId: $ws) { kind task { id pendingAction } } }",
            ws=workspace_id,
        )
        following = asyncio.create_task(follow())
        child_session = await app.start(child["id"], ASK_DIRECTIVE)
        async with watching(bus, db, child_session) as watch:
            await watch.turns_ended(2, timeout=WAIT)  # the asking turn, then the one the answer started
        await wait_until(lambda: _cleared(indicators), timeout=10)
    finally:
        if following is not None:
            following.cancel()
            with contextlib.suppress(BaseException):
                await following
        await ws.close()
    # The sidebar saw the indicator appear and then clear.
    assert await _cleared(indicators)
    [question] = (await app.graphql(QUESTIONS, id=child["id"], status=None))["parentQuestions"]
    assert question["status"] == "ANSWERED" and question["answer"] == "Drop it, nobody calls it"
    task = await app.task(child["id"])
    assert task["pendingAction"] != "CLARIFICATION" and task["pendingParentQuestion"] is None
    # The parent's own agent answered with one successful correlated call.
    [reply] = await finished_tool_calls(db, parent_session, 1)
    assert reply.data["status"] == "completed" and reply.data["raw_input"]["reply_to_question_id"] == question["id"]
    # Exactly one child turn started, and it started with the attributed answer.
    [answer] = await rows(
        db, QueuedPrompt, QueuedPrompt.session_id == child_session, QueuedPrompt.source == "parent_answer"
    )
    assert answer.sender["kind"] == "parent" and answer.sender["task_id"] == parent["id"]
    assert answer.reply_to_question_id == question["id"]
    turns = await rows(db, Turn, Turn.session_id == child_session)
    assert len(turns) == 2 and sorted(turns, key=lambda t: t.seq)[1].prompt_id == answer.id
    got = received(agent_log, child_session)
    assert len(got) == 2
    assert got[1].rstrip().endswith(f"Your parent answered your question ({question['id']}):\nDrop it, nobody calls it")
    assert sum("Drop it, nobody calls it" in prompt.split("</kandev-context>")[-1] for prompt in got) == 1


async def _cleared(indicators: list[str]) -> bool:
    """The indicator appeared and a later event took it away."""
    return "CLARIFICATION" in indicators and indicators[-1] != "CLARIFICATION"


@pytest.mark.parametrize("ended_by", ["an operator message superseding it", "archiving the child making it stale"])
async def test_a_late_correlated_answer_to_a_superseded_or_stale_question_is_rejected_and_resumes_nothing(
    ended_by, app, bus, db, workspace_id, agent_log
):
    parent = await app.create(workspaceId=workspace_id, title="Parent", startAgent=False)
    child = await app.create(workspaceId=workspace_id, title="Child", parentId=parent["id"], autopilot=True)
    child_session, parent_session, call = await ask_and_wait(app, bus, db, parent["id"], child["id"])
    question_id = call["raw_output"]["question_id"]
    if ended_by.startswith("an operator"):
        await app.mutate("sendMessage", SEND, input={"taskId": child["id"], "prompt": "/say carrying on my way"})
        async with watching(bus, db, child_session) as watch:
            await watch.message("AGENT", "carrying on my way", timeout=WAIT)
            await watch.turns_ended(2, timeout=WAIT)
        expected = ("SUPERSEDED", 2)
    else:
        await app.mutate("archiveTask", ARCHIVE, id=child["id"])
        expected = ("STALE", 1)
    [question] = (await app.graphql(QUESTIONS, id=child["id"], status=None))["parentQuestions"]
    assert question["status"] == expected[0]
    assert (await app.task(child["id"]))["pendingAction"] != "CLARIFICATION"
    # Now the parent's agent sends the correlated answer, too late.
    await app.mutate(
        "sendMessage", SEND, input={"taskId": parent["id"], "prompt": reply_call(child["id"], question_id, "Keep it")}
    )
    calls = await finished_tool_calls(db, parent_session, 1)
    [late] = [c for c in calls if c.data.get("raw_input", {}).get("reply_to_question_id") == question_id]
    assert late.data["status"] == "failed" and late.data["raw_output"]["code"] == "CONFLICT", late.data
    async with watching(bus, db, parent_session) as watch:
        await watch.turns_ended(2, timeout=WAIT)
    [after] = (await app.graphql(QUESTIONS, id=child["id"], status=None))["parentQuestions"]
    assert after["status"] == expected[0] and after["answer"] is None
    assert (
        await rows(db, QueuedPrompt, QueuedPrompt.session_id == child_session, QueuedPrompt.source == "parent_answer")
        == []
    )
    assert len(await rows(db, Turn, Turn.session_id == child_session)) == expected[1]
    assert not any("Keep it" in prompt for prompt in received(agent_log, child_session))


async def test_an_autopilot_task_without_a_parent_lists_no_question_tool_and_proceeds_on_its_own(
    app, bus, db, workspace_id, agent_log
):
    task = await app.create(workspaceId=workspace_id, title="Alone", autopilot=True, startAgent=False)
    ask_user = {"questions": [{"prompt": "Which database?"}]}
    script = f"{ASK_DIRECTIVE}\n/tool {ASK_USER} {json.dumps(ask_user)}\n/say assuming PostgreSQL"
    session_id = await app.start(task["id"], script)
    async with watching(bus, db, session_id) as watch:
        await watch.message("AGENT", "assuming PostgreSQL", timeout=WAIT)
        await watch.turns_ended(1, timeout=WAIT)
    discovered = await app.discovered_tools(session_id)
    assert ASK_PARENT not in discovered and ASK_USER not in discovered
    assert "message_task_kandev" in discovered  # the surface is there, just without a question tool
    [first] = received(agent_log, session_id)
    context = first.split("</kandev-context>", 1)[0]
    assert CONTRACT in context and NO_PARENT in context and WITH_PARENT not in context
    # Its agent tried both question tools anyway: neither is there, nothing was stored, nothing waits.
    calls = await tool_calls(db, session_id)
    assert [(c.text, c.data["status"]) for c in calls] == [
        (ASK_PARENT, "failed"),
        (ASK_USER, "failed"),
    ]
    assert await rows(db, ParentQuestion, ParentQuestion.child_task_id == task["id"]) == []
    read = await app.task(task["id"])
    assert read["autopilot"] is True and read["pendingAction"] != "CLARIFICATION"
    assert read["pendingParentQuestion"] is None
    assert read["sessions"][0]["state"] == "WAITING_FOR_INPUT"
    assert (await app.graphql(OPERATOR_QUESTIONS, ws=workspace_id))["pendingQuestions"]["nodes"] == []


@pytest.mark.parametrize("run", range(5))
async def test_an_answer_racing_an_operators_superseding_message_has_one_winner_with_real_agents(
    run, app, bus, db, workspace_id, agent_log
):
    parent = await app.create(workspaceId=workspace_id, title="Parent", startAgent=False)
    child = await app.create(workspaceId=workspace_id, title="Child", parentId=parent["id"], autopilot=True)
    child_session, parent_session, call = await ask_and_wait(app, bus, db, parent["id"], child["id"])
    question_id = call["raw_output"]["question_id"]
    answer, operator = f"Parent says drop it ({run})", f"/say operator overrides ({run})"
    reply = {"task_id": child["id"], "reply_to_question_id": question_id, "prompt": answer}
    async with app.as_agent(parent_session) as parent_agent:
        # Aim both at one instant: the answer's path is the slower one, so the operator is held back by a
        # share of the measured difference that changes from run to run (from "first" to "well after").
        stagger = await _answer_lead(app, parent_agent, child["id"]) * (0.0, 0.25, 0.5, 1.0, 1.5)[run]

        async def operator_sends() -> dict[str, Any]:
            await asyncio.sleep(stagger)
            return await app.send(child["id"], operator)

        async with asyncio.timeout(20):
            answered, sent = await asyncio.gather(
                parent_agent.call_tool("message_task_kandev", reply), operator_sends()
            )
    [question] = (await app.graphql(QUESTIONS, id=child["id"], status=None))["parentQuestions"]
    assert question["status"] in ("ANSWERED", "SUPERSEDED")
    won = question["status"] == "ANSWERED"
    assert "queuedPromptId" in sent  # the operator's message is always admitted
    # The loser had no effect: a rejected answer queued nothing; a winning one is queued once, first.
    assert answered.is_error is not won, answered
    if not won:
        assert answered.structured_content["code"] == "CONFLICT"
    answers = await rows(
        db, QueuedPrompt, QueuedPrompt.session_id == child_session, QueuedPrompt.source == "parent_answer"
    )
    assert len(answers) == (1 if won else 0)
    if won:  # had the operator's message been admitted while the question was pending, it would have superseded it
        [operator_prompt] = await rows(db, QueuedPrompt, QueuedPrompt.id == sent["queuedPromptId"])
        assert answers[0].seq < operator_prompt.seq
    expected = ([f"Your parent answered your question ({question_id}):\n{answer}"] if won else []) + [operator]
    async with watching(bus, db, child_session) as watch:
        await watch.turns_ended(1 + len(expected), timeout=WAIT)
    texts = [m.text for m in await user_messages(db, child_session)]
    assert texts[1:] == expected
    assert len(await rows(db, Turn, Turn.session_id == child_session)) == 1 + len(expected)
    got = received(agent_log, child_session)
    assert sum(answer in prompt.split("</kandev-context>")[-1] for prompt in got) == (1 if won else 0)
    assert (await app.task(child["id"]))["pendingAction"] != "CLARIFICATION"


async def _answer_lead(app: App, parent_agent: Client, child_id: str) -> float:
    """How much longer the parent's reply over MCP takes than the operator's message over GraphQL,
    measured with replies to an unknown question (rejected on both paths, no side effect)."""
    mcp, gql = [], []
    for _ in range(3):
        began = time.perf_counter()
        probe = await parent_agent.call_tool(
            "message_task_kandev", {"task_id": child_id, "reply_to_question_id": "unknown", "prompt": "probe"}
        )
        mcp.append(time.perf_counter() - began)
        began = time.perf_counter()
        rejected = await app.send_reply(child_id, "unknown", "probe")
        gql.append(time.perf_counter() - began)
        assert probe.structured_content["code"] == rejected["code"] == "NOT_FOUND"
    return max(0.0, statistics.median(mcp) - statistics.median(gql))


async def test_after_a_restart_the_list_still_flags_the_waiting_child_and_the_parents_answer_resumes_it_once(
    settings, services, bus, db, workspace_id
):
    parent = (
        await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Parent", start_agent=False))
    ).task
    child = (
        await services.tasks.create(
            CreateTask(workspace_id=workspace_id, title="Child", parent_id=parent.id, autopilot=True, start_agent=False)
        )
    ).task
    async with running_server(settings) as address:
        wired = settings.model_copy(update={"public_url": f"http://{address}"})
        with running_worker(wired):
            async with httpx.AsyncClient(base_url=f"http://{address}", timeout=20) as http:
                child_session, parent_session, call = await ask_and_wait(
                    App(LiveSystem(wired, address), http, db), bus, db, parent.id, child.id
                )
    question_id = call["raw_output"]["question_id"]
    async with running_server(settings) as address:
        wired = settings.model_copy(update={"public_url": f"http://{address}"})
        with running_worker(wired):
            async with httpx.AsyncClient(base_url=f"http://{address}", timeout=20) as http:
                app = App(LiveSystem(wired, address), http, db)
                listed = (await app.graphql(LIST, ws=workspace_id, parent=parent.id))["tasks"]["nodes"]
                assert listed == [{"id": child.id, "autopilot": True, "pendingAction": "CLARIFICATION"}]
                await app.mutate(
                    "sendMessage",
                    SEND,
                    input={"taskId": parent.id, "prompt": reply_call(child.id, question_id, "Keep it")},
                )
                async with watching(bus, db, child_session) as watch:
                    await watch.turns_ended(2, timeout=WAIT)
                [reply] = await finished_tool_calls(db, parent_session, 1)
                task = await app.task(child.id)
    assert reply.data["status"] == "completed", reply.data
    assert task["pendingAction"] != "CLARIFICATION" and task["pendingParentQuestion"] is None
    texts = [m.text for m in await user_messages(db, child_session)]
    assert texts[1:] == [f"Your parent answered your question ({question_id}):\nKeep it"]
    # Two restarts of nothing: the parent still got the question exactly once.
    questions = await rows(
        db, QueuedPrompt, QueuedPrompt.session_id == parent_session, QueuedPrompt.source == "parent_question"
    )
    assert len(questions) == 1
