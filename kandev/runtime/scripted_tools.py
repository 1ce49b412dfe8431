"""The scripted agent's `/tool` call: one Streamable HTTP round trip with the official MCP client."""

from __future__ import annotations

from typing import Any, NamedTuple

NO_SERVER = (
    "no kandev MCP server was given in session/new, so /tool {name} cannot run "
    "(the session needs an MCP server named 'kandev')"
)


class McpTarget(NamedTuple):
    """Where the session's kandev MCP server lives and the headers it wants (the bearer token)."""

    url: str
    headers: dict[str, str]


class StdioTarget(NamedTuple):
    """A stdio MCP server given in session/new: the command to spawn, its args and env."""

    command: str
    args: list[str]
    env: dict[str, str]


class ToolOutcome(NamedTuple):
    """A finished tool call: success flag, text for the transcript, raw output as JSON."""

    ok: bool
    text: str
    raw: Any = None


def _leaf(exc: BaseException) -> BaseException:
    # anyio wraps transport failures in exception groups; the first leaf says what went wrong.
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


async def call_tool(
    target: McpTarget | StdioTarget | None, name: str, arguments: dict[str, Any], timeout: float = 300.0
) -> ToolOutcome:
    """Call `name` on `target`; every failure becomes a failed outcome with a readable text."""
    if target is None:
        return ToolOutcome(False, NO_SERVER.format(name=name))
    # Imported here so plain turns never pay for the MCP client.
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    if isinstance(target, StdioTarget):
        return await _call_stdio(target, name, arguments, timeout)
    # `legacy` is the initialize handshake every server speaks; `auto` adds a discover probe
    # (about 140 ms per call instead of 60 ms on loopback).
    try:
        async with (
            httpx2.AsyncClient(headers=target.headers, timeout=httpx2.Timeout(30.0, read=timeout)) as http,
            Client(streamable_http_client(target.url, http_client=http), mode="legacy") as client,
        ):
            result = await client.call_tool(name, arguments, read_timeout_seconds=timeout)
    except Exception as exc:
        leaf = _leaf(exc)
        return ToolOutcome(False, f"MCP call {name} failed: {type(leaf).__name__}: {leaf}")
    return _outcome(result)


async def _call_stdio(target: StdioTarget, name: str, arguments: dict[str, Any], timeout: float) -> ToolOutcome:
    """Spawn the stdio server for this one call (its env on top of the agent's PATH and HOME)."""
    import os

    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    env = {k: v for k in ("PATH", "HOME") if (v := os.environ.get(k)) is not None}
    params = StdioServerParameters(command=target.command, args=target.args, env={**env, **target.env})
    try:
        async with Client(params, mode="legacy") as client:
            result = await client.call_tool(name, arguments, read_timeout_seconds=timeout)
    except Exception as exc:
        leaf = _leaf(exc)
        return ToolOutcome(False, f"MCP call {name} failed: {type(leaf).__name__}: {leaf}")
    return _outcome(result)


def _outcome(result: Any) -> ToolOutcome:
    texts = [str(getattr(block, "text", "")) for block in result.content if getattr(block, "type", "") == "text"]
    raw = result.structured_content if result.structured_content is not None else {"content": texts}
    return ToolOutcome(not result.is_error, "\n".join(texts), raw)
