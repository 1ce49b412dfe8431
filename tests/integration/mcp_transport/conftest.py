"""The MCP transport against the running app, with a small fake ToolSurface plugged into create_app."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from kandev.app import create_app
from kandev.domain.services import Services
from kandev.domain.tasks.service import CreateTask
from kandev.edge.mcp_bridge.server import McpBridge
from kandev.edge.mcp_bridge.surface import McpCaller
from tests.support import server as support_server
from tests.support.server import running_server
from tests.support.session_tokens import launch_token

LEGACY = "legacy"
MODERN = "2026-07-28"
ERAS = [LEGACY, MODERN]
WAIT = 10.0


class SurfaceFailure(RuntimeError):
    pass


@dataclass
class FakeSurface:
    """Lists depend on the caller and a mutable per-session dict; `echo`, `whoami` answer, `boom` raises."""

    extra_tools: dict[str, list[str]] = field(default_factory=dict)
    listed_for: list[McpCaller] = field(default_factory=list)
    called_by: list[McpCaller] = field(default_factory=list)

    def names(self, caller: McpCaller) -> list[str]:
        if caller.endpoint == "external":
            return ["echo", "whoami"]
        return ["echo", "whoami", "boom", *self.extra_tools.get(caller.session_id or "", [])]

    async def list_tools(self, caller: McpCaller) -> list[types.Tool]:
        self.listed_for.append(caller)
        schema = {"type": "object", "properties": {"text": {"type": "string"}}, "additionalProperties": False}
        return [
            types.Tool(name=name, description=f"{name} for tests", input_schema=schema) for name in self.names(caller)
        ]

    async def call_tool(self, caller: McpCaller, name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
        self.called_by.append(caller)
        if name == "boom":
            raise SurfaceFailure("database password is hunter2")
        if name not in self.names(caller):
            raise MCPError(types.INVALID_PARAMS, "unknown tool", data={"code": "UNKNOWN_TOOL"})
        if name == "whoami":
            principal = caller.principal
            return _result(
                {
                    "endpoint": caller.endpoint,
                    "session_id": caller.session_id,
                    "task_id": caller.task_id,
                    "user_id": principal.user_id,
                    "login": principal.login,
                    "actor": principal.actor,
                }
            )
        return _result({"echo": (arguments or {}).get("text")})


def _result(payload: dict[str, Any], *, error: bool = False) -> types.CallToolResult:
    import json

    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(payload))],
        structured_content=payload,
        is_error=error,
    )


@pytest.fixture
def surface() -> FakeSurface:
    return FakeSurface()


@dataclass
class App:
    address: str
    bridge: McpBridge

    def url(self, path: str) -> str:
        return f"http://{self.address}{path}"


@pytest.fixture
async def app(settings: Any, surface: FakeSurface, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[App]:
    monkeypatch.setattr(support_server, "create_app", functools.partial(create_app, mcp_surface=surface))
    async with running_server(settings) as address:
        bridge = support_server._last_app[-1].state.mcp_bridge
        assert bridge.callers.watch is not None  # started with the app
        async with asyncio.timeout(5):  # its lease taken, so the first call's check is kept
            await bridge.callers.watch.until_trusted()
        yield App(address, bridge)


@dataclass
class AgentSession:
    task_id: str
    session_id: str
    token: str


@pytest.fixture
def new_session(services: Services, workspace_id: str) -> Callable[[], Awaitable[AgentSession]]:
    async def make() -> AgentSession:
        task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="t"))).task
        delivery = await services.sessions.start_task(task.id, "hello", None)
        session_id = delivery.session.id
        return AgentSession(task.id, session_id, await launch_token(services.ctx, session_id))

    return make


@dataclass
class Notifications:
    """Counts tools/list_changed notifications a client receives; waits are bounded."""

    count: int = 0
    _changed: anyio.Event = field(default_factory=anyio.Event)

    async def handler(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.count += 1
            self._changed.set()
            self._changed = anyio.Event()

    async def wait_for(self, count: int) -> None:
        with anyio.fail_after(WAIT):
            while self.count < count:
                await self._changed.wait()

    async def settle_at(self, count: int, window: float = 0.3) -> None:
        """Exactly `count`: waits for it, then sees nothing more arrive within a short window."""
        await self.wait_for(count)
        with anyio.move_on_after(window):
            await self._changed.wait()
        assert self.count == count


@asynccontextmanager
async def mcp_client(
    url: str,
    era: str,
    token: str | None = None,
    notifications: Notifications | None = None,
    on_request: Callable[[httpx2.Request], Awaitable[None]] | None = None,
) -> AsyncIterator[Client]:
    """The official client over Streamable HTTP, in one protocol era, with an optional bearer token (and an
    optional hook that sees each HTTP request it sends)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    hooks = {"request": [on_request]} if on_request else {}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(WAIT, read=300), event_hooks=hooks) as http:
        transport = streamable_http_client(url, http_client=http)
        handler = notifications.handler if notifications else None
        async with Client(transport, mode=era, message_handler=handler, read_timeout_seconds=WAIT) as client:
            yield client


def _mcp_errors(error: BaseException) -> list[MCPError]:
    if isinstance(error, MCPError):
        return [error]
    if isinstance(error, BaseExceptionGroup):
        return [found for inner in error.exceptions for found in _mcp_errors(inner)]
    return []


async def refusal(url: str, era: str, token: str | None) -> MCPError:
    """The MCPError the official client raises when the endpoint refuses its credential."""
    try:
        async with mcp_client(url, era, token) as client:
            await client.list_tools()
    except BaseException as error:  # the handshake-era client raises it inside exception groups
        found = _mcp_errors(error)
        if not found:
            raise
        return found[0]
    raise AssertionError("the endpoint accepted the credential")
