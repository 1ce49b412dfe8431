"""The MCP transport: one low-level `mcp` Server over Streamable HTTP on `/mcp` and `/mcp/session`,
serving both protocol eras, asking a ToolSurface per request what the authenticated caller gets."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Any

from mcp import types
from mcp.server.caching import CacheHint
from mcp.server.connection import Connection
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.subscriptions import ListenHandler
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_REQUEST
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError
from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.types import Message, Receive, Scope, Send

from kandev import __version__
from kandev.domain.access.tokens import live_credentials
from kandev.edge.mcp_bridge.auth import SessionCallers, caller_identity, resolve_caller, unauthorized
from kandev.edge.mcp_bridge.notifications import ToolsChangedFanout, listener_key
from kandev.edge.mcp_bridge.surface import Endpoint, McpCaller, ToolSurface
from kandev.edge.open_connections import OpenConnections

if TYPE_CHECKING:
    from kandev.wiring import AppState

log = logging.getLogger("kandev.edge.mcp_bridge")

SERVER_NAME = "kandev"
CALLER_SCOPE_KEY = "kandev.mcp_caller"
MARK_SCOPE_KEY = "kandev.access_mark"
ENDPOINT_PATHS: dict[Endpoint, str] = {"external": "/mcp", "session": "/mcp/session"}
TOOL_FAILED = "The tool failed unexpectedly and did nothing you can rely on. Try again later, or report it."
_TRACKED = "kandev.tools_changed"
SHUTDOWN_POLL_SECONDS = 0.5


class _KandevServer(Server[Any]):
    """Advertises tools.listChanged to handshake-era clients, which we notify on profile changes."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        options = notification_options or NotificationOptions(tools_changed=True)
        return super().create_initialization_options(options, experimental_capabilities, extensions)


class McpBridge:
    """Routes, lifespan and handlers around any ToolSurface; the surface decides what each caller gets. A person's
    MCP sessions and listen streams on /mcp are held in `connections`, so revoking what opened them ends them."""

    def __init__(
        self,
        surface: ToolSurface,
        state_getter: Callable[[], AppState],
        *,
        name: str = SERVER_NAME,
        connections: OpenConnections | None = None,
    ) -> None:
        self.surface = surface
        self._state = state_getter
        self.fanout = ToolsChangedFanout(lambda: self._state().bus)
        self.server = _KandevServer(
            name,
            version=__version__,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_subscriptions_listen=self._listen,
            # Lists differ per session and change at any time: no client may reuse one.
            cache_hints={"tools/list": CacheHint(ttl_ms=0, scope="private")},
            # The catalogue declares no `x-mcp-header` parameters, so there is no Mcp-Param header to
            # check; without this the SDK would run a whole tools/list before every 2026-era call.
            get_tool_input_schema=lambda _name: None,
        )
        self.server.middleware.append(self._guard)
        self._managers: dict[Endpoint, StreamableHTTPSessionManager] = {}
        self._listen_handlers: set[ListenHandler] = set()
        self._open_streams: Counter[str] = Counter()
        self._draining = False
        self.callers = SessionCallers()
        self.connections = connections if connections is not None else OpenConnections()

    def routes(self) -> list[Route]:
        """Exact routes (a Mount would answer `POST /mcp` with a redirect that MCP clients refuse)."""
        return [
            Route(path, _Endpoint(self, endpoint), methods=["GET", "POST", "DELETE"])
            for endpoint, path in ENDPOINT_PATHS.items()
        ]

    @asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        """Runs one session manager per endpoint; enter it inside the host app's lifespan, after AppState."""
        # Host and Origin are checked for every route by kandev.edge.http_guard, which also knows
        # KANDEV_ALLOWED_HOSTS/ORIGINS; the SDK's narrower check would refuse those valid hosts.
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
        managers: dict[Endpoint, StreamableHTTPSessionManager] = {
            # Plain JSON answers to POSTs: no tool sends request-scoped notifications, and an SSE stream
            # per call costs about a fifth of a simple call's time. list_changed travels on the GET and
            # subscriptions/listen streams, which stay streams.
            endpoint: StreamableHTTPSessionManager(self.server, security_settings=security, json_response=True)
            for endpoint in ENDPOINT_PATHS
        }
        self._draining = False
        async with AsyncExitStack() as stack:
            state = self._state()
            self.callers.start(state.redis, people=self.connections.apply)
            stack.push_async_callback(self.callers.stop)
            assert self.callers.watch is not None
            self.connections.start(self.callers.watch, lambda tokens: live_credentials(state.db, tokens))
            stack.push_async_callback(self.connections.stop)
            for manager in managers.values():
                await stack.enter_async_context(manager.run())
            self._managers = managers
            drain = asyncio.create_task(self._drain_when_server_exits(), name="kandev-mcp-drain")
            try:
                yield
            finally:
                drain.cancel()
                self._managers = {}
                self._close_listen_streams()
        await self.fanout.close()

    async def _drain_when_server_exits(self) -> None:
        """uvicorn waits for open responses before the lifespan ends, and a 2026-era listen stream only
        ends when told to: close them gracefully (clients re-listen elsewhere) once the server exits."""
        while not _server_exiting():
            await asyncio.sleep(SHUTDOWN_POLL_SECONDS)
        self._close_listen_streams()

    def _close_listen_streams(self) -> None:
        self._draining = True
        for handler in list(self._listen_handlers):
            handler.close()

    def open_streams(self, session_id: str | None) -> int:
        """Notification streams this process holds for a session (None: external clients): handshake-era
        GET streams plus 2026-era listen streams."""
        return self._open_streams[listener_key(session_id)]

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        tools = await self.surface.list_tools(_caller(ctx))
        return types.ListToolsResult(tools=tools, ttl_ms=0, cache_scope="private")

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        caller = _caller(ctx)
        try:
            result = await self.surface.call_tool(caller, params.name, params.arguments)
            if not isinstance(result, types.CallToolResult):
                raise TypeError(f"surface returned {type(result).__name__}, not CallToolResult")
        except MCPError:
            raise  # the surface's protocol errors (an unknown tool) reach the caller as they are
        except Exception:
            # The surface answers expected failures itself; this is the last line of defence.
            log.exception("tool %s failed for %s", params.name, caller.principal.actor)
            return types.CallToolResult(content=[types.TextContent(type="text", text=TOOL_FAILED)], is_error=True)
        return result

    async def _listen(
        self, ctx: ServerRequestContext[Any, Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        """A 2026-era listen stream gets the changes of its caller's session only, for as long as its credential
        holds."""
        caller = _caller(ctx)
        key = listener_key(caller.session_id)
        async with self.fanout.listening(key) as bus:
            if self._draining:
                raise MCPError(INTERNAL_ERROR, "the server is shutting down; listen again")
            # No await between registering and the handler's own stream registration: a drain sees both.
            handler = ListenHandler(bus, max_subscriptions=1)
            self._listen_handlers.add(handler)
            self._open_streams[key] += 1

            async def close() -> None:
                handler.close()

            release = self.connections.open(caller.principal, close, mark=_scope_mark(ctx))
            try:
                return await handler(ctx, params)
            finally:
                release()
                self._open_streams[key] -= 1
                self._listen_handlers.discard(handler)

    async def _guard(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """Registers handshake-era connections for list_changed; masks unexpected exceptions."""
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            await self._track(ctx)
        try:
            return await call_next(ctx)
        except (MCPError, ValidationError):
            raise
        except Exception:
            # The handshake-era dispatcher would put str(exc) on the wire.
            log.exception("MCP %s failed", ctx.method)
            raise MCPError(INTERNAL_ERROR, "Internal server error") from None

    async def _track(self, ctx: ServerRequestContext[Any, Any]) -> None:
        """A handshake-era session: held open for its opener's credential, and told of tool list changes."""
        connection = _connection_of(ctx)
        caller = _scope_caller(ctx)
        if connection is None or caller is None or connection.session_id is None or _TRACKED in connection.state:
            return
        key = listener_key(caller.session_id)
        connection.state[_TRACKED] = key
        session_id = connection.session_id

        async def close() -> None:
            await self._terminate(caller.endpoint, session_id)

        connection.exit_stack.callback(self.connections.open(caller.principal, close, mark=_scope_mark(ctx)))
        try:
            await self.fanout.attach(key, connection)
        except Exception:  # the connection still works; it just won't hear about tool changes
            log.warning("MCP connection for %s gets no tools/list_changed", key, exc_info=True)
            return
        connection.exit_stack.push_async_callback(self.fanout.detach, key, connection)

    async def _terminate(self, endpoint: Endpoint, session_id: str) -> None:
        """End an MCP session: its streams close and its id answers 404 from now on."""
        manager = self._managers.get(endpoint)
        # The SDK offers no public way to end a session from the server side; its transport's terminate is.
        transport = manager._server_instances.get(session_id) if manager is not None else None
        if transport is not None:
            await transport.terminate()

    async def _serve_get_stream(
        self, manager: StreamableHTTPSessionManager, key: str, scope: Scope, receive: Receive, send: Send
    ) -> None:
        """A handshake-era standalone stream: counted as open from its 200 until it ends."""
        opened = False

        async def watch(message: Message) -> None:
            nonlocal opened
            await send(message)
            if message["type"] == "http.response.start" and message["status"] == 200 and not opened:
                opened = True
                self._open_streams[key] += 1

        try:
            await manager.handle_request(scope, receive, watch)
        finally:
            if opened:
                self._open_streams[key] -= 1


class _Endpoint:
    """ASGI endpoint: authenticates every HTTP request, then hands it to that endpoint's session manager."""

    def __init__(self, bridge: McpBridge, endpoint: Endpoint) -> None:
        self.bridge = bridge
        self.endpoint = endpoint

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        manager = self.bridge._managers.get(self.endpoint)
        if manager is None:
            await PlainTextResponse("MCP is not running", status_code=503)(scope, receive, send)
            return
        headers = Headers(scope=scope)
        scope[MARK_SCOPE_KEY] = self.bridge.connections.mark()  # before the check: see OpenConnections.open
        caller = await resolve_caller(
            self.bridge._state(), self.endpoint, headers.get("authorization"), self.bridge.callers
        )
        if caller is None:
            await unauthorized(self.endpoint)(scope, receive, send)
            return
        scope[CALLER_SCOPE_KEY] = caller
        # The SDK binds each handshake-era MCP session to the identity that opened it.
        scope["user"] = caller_identity(caller)
        if scope["method"] == "GET" and headers.get(MCP_SESSION_ID_HEADER):
            await self.bridge._serve_get_stream(manager, listener_key(caller.session_id), scope, receive, send)
        else:
            await manager.handle_request(scope, receive, send)


def _server_exiting() -> bool:
    """Whether the uvicorn server running us was told to exit (found the way sse_starlette finds it)."""
    server = getattr(signal.getsignal(signal.SIGTERM), "__self__", None)
    return bool(getattr(server, "should_exit", False))


def _scope_caller(ctx: ServerRequestContext[Any, Any]) -> McpCaller | None:
    request = ctx.request
    caller = getattr(request, "scope", {}).get(CALLER_SCOPE_KEY) if request is not None else None
    return caller if isinstance(caller, McpCaller) else None


def _scope_mark(ctx: ServerRequestContext[Any, Any]) -> int | None:
    request = ctx.request
    mark = getattr(request, "scope", {}).get(MARK_SCOPE_KEY) if request is not None else None
    return mark if isinstance(mark, int) else None


def _caller(ctx: ServerRequestContext[Any, Any]) -> McpCaller:
    """The caller our endpoint authenticated for the HTTP request that carried this message."""
    caller = _scope_caller(ctx)
    if caller is None:
        raise MCPError(INVALID_REQUEST, "unauthenticated request")
    return caller


def _connection_of(ctx: ServerRequestContext[Any, Any]) -> Connection | None:
    # ServerRequestContext does not expose the per-client Connection yet (the SDK's pending Context
    # rework); its ServerSession holds it, and the connection's exit_stack is the documented teardown hook.
    connection = getattr(ctx.session, "_connection", None)
    return connection if isinstance(connection, Connection) else None
