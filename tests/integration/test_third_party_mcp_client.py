"""A third-party MCP client (the MCP Inspector CLI, from npm) lists and calls our external tools."""

from __future__ import annotations

import asyncio
import json
import shutil

import pytest

from tests.support.server import running_server

pytestmark = pytest.mark.slow
INSPECTOR = "@modelcontextprotocol/inspector@0.22.0"  # the last release that runs on Node 20


async def inspector(url: str, *args: str) -> dict:
    process = await asyncio.create_subprocess_exec(
        "npx",
        "-y",
        INSPECTOR,
        "--cli",
        url,
        "--transport",
        "http",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(), timeout=300)
    except TimeoutError:
        process.kill()
        raise
    assert process.returncode == 0, err.decode()[-2000:]
    return json.loads(out.decode()[out.decode().index("{") :])


async def test_the_mcp_inspector_cli_lists_and_calls_the_external_tools(settings):
    if shutil.which("npx") is None:
        pytest.skip("npx is not installed")
    async with running_server(settings) as address:
        url = f"http://{address}/mcp"
        listed = await inspector(url, "--method", "tools/list")
        called = await inspector(url, "--method", "tools/call", "--tool-name", "list_workspaces_kandev")
    names = {tool["name"] for tool in listed["tools"]}
    assert {"create_task_kandev", "list_tasks_kandev", "resolve_agent_permission_kandev"} <= names
    assert "message_task_kandev" not in names  # a session-only tool
    create = next(t for t in listed["tools"] if t["name"] == "create_task_kandev")
    assert (
        create["inputSchema"]["additionalProperties"] is False
        and "description" not in create["inputSchema"]["properties"]
    )
    payload = json.loads(called["content"][0]["text"])
    assert [w["name"] for w in payload["workspaces"]] == ["Default"]
