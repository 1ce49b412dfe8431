"""Hypothesis-generated arguments for every tool /mcp and /mcp/session advertise, through the official MCP client
against a real server: no call crashes (a protocol error, an INTERNAL tool error) and no error text echoes the
secret-looking marker planted in the generated strings."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from mcp import Client
from mcp.shared.exceptions import MCPError

from kandev.domain.tasks.service import CreateTask
from kandev.edge.mcp_bridge.server import TOOL_FAILED
from kandev.platform.settings import Settings
from tests.integration.mcp_transport.conftest import MODERN, mcp_client
from tests.support.factories import settings_for
from tests.support.server import running_server
from tests.support.session_tokens import launch_token

pytestmark = [pytest.mark.reliability, pytest.mark.slow]

EXAMPLES = 10  # per tool and endpoint; derandomized, so a CI run is reproducible
MARKER = "sk-live-RELIABILITY-7f3a9c0b"
CALL_TIMEOUT = 30


@pytest.fixture
def settings(database_url: str, redis_url: str, tmp_path: Path) -> Settings:
    # Tools that wait on a person (a question to the user) give up quickly.
    return settings_for(database_url, redis_url, tmp_path, clarification_timeout_s=0.5)


def marked_text() -> st.SearchStrategy[str]:
    """Strings carrying the marker, so an error that echoes its input shows it."""
    return st.text(max_size=8).map(lambda prefix: f"{prefix}{MARKER}")


def value_for(schema: dict[str, Any], known: list[str], strict: bool, depth: int = 0) -> st.SearchStrategy[Any]:
    """A value of the declared type (a known id or enum member where one fits); when not strict, sometimes any."""
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    options: list[st.SearchStrategy[Any]] = []
    if "enum" in schema:
        options.append(st.sampled_from(schema["enum"]))
    if "string" in kinds:
        options += [marked_text(), st.sampled_from(known)]
    if "integer" in kinds or "number" in kinds:
        options.append(st.integers())
    if "boolean" in kinds:
        options.append(st.booleans())
    if "array" in kinds and depth < 3:
        options.append(st.lists(value_for(schema.get("items") or {}, known, strict, depth + 1), max_size=3))
    if "object" in kinds and depth < 3:
        options.append(arguments_for(schema, known, strict, depth + 1))
    wrong = st.none() | st.booleans() | st.integers() | marked_text() | st.lists(marked_text(), max_size=2)
    if not options:
        return wrong
    return st.one_of(*options) if strict else st.one_of(*options, wrong)


def arguments_for(
    schema: dict[str, Any], known: list[str], strict: bool, depth: int = 0
) -> st.SearchStrategy[dict[str, Any]]:
    """Required properties always, optional ones sometimes; when not strict, now and then an unknown one."""
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    fixed = {name: value_for(properties[name], known, strict, depth) for name in required if name in properties}
    optional = {name: value_for(sub, known, strict, depth) for name, sub in properties.items() if name not in required}
    if not strict:
        optional["unknown_argument"] = marked_text()  # the marker goes in values: a name-like key is named
    return st.fixed_dictionaries(fixed, optional=optional)


def tool_arguments(schema: dict[str, Any], known: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    """Half well-typed (to get past validation into the tool), half anything goes."""
    return arguments_for(schema, known, strict=True) | arguments_for(schema, known, strict=False)


@dataclass
class Tally:
    tools: int = 0
    calls: int = 0
    errors: int = 0
    crashes: list[str] = field(default_factory=list)
    echoes: list[str] = field(default_factory=list)


async def call(client: Client, tool: str, arguments: dict[str, Any], tally: Tally) -> None:
    tally.calls += 1
    try:
        result = await asyncio.wait_for(client.call_tool(tool, arguments), timeout=CALL_TIMEOUT)
    except MCPError as error:
        tally.crashes.append(f"{tool}: protocol error {error} for {arguments!r}")
        return
    if not result.is_error:
        return
    tally.errors += 1
    text = " ".join(getattr(part, "text", "") for part in result.content)
    code = (result.structured_content or {}).get("code")
    if code == "INTERNAL" or TOOL_FAILED in text:
        tally.crashes.append(f"{tool}: {text} for {json.dumps(arguments)[:300]}")
    if MARKER in text or MARKER in json.dumps(result.structured_content or {}):
        tally.echoes.append(f"{tool}: {text[:300]}")


def fuzz_tool(client: Client, tool: Any, known: list[str], loop: asyncio.AbstractEventLoop, tally: Tally) -> None:
    """Hypothesis runs in this thread; each call runs on the server's event loop, where the client lives."""
    tally.tools += 1
    bounded = hypothesis_settings(
        max_examples=EXAMPLES, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck)
    )

    @bounded
    @given(arguments=tool_arguments(tool.input_schema, known))
    def run(arguments: dict[str, Any]) -> None:
        asyncio.run_coroutine_threadsafe(call(client, tool.name, arguments, tally), loop).result(CALL_TIMEOUT + 5)

    run()


def fuzz_tools(client: Client, tools: list[Any], known: list[str], loop: asyncio.AbstractEventLoop) -> Tally:
    tally = Tally()
    for tool in tools:
        fuzz_tool(client, tool, known, loop, tally)
    return tally


@pytest.fixture
async def address(settings: Settings) -> AsyncIterator[str]:
    async with running_server(settings) as served:
        yield served


@pytest.mark.parametrize("endpoint", ["/mcp", "/mcp/session"])
async def test_generated_tool_arguments_never_crash_a_tool_or_echo_a_value(address, endpoint, services, workspace_id):
    agent_task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Agent"))).task
    agent_session = (await services.sessions.start_task(agent_task.id, "hello", None)).session
    token = await launch_token(services.ctx, agent_session.id) if endpoint == "/mcp/session" else None
    # The ids offered belong to another task: a generated delete of the agent's own task would (rightly)
    # revoke the token the rest of the run needs.
    task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Fuzzed"))).task
    session = (await services.sessions.start_task(task.id, "hello", None)).session
    workflow = (await services.workflows.list_for_workspace(workspace_id))[0]
    steps = (await services.lookups.steps_by_workflow([workflow.id]))[0]
    known = [workspace_id, task.id, session.id, workflow.id, *(step.id for step in steps), "not-an-id"]
    began = time.monotonic()
    async with mcp_client(f"http://{address}{endpoint}", MODERN, token) as client:
        tools = (await client.list_tools()).tools
        loop = asyncio.get_running_loop()
        tally = await asyncio.wait_for(asyncio.to_thread(fuzz_tools, client, tools, known, loop), timeout=240)
    elapsed = time.monotonic() - began
    assert tally.tools == len(tools) > 5
    assert tally.calls >= tally.tools * 2
    assert tally.crashes == [], "\n".join(tally.crashes[:20])
    assert tally.echoes == [], "\n".join(tally.echoes[:40])
    print(
        f"\n[reliability] MCP fuzz {endpoint}: {tally.tools} tools, {tally.calls} calls, "
        f"{tally.errors} typed tool errors, {elapsed:.1f}s"
    )
