"""The scripted agent speaks ACP: the official `acp` client library drives it over stdio and parses every
answer and update into its typed models (the agent itself is standard library only)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import acp
import pytest
from acp.schema import (
    AgentMessageChunk,
    AllowedOutcome,
    ClientCapabilities,
    CurrentModeUpdate,
    DeniedOutcome,
    FileSystemCapabilities,
    Implementation,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
)

from kandev import __version__
from kandev.platform.agent_host import scripted_command

pytestmark = pytest.mark.slow


class RecordingClient:
    """The client half: records every session update and answers permission asks with `answer`."""

    def __init__(self, answer: str | None = "allow") -> None:
        self.updates: list[tuple[str, Any]] = []
        self.asked: list[tuple[ToolCallUpdate, list[PermissionOption]]] = []
        self.answer = answer
        self._changed = asyncio.Event()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))
        self._changed.set()

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **kwargs: Any
    ) -> RequestPermissionResponse:
        self.asked.append((tool_call, options))
        if self.answer is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=self.answer))

    def of(self, kind: type) -> list[Any]:
        return [update for _, update in self.updates if isinstance(update, kind)]

    def texts(self) -> list[str]:
        return [u.content.text for u in self.of(AgentMessageChunk)]

    async def until(self, condition: Callable[[], bool]) -> None:
        while not condition():
            self._changed.clear()
            await self._changed.wait()


Connection = Any  # acp.ClientSideConnection


@asynccontextmanager
async def scripted(tmp_path: Path, client: RecordingClient, **env: str) -> AsyncIterator[Connection]:
    """The scripted agent as a child process, with the official client connected and initialized."""
    argv = scripted_command()
    try:
        async with (
            asyncio.timeout(20),
            acp.spawn_agent_process(client, argv[0], *argv[1:], env=env, cwd=tmp_path) as (
                conn,
                _process,
            ),
        ):
            yield conn
    except ProcessLookupError:
        # acp's teardown terminates the agent when its wait for the exit times out; on a loaded machine the
        # agent sometimes exits just then, and terminating a process that is gone raises this.
        pass


async def initialized(conn: Connection) -> Any:
    capabilities = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=False, write_text_file=False))
    return await conn.initialize(
        protocol_version=acp.PROTOCOL_VERSION,
        client_capabilities=capabilities,
        client_info=Implementation(name="conformance", version="1"),
    )


async def test_initialize_reports_the_protocol_version_capabilities_and_agent_info(tmp_path: Path) -> None:
    async with scripted(tmp_path, RecordingClient()) as conn:
        init = await initialized(conn)
    assert init.protocol_version == acp.PROTOCOL_VERSION
    assert init.agent_capabilities.load_session is False
    assert init.agent_capabilities.mcp_capabilities.http is True
    assert init.auth_methods == []
    assert (init.agent_info.name, init.agent_info.version) == ("kandev-scripted", __version__)


async def test_a_new_session_has_an_id_and_the_default_and_plan_modes(tmp_path: Path) -> None:
    async with scripted(tmp_path, RecordingClient()) as conn:
        await initialized(conn)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
    assert len(session.session_id) == 32
    assert session.modes.current_mode_id == "default"
    assert [(m.id, m.name) for m in session.modes.available_modes] == [("default", "Default"), ("plan", "Plan")]


async def test_each_say_is_an_agent_message_of_its_own_and_the_turn_ends(tmp_path: Path) -> None:
    client = RecordingClient()
    async with scripted(tmp_path, client) as conn:
        await initialized(conn)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        answer = await conn.prompt(session_id=session.session_id, prompt=[acp.text_block("/say hello\n/say world")])
        await client.until(lambda: len(client.texts()) == 2)
    assert answer.stop_reason == "end_turn"
    assert client.texts() == ["hello", "world"]
    chunks = client.of(AgentMessageChunk)
    assert {sid for sid, _ in client.updates} == {session.session_id}
    assert all(c.message_id and c.message_id.startswith("say-") for c in chunks)
    assert chunks[0].message_id != chunks[1].message_id


async def test_a_prompt_without_directives_is_echoed_by_its_first_line(tmp_path: Path) -> None:
    client = RecordingClient()
    async with scripted(tmp_path, client) as conn:
        await initialized(conn)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        answer = await conn.prompt(
            session_id=session.session_id, prompt=[acp.text_block("\n  look at the bug\nthanks")]
        )
        await client.until(lambda: len(client.texts()) == 1)
    assert answer.stop_reason == "end_turn"
    assert client.texts() == ["look at the bug"]


async def test_a_tool_call_without_an_mcp_server_starts_pending_and_fails(tmp_path: Path) -> None:
    client = RecordingClient()
    async with scripted(tmp_path, client) as conn:
        await initialized(conn)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        answer = await conn.prompt(session_id=session.session_id, prompt=[acp.text_block('/tool echo {"a": 1}')])
        await client.until(lambda: len(client.of(ToolCallProgress)) == 1)
    [start], [done] = client.of(ToolCallStart), client.of(ToolCallProgress)
    assert answer.stop_reason == "end_turn"
    assert (start.tool_call_id, start.title, start.kind, start.status) == ("call-1", "echo", "other", "pending")
    assert start.raw_input == {"a": 1}
    assert (done.tool_call_id, done.status) == ("call-1", "failed")
    assert "no kandev MCP server" in done.content[0].content.text
    assert done.raw_output == {"error": done.content[0].content.text}


async def test_cancel_ends_a_sleeping_turn_at_once_as_cancelled(tmp_path: Path) -> None:
    client = RecordingClient()
    async with scripted(tmp_path, client) as conn:
        await initialized(conn)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        turn = asyncio.create_task(
            conn.prompt(session_id=session.session_id, prompt=[acp.text_block("/say before\n/sleep 30\n/say after")])
        )
        await client.until(lambda: client.texts() == ["before"])
        await conn.cancel(session_id=session.session_id)
        async with asyncio.timeout(3):
            answer = await turn
        again = await conn.prompt(session_id=session.session_id, prompt=[acp.text_block("/say again")])
        await client.until(lambda: len(client.texts()) == 2)
    assert answer.stop_reason == "cancelled"
    assert again.stop_reason == "end_turn"
    assert client.texts() == ["before", "again"]


@pytest.mark.parametrize(("answer", "said"), [("allow", "allow"), ("reject", "reject"), (None, "cancelled")])
async def test_permission_asks_the_client_and_says_its_answer(tmp_path: Path, answer: str | None, said: str) -> None:
    client = RecordingClient(answer)
    async with scripted(tmp_path, client) as conn:
        await initialized(conn)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        result = await conn.prompt(session_id=session.session_id, prompt=[acp.text_block("/permission Run it")])
        await client.until(lambda: len(client.texts()) == 1)
    [(tool_call, options)] = client.asked
    assert result.stop_reason == "end_turn"
    assert (tool_call.tool_call_id, tool_call.title) == ("call-1", "Run it")
    assert [(o.option_id, o.name, o.kind) for o in options] == [
        ("allow", "Allow", "allow_once"),
        ("reject", "Reject", "reject_once"),
    ]
    assert client.texts() == [f"permission Run it: {said}"]


async def test_fail_answers_the_prompt_with_an_internal_error_after_earlier_directives(tmp_path: Path) -> None:
    client = RecordingClient()
    async with scripted(tmp_path, client) as conn:
        await initialized(conn)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        with pytest.raises(acp.RequestError) as failed:
            await conn.prompt(session_id=session.session_id, prompt=[acp.text_block("/say a\n/fail it broke\n/say b")])
        await client.until(lambda: len(client.texts()) == 1)
    assert (failed.value.code, str(failed.value)) == (-32603, "it broke")
    assert client.texts() == ["a"]


async def test_set_mode_announces_the_new_mode_and_refuses_an_unknown_one(tmp_path: Path) -> None:
    client = RecordingClient()
    async with scripted(tmp_path, client) as conn:
        await initialized(conn)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        await conn.set_session_mode(session_id=session.session_id, mode_id="plan")
        await client.until(lambda: len(client.of(CurrentModeUpdate)) == 1)
        with pytest.raises(acp.RequestError) as refused:
            await conn.set_session_mode(session_id=session.session_id, mode_id="bogus")
    assert [u.current_mode_id for u in client.of(CurrentModeUpdate)] == ["plan"]
    assert refused.value.code == -32602


async def test_with_load_enabled_a_session_is_loaded_and_keeps_its_mode(tmp_path: Path) -> None:
    client = RecordingClient()
    async with scripted(tmp_path, client, KANDEV_SCRIPTED_LOAD="1") as conn:
        init = await initialized(conn)
        loaded = await conn.load_session(cwd=str(tmp_path), session_id="earlier", mcp_servers=[])
        await conn.set_session_mode(session_id="earlier", mode_id="plan")
        again = await conn.load_session(cwd=str(tmp_path), session_id="earlier", mcp_servers=[])
        answer = await conn.prompt(session_id="earlier", prompt=[acp.text_block("/say resumed")])
        await client.until(lambda: len(client.texts()) == 1)
    assert init.agent_capabilities.load_session is True
    assert loaded.modes.current_mode_id == "default" and again.modes.current_mode_id == "plan"
    assert answer.stop_reason == "end_turn" and client.updates[-1][0] == "earlier"


async def test_an_agent_signed_out_at_launch_offers_a_login_and_refuses_sessions(tmp_path: Path) -> None:
    async with scripted(tmp_path, RecordingClient(), KANDEV_SCRIPTED_AUTH="launch") as conn:
        init = await initialized(conn)
        with pytest.raises(acp.RequestError) as new:
            await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        with pytest.raises(acp.RequestError) as load:
            await conn.load_session(cwd=str(tmp_path), session_id="s", mcp_servers=[])
    assert [(m.id, m.name) for m in init.auth_methods] == [("scripted-login", "Scripted login")]
    assert new.value.code == load.value.code == -32000
    assert new.value.data == {"details": "Invalid API key · Please run /login"}


async def test_an_agent_whose_login_expired_refuses_every_prompt(tmp_path: Path) -> None:
    async with scripted(tmp_path, RecordingClient(), KANDEV_SCRIPTED_AUTH="prompt") as conn:
        await initialized(conn)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        with pytest.raises(acp.RequestError) as refused:
            await conn.prompt(session_id=session.session_id, prompt=[acp.text_block("/say hi")])
    assert refused.value.code == -32000


async def test_an_unknown_method_and_an_unknown_session_are_json_rpc_errors(tmp_path: Path) -> None:
    async with scripted(tmp_path, RecordingClient()) as conn:
        await initialized(conn)
        with pytest.raises(acp.RequestError) as unknown_method:
            await conn.list_sessions()
        with pytest.raises(acp.RequestError) as unknown_session:
            await conn.prompt(session_id="nope", prompt=[acp.text_block("/say hi")])
    assert unknown_method.value.code == -32601
    assert unknown_session.value.code == -32602


def imported_modules(stderr: str) -> set[str]:
    """The modules `python -X importtime` reports."""
    return {line.rsplit("|", 1)[1].strip() for line in stderr.splitlines() if line.startswith("import time:")}


def test_serving_a_turn_imports_neither_acp_nor_mcp_nor_asyncio() -> None:
    argv = scripted_command()
    init = '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}'
    new = '{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}'
    done = subprocess.run(
        [argv[0], "-X", "importtime", *argv[1:]], input=f"{init}\n{new}\n", capture_output=True, text=True, timeout=20
    )
    assert done.returncode == 0 and '"protocolVersion":1' in done.stdout
    roots = {name.split(".")[0] for name in imported_modules(done.stderr)}
    assert "kandev" in roots and roots.isdisjoint({"acp", "mcp", "pydantic", "asyncio", "httpx2", "anyio"})


def test_importing_the_scripted_agent_imports_neither_acp_nor_mcp() -> None:
    check = "import sys, kandev.runtime.scripted; print(sorted({m.split('.')[0] for m in sys.modules}))"
    done = subprocess.run([sys.executable, "-I", "-c", check], capture_output=True, text=True, timeout=20)
    assert done.returncode == 0, done.stderr
    assert "'acp'" not in done.stdout and "'mcp'" not in done.stdout and "'kandev'" in done.stdout


async def test_mcp_servers_reports_the_servers_of_session_new_with_their_origins_and_tool_calls_a_stdio_one(
    tmp_path: Path,
) -> None:
    from acp.schema import EnvVariable, HttpMcpServer, McpServerStdio

    from tests.support.fake_mcp import FIXTURE_PACKAGE

    origins = [{"scope": "PROFILE", "id": "p1"}, {"scope": "TASK", "id": "t1"}]
    servers: list[Any] = [
        HttpMcpServer(type="http", name="kandev", url="http://127.0.0.1:9/mcp/session", headers=[]),
        HttpMcpServer(
            type="http",
            name="docs",
            url="http://127.0.0.1:9/mcp",
            headers=[],
            field_meta={"kandev": {"origins": origins}},
        ),
        McpServerStdio(
            name="fixture",
            command=str(FIXTURE_PACKAGE / "server.js"),
            args=[],
            env=[EnvVariable(name="FIXTURE_TOKEN", value="tok-0c7e5a91d3f2")],
        ),
    ]
    client = RecordingClient()
    async with scripted(tmp_path, client) as conn:
        await initialized(conn)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=servers)
        prompt = [acp.text_block('/mcp-servers\n/tool fixture/whoami {"n": 2}\n/tool nowhere/whoami {}')]
        answer = await conn.prompt(session_id=session.session_id, prompt=prompt)
        await client.until(lambda: len(client.of(ToolCallProgress)) == 2)
    assert answer.stop_reason == "end_turn"
    [report] = client.texts()
    assert json.loads(report) == {
        "mcp_servers": [
            {"name": "kandev", "origins": []},
            {"name": "docs", "origins": origins},
            {"name": "fixture", "origins": []},
        ]
    }
    stdio, unknown = client.of(ToolCallProgress)
    assert stdio.status == "completed" and stdio.raw_output == {"content": ['token=tok-0c7e5a91d3f2 args={"n":2}']}
    assert unknown.status == "failed"
