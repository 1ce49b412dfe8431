"""The built-in authoring agent speaks ACP to the official `acp` client (it shares the scripted agent's
JSON-RPC loop), and its conversation outlives its process: it is kept per task in the session's cwd."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import acp
import pytest

from kandev.platform.agent_host import scripted_command
from kandev.runtime.author import STATE_FILE, choose_agent
from tests.integration.runtime.test_scripted_agent_conformance import RecordingClient, initialized

pytestmark = pytest.mark.slow

CONTEXT = (
    "<kandev-context>\nYou are working on Kandev task T1: Describe an automation\nWorkspace: W1\n</kandev-context>"
)


@asynccontextmanager
async def author(tmp_path: Path, client: RecordingClient) -> AsyncIterator[tuple[Any, str]]:
    """A fresh authoring agent process with a new ACP session in `tmp_path`."""
    argv = scripted_command("author")
    async with (
        asyncio.timeout(20),
        acp.spawn_agent_process(client, argv[0], *argv[1:], cwd=tmp_path) as (conn, _process),
    ):
        init = await initialized(conn)
        assert init.agent_info.name == "kandev-author"
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        yield conn, session.session_id


async def say(conn: Any, client: RecordingClient, session_id: str, text: str) -> str:
    before = len(client.texts())
    answer = await conn.prompt(session_id=session_id, prompt=[acp.text_block(text)])
    await client.until(lambda: len(client.texts()) > before)
    assert answer.stop_reason == "end_turn"
    return client.texts()[-1]


async def test_the_authoring_conversation_continues_in_a_restarted_agent_process(tmp_path: Path) -> None:
    first, second = RecordingClient(), RecordingClient()
    async with author(tmp_path, first) as (conn, session_id):
        replies = [await say(conn, first, session_id, f"{CONTEXT}\n\nhmm")]
        replies.append(await say(conn, first, session_id, "not sure"))
    assert (tmp_path / STATE_FILE).exists()
    async with author(tmp_path, second) as (conn, session_id):  # a new process: only the context names the task
        replies.append(await say(conn, second, session_id, f"{CONTEXT}\n\nsomething useful"))
        replies.append(await say(conn, second, session_id, "whatever"))
    assert all(r.startswith("When should it run?") for r in replies[:3])
    assert replies[3].startswith("Here is what I have so far:")  # the fourth in a row: it kept count


def test_it_runs_automations_on_an_agent_the_operator_named_else_the_first_available_acp_agent() -> None:
    agents = [
        {"id": "a", "name": "Automation author", "kind": "AUTHOR", "available": True},
        {"id": "s", "name": "Scripted", "kind": "SCRIPTED", "available": True},
        {"id": "c", "name": "Claude Code", "kind": "ACP", "available": False},
        {"id": "g", "name": "Gemini CLI", "kind": "ACP", "available": True},
    ]
    assert choose_agent(agents, ["every day, with scripted, tidy up"])["id"] == "s"
    assert choose_agent(agents, ["use claude code"])["id"] == "g"  # named but not installed
    assert choose_agent(agents[:2], ["tidy up"])["id"] == "s"
    assert choose_agent(agents[:1], ["tidy up"]) is None  # never itself
