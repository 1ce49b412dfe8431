"""`/tool` and `/on-question` against a real MCP server over Streamable HTTP, and without one."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import uvicorn
from mcp.server.mcpserver import Context, MCPServer

from tests.integration.runtime.conftest import Launch

pytestmark = pytest.mark.slow

TOKEN = "session-token-123"


@dataclass
class FakeKandevMcp:
    """A tiny MCP server standing in for kandev's `/mcp/session`; records what reached it."""

    url: str
    authorizations: list[str | None] = field(default_factory=list)
    replies: list[dict[str, Any]] = field(default_factory=list)


def _server(recorder: FakeKandevMcp) -> MCPServer:
    server = MCPServer("fake-kandev")

    @server.tool()
    def echo(text: str, ctx: Context) -> dict[str, Any]:
        """Return the text it was given."""
        recorder.authorizations.append((ctx.headers or {}).get("authorization"))
        return {"echoed": text}

    @server.tool()
    def message_task_kandev(task_id: str, reply_to_question_id: str, prompt: str) -> dict[str, Any]:
        """Record a reply to a parent question."""
        recorder.replies.append({"task_id": task_id, "reply_to_question_id": reply_to_question_id, "prompt": prompt})
        return {"id": "msg-1"}

    return server


@pytest.fixture
async def mcp_server() -> AsyncIterator[FakeKandevMcp]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    recorder = FakeKandevMcp(url=f"http://127.0.0.1:{sock.getsockname()[1]}/mcp")
    # streamable_http_app mounts an exact Route at /mcp and runs the session manager in its lifespan.
    app = _server(recorder).streamable_http_app()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        async with asyncio.timeout(10):
            while not server.started:
                if task.done():
                    task.result()
                await asyncio.sleep(0.01)
        yield recorder
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 10)
        sock.close()


async def test_tool_without_an_mcp_server_reports_a_failed_tool_call(launch: Launch) -> None:
    agent = await launch()
    async with asyncio.timeout(10):
        result = await agent.runtime.prompt('/tool echo {"text": "hi"}\n/say still here')
    assert result.stop_reason == "end_turn"
    start, done = [u for u in agent.updates if u.kind.startswith("tool_call")]
    assert start.kind == "tool_call" and start.data["status"] == "pending" and start.data["title"] == "echo"
    assert done.kind == "tool_call_update" and done.data["status"] == "failed"
    assert done.data["tool_call_id"] == start.data["tool_call_id"]
    assert "no kandev MCP server" in done.text
    assert agent.texts() == ["still here"]


async def test_tool_with_bad_json_reports_a_failed_tool_call(launch: Launch) -> None:
    agent = await launch()
    async with asyncio.timeout(10):
        await agent.runtime.prompt("/tool echo {oops")
    done = [u for u in agent.updates if u.kind == "tool_call_update"]
    assert done[0].data["status"] == "failed" and "not valid JSON" in done[0].text


async def test_tool_calls_the_session_mcp_server_with_the_bearer_token(
    launch: Launch, mcp_server: FakeKandevMcp
) -> None:
    agent = await launch(mcp_url=mcp_server.url, mcp_token=TOKEN, secrets=[TOKEN])
    async with asyncio.timeout(20):
        result = await agent.runtime.prompt('/tool echo {"text": "ping"}')
    assert result.stop_reason == "end_turn"
    assert mcp_server.authorizations == [f"Bearer {TOKEN}"]
    start, done = [u for u in agent.updates if u.kind.startswith("tool_call")]
    assert start.data["raw_input"] == {"text": "ping"}
    assert done.data["status"] == "completed"
    assert done.data["raw_output"] == {"echoed": "ping"}
    assert "ping" in done.text


async def test_a_tool_error_from_the_server_is_a_failed_tool_call(launch: Launch, mcp_server: FakeKandevMcp) -> None:
    agent = await launch(mcp_url=mcp_server.url, mcp_token=TOKEN)
    async with asyncio.timeout(20):
        result = await agent.runtime.prompt("/tool no_such_tool {}")
    assert result.stop_reason == "end_turn"
    (done,) = [u for u in agent.updates if u.kind == "tool_call_update"]
    assert done.data["status"] == "failed" and done.text


async def test_an_unreachable_mcp_server_is_a_failed_tool_call(launch: Launch) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    agent = await launch(mcp_url=f"http://127.0.0.1:{port}/mcp", mcp_token=TOKEN)
    async with asyncio.timeout(20):
        await agent.runtime.prompt('/tool echo {"text": "x"}')
    (done,) = [u for u in agent.updates if u.kind == "tool_call_update"]
    assert done.data["status"] == "failed" and "MCP call echo failed" in done.text


async def test_a_remembered_answer_replies_to_a_later_parent_question(
    launch: Launch, mcp_server: FakeKandevMcp
) -> None:
    agent = await launch(mcp_url=mcp_server.url, mcp_token=TOKEN)
    question = (
        "Your parent asks: which database?\n"
        'Reply with message_task_kandev: {"task_id": "T1", "reply_to_question_id": "Q7"}'
    )
    async with asyncio.timeout(20):
        await agent.runtime.prompt("/on-question PostgreSQL, please")
        result = await agent.runtime.prompt(question)
    assert result.stop_reason == "end_turn"
    assert mcp_server.replies == [{"task_id": "T1", "reply_to_question_id": "Q7", "prompt": "PostgreSQL, please"}]
    (done,) = [u for u in agent.updates if u.kind == "tool_call_update"]
    assert done.data["status"] == "completed"
