"""How sessions end, end to end: a running app, a real rq worker and scripted ACP agents calling Kandev
over MCP. A parent stops its child with stop_task_kandev; a task entering its final step ends its
sessions (the running turn cancelled, the agent's real launch token refused)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from mcp.shared.exceptions import MCPError
from sqlalchemy import select

from kandev.domain.workflow.service import final_step_of
from kandev.models import Message, QueuedPrompt, Session, SessionToken, Task
from tests.integration.jobs.test_session_tokens import REFUSED, live_system, spied_task
from tests.integration.mcp_transport.conftest import MODERN, mcp_client, refusal
from tests.support.factories import new_task
from tests.support.session_tokens import side_token
from tests.support.watch import watching

pytestmark = pytest.mark.slow

SEND = """mutation($input: SendMessageInput!) { sendMessage(input: $input) { __typename
  ... on Error { message } } }"""


async def transcript(db: Any, session_id: str, kind: str) -> list[Message]:
    async with db.read() as s:
        rows = await s.scalars(
            select(Message).where(Message.session_id == session_id, Message.kind == kind).order_by(Message.seq)
        )
        return list(rows)


async def agent_calls(services: Any, bus: Any, db: Any, task_id: str, tool: str, arguments: dict[str, Any]) -> Any:
    """Start the task's agent on one MCP call of `tool` in a real turn; returns what the tool answered it."""
    directive = f"/tool {tool} {json.dumps(arguments)}"
    session_id = (await services.sessions.start_task(task_id, directive, None)).session.id
    async with watching(bus, db, session_id) as watch:
        await watch.turns_ended(1, timeout=60)
    [call] = await transcript(db, session_id, "TOOL_CALL")
    return call.data["raw_output"]


async def state_of(db: Any, task_id: str) -> dict[str, Any]:
    """Everything a stop could change: the task's state and step, its sessions, their tokens and queues."""
    async with db.read() as s:
        task = await s.get(Task, task_id)
        sessions = list(await s.scalars(select(Session).where(Session.task_id == task_id).order_by(Session.id)))
        ids = [x.id for x in sessions]
        tokens = list(await s.scalars(select(SessionToken.revoked_at).where(SessionToken.session_id.in_(ids))))
        queued = list(
            await s.scalars(
                select(QueuedPrompt.state).where(QueuedPrompt.session_id.in_(ids)).order_by(QueuedPrompt.id)
            )
        )
    assert task is not None
    return {
        "task": (task.state, task.workflow_step_id, task.updated_at),
        "sessions": [(x.id, x.state, x.ended_at) for x in sessions],
        "tokens": tokens,
        "queued": queued,
    }


async def queued_texts(db: Any, session_id: str) -> list[tuple[str, str]]:
    async with db.read() as s:
        rows = await s.scalars(
            select(QueuedPrompt).where(QueuedPrompt.session_id == session_id).order_by(QueuedPrompt.seq)
        )
        return [(p.text, p.state) for p in rows]


async def test_a_parent_stops_its_running_child_over_mcp_and_its_queued_prompts_run_in_order_on_the_next_start(
    services, settings, bus, db, workspace_id, tmp_path
):
    async with live_system(settings, tmp_path) as live:
        parent = await new_task(services, workspace_id, "Parent")
        child = await new_task(services, workspace_id, "Child", parent_id=parent)
        parent_session = (await services.sessions.start_task(parent, "/say ready", None)).session.id
        async with watching(bus, db, parent_session) as watch:
            await watch.turns_ended(1, timeout=30)
        first = (await services.sessions.start_task(child, "/say working\n/sleep 30", None)).session.id
        async with watching(bus, db, first) as watch:
            await watch.message("AGENT", "working")
            step = (await services.tasks.get(child)).workflow_step_id
            for text in ("/say two", "/say three"):  # queued behind the running turn
                await services.sessions.send_message(child, text)
            # The parent's agent calls over MCP with its session's token (its one worker is busy with the child).
            async with mcp_client(live.mcp_url, MODERN, await side_token(db, parent_session)) as client:
                result = await client.call_tool("stop_task_kandev", {"task_id": child})
            [turn] = await watch.turns_ended(1, timeout=30)
        stopped = result.structured_content
        assert not result.is_error and stopped["status"] == "stopped", stopped
        assert stopped["stopped_session_ids"] == [first] and stopped["state"] == "REVIEW"
        assert (turn.state, turn.stop_reason) == ("CANCELLED", "cancelled")
        after = await services.tasks.get(child)
        assert (after.state, after.workflow_step_id) == ("REVIEW", step)  # its workflow step is unchanged
        assert (await services.sessions.get(first)).state == "CANCELLED"
        assert await queued_texts(db, first) == [
            ("/say working\n/sleep 30", "CLAIMED"),
            ("/say two", "QUEUED"),
            ("/say three", "QUEUED"),
        ]
        # The next start opens a new session that runs the prompts the stop left queued, in order.
        second = (await services.sessions.start_task(child, "/say four", None)).session.id
        assert second != first
        async with watching(bus, db, second) as watch:
            await watch.turns_ended(3, timeout=60)
        assert [m.text for m in await transcript(db, second, "AGENT")] == ["two", "three", "four"]


async def test_a_parent_stopping_an_idle_child_over_mcp_gets_not_running_and_changes_nothing(
    services, settings, bus, db, workspace_id, tmp_path
):
    async with live_system(settings, tmp_path):
        parent = await new_task(services, workspace_id, "Parent")
        child = await new_task(services, workspace_id, "Child", parent_id=parent)
        session = (await services.sessions.start_task(child, "/say done", None)).session.id
        async with watching(bus, db, session) as watch:
            await watch.turns_ended(1, timeout=30)
        before = await state_of(db, child)
        assert before["sessions"][0][1] == "WAITING_FOR_INPUT" and before["tokens"] == [None]
        answer = await agent_calls(services, bus, db, parent, "stop_task_kandev", {"task_id": child})
        assert answer["status"] == "not_running" and answer["stopped_session_ids"] == [], answer
        assert answer["state"] == before["task"][0]
        assert await state_of(db, child) == before


async def test_moving_a_task_with_a_running_turn_to_its_final_step_ends_its_sessions(
    services, settings, bus, db, workspace_id, tmp_path
):
    async with live_system(settings, tmp_path) as live:
        peer = await new_task(services, workspace_id, "Peer")
        task_id, session_id = await spied_task(services, workspace_id, live.spied, "/say working\n/sleep 30")
        task = await services.tasks.get(task_id)
        final = final_step_of(await services.workflows.steps(task.workflow_id))
        async with watching(bus, db, session_id) as watch:
            await watch.message("AGENT", "working")
            [token] = await live.launches(1)
            async with mcp_client(live.mcp_url, MODERN, token) as client:
                assert (await client.list_tools()).tools
                await services.tasks.move(task_id, final.id)
                [turn] = await watch.turns_ended(1, timeout=30)
                with pytest.raises(MCPError):
                    await client.call_tool("list_tasks_kandev", {})
        assert (turn.state, turn.stop_reason) == ("CANCELLED", "cancelled")
        assert (await services.sessions.get(session_id)).state == "COMPLETED"
        assert (await services.tasks.get(task_id)).state == "COMPLETED"
        notes = [m for m in await transcript(db, session_id, "SYSTEM") if m.data.get("session_completed")]
        assert len(notes) == 1 and notes[0].turn_id == turn.id and final.name in notes[0].text
        assert (await refusal(live.mcp_url, MODERN, token)).message == REFUSED
        # A message now says how to open a new session, in the words of the caller's surface.
        async with httpx.AsyncClient(base_url=f"http://{live.address}", timeout=20) as http:
            body = (
                await http.post(
                    "/graphql", json={"query": SEND, "variables": {"input": {"taskId": task_id, "prompt": "more"}}}
                )
            ).json()
        sent = body["data"]["sendMessage"]
        assert sent["__typename"] == "ConflictError" and "startTask" in sent["message"], sent
        refused = await agent_calls(
            services, bus, db, peer, "message_task_kandev", {"task_id": task_id, "prompt": "more"}
        )
        assert "spawn_session_kandev" in json.dumps(refused) and "startTask" not in json.dumps(refused), refused
