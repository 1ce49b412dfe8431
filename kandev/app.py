"""Starlette assembly: health, GraphQL (HTTP + graphql-transport-ws), and the built web client."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any, Protocol

from sqlalchemy import text
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute, request_response
from starlette.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket
from strawberry.exceptions import ConnectionRejectionError
from strawberry.subscriptions import GRAPHQL_TRANSPORT_WS_PROTOCOL
from strawberry.types.unset import UNSET

from kandev.domain.access.session_tokens import is_session_credential
from kandev.domain.access.tokens import bearer
from kandev.domain.context import Principal
from kandev.edge.authentication import authenticate
from kandev.edge.graphql_http import GraphQLOverHttp
from kandev.edge.http_guard import HttpGuard
from kandev.edge.mcp_bridge.server import McpBridge
from kandev.edge.mcp_bridge.surface import ToolSurface
from kandev.edge.mcp_bridge.tool_surface import KandevToolSurface
from kandev.edge.open_connections import OpenConnections
from kandev.edge.rest import routes as rest_routes
from kandev.edge.static_assets import favicon, graphiql_asset, graphiql_response
from kandev.graphql.root import schema
from kandev.graphql.schema.context import Context
from kandev.graphql.schema.fanout import RELEASE_KEY, SharingTransportWSHandler, next_message_text
from kandev.jobs.liveness import worker_report
from kandev.platform import metrics
from kandev.platform.log_redaction import install_log_redaction
from kandev.platform.settings import Settings
from kandev.wiring import AppState

log = logging.getLogger("kandev.app")
FRONTEND_DIST = Path(__file__).resolve().parent.parent / "frontend" / "dist"


# A WebSocket's caller before its connection_init proves who it is: sees nothing.
ANONYMOUS = Principal(user_id="", login="anonymous")
# How long a stopping server lets open requests finish before it cancels them: an agent's MCP call can wait hours
# on a person (a question, a permission), and the supervisor kills a child that has not exited 10 s after SIGTERM,
# so the app's own shutdown (pools, subscriptions) must start well before that.
GRACEFUL_SHUTDOWN_SECONDS = 5


class KandevGraphQL(GraphQLOverHttp):
    graphql_transport_ws_handler_class = SharingTransportWSHandler

    def __init__(self, state_getter: Any, connections: OpenConnections, init_timeout: float) -> None:
        super().__init__(
            schema,
            subscription_protocols=[GRAPHQL_TRANSPORT_WS_PROTOCOL],
            keep_alive=True,
            # A socket that has not proved who it is by then is closed (4408).
            connection_init_wait_timeout=timedelta(seconds=init_timeout),
        )
        self._state = state_getter
        self._connections = connections

    def serves_ide(self, request: Request) -> bool:
        """A browser's GET for the GraphiQL page, which needs no caller (its queries carry their own)."""
        return self.should_render_graphql_ide(self.request_adapter_class(request))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # Answered before strawberry builds a context, which the page does not need (and, with auth on,
        # has no principal for).
        if scope["type"] == "http" and self.serves_ide(request := Request(scope)):
            page = await self.render_graphql_ide(request)
            await page(scope, receive, send)
            return
        await super().__call__(scope, receive, send)

    async def render_graphql_ide(self, request: Request) -> Response:
        return graphiql_response(auth=self._state().settings.auth == "on")

    def encode_json(self, data: object) -> str | bytes:
        shared = next_message_text(data) if isinstance(data, dict) else None
        return shared if shared is not None else super().encode_json(data)

    async def get_context(self, request: Request | WebSocket, response: Any = None) -> Context:
        state: AppState = self._state()
        # HTTP: the caller RequireToken authenticated; WebSocket: nobody until connection_init proves someone.
        principal = ANONYMOUS if isinstance(request, WebSocket) else request.scope["kandev.principal"]
        return Context.for_services(state.services(principal), request=request)

    async def on_ws_connect(self, context: Context) -> Any:
        """Authenticates the connection_init, and holds the socket for as long as its token does: revoked (or its
        user removed) the socket is closed with 4403; a withdrawn admin flag applies to its next operation."""
        state: AppState = self._state()
        mark = self._connections.mark()
        principal = await authenticate(state, ws_authorization(context.connection_params))
        if principal is None:
            raise ConnectionRejectionError({"message": "a valid personal access token is required"})
        context.act_as(state.services(principal))
        websocket = context.request

        async def close() -> None:
            await websocket.close(code=4403, reason="Forbidden: access revoked")

        def recall(now: Principal) -> None:
            context.act_as(state.services(now))

        context.extras[RELEASE_KEY] = self._connections.open(principal, close, recall, mark)
        return UNSET


def ws_authorization(params: object) -> str | None:
    """The `Authorization` value a connection_init payload carries: its `Authorization` (or `authorization`)
    bearer value, else its bare `token`. A session token under any of those keys is the one passed on, so
    the door refuses it."""
    if not isinstance(params, dict):
        return None
    values = [params.get(key) for key in ("Authorization", "authorization", "token")]
    session = next((v for v in values if is_session_credential(v)), None)
    if session is not None:
        return str(session)
    header = params.get("Authorization") or params.get("authorization")
    token = bearer(header if isinstance(header, str) else None) or params.get("token")
    return f"Bearer {token}" if isinstance(token, str) and token else None


class RequireToken:
    """HTTP requests need the caller the authentication door admits (with KANDEV_AUTH=on, a bearer personal
    access token), except those `public` admits (the GraphiQL page, whose queries then send the header)."""

    def __init__(self, app: Any, state_getter: Any, public: Callable[[Request], bool] | None = None) -> None:
        self.app = app
        self._state = state_getter
        self._public = public

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        state: AppState = self._state()
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        if self._public is not None and self._public(request):
            await self.app(scope, receive, send)
            return
        principal = await authenticate(state, request.headers.get("authorization"))
        if principal is None:
            response = JSONResponse(
                {"errors": [{"message": "a valid personal access token is required"}]},
                status_code=401,
                headers={"WWW-Authenticate": "Bearer"},
            )
            await response(scope, receive, send)
            return
        scope["kandev.principal"] = principal
        await self.app(scope, receive, send)


class EmbeddedChildren(Protocol):
    """The workers `kandev serve` runs itself (the embedded default)."""

    def health(self) -> tuple[bool, dict[str, Any]]: ...


async def healthz(request: Request) -> JSONResponse:
    """Database and Redis reachability, live workers and queue depth; 503 when the database or Redis is
    down or, on the embedded default, no embedded worker is alive. Workers elsewhere (production) are
    reported but never make this 503: a load balancer must not drop every replica when they restart."""
    state: AppState = request.app.state.kandev
    checks = {"database": await _check(_ping_database(state)), "redis": await _check(state.redis.ping())}
    healthy = all(v == "ok" for v in checks.values())
    body: dict[str, Any] = dict(checks)
    if checks["redis"] == "ok":
        try:
            async with asyncio.timeout(3):
                body.update(await worker_report(state.redis))
        except Exception as exc:  # reported, not raised, like the checks
            body["workers"] = f"error: {type(exc).__name__}"
    embedded: EmbeddedChildren | None = request.app.state.embedded
    if embedded is not None:
        workers_alive, body["embedded"] = embedded.health()
        healthy = healthy and workers_alive
    return JSONResponse({"status": "ok" if healthy else "degraded", **body}, status_code=200 if healthy else 503)


async def _ping_database(state: AppState) -> None:
    async with state.db.read() as db:
        await db.execute(text("SELECT 1"))


async def _check(probe: Any) -> str:
    try:
        async with asyncio.timeout(3):
            await probe
    except Exception as exc:  # reported, not raised: health must answer even when parts are down
        return f"error: {type(exc).__name__}"
    return "ok"


# Paths the web client never owns: an unknown one under these stays a 404 instead of the app page.
_NOT_CLIENT_ROUTES = ("api/", "mcp", "graphql", "graphiql/", "healthz", "metrics", "assets/")


# The web client's pages run only their own bundled scripts: no inline script, no eval, no other origin, no
# plugin, no frame around them; a script an agent's text smuggled into the page would not run. Styles may be
# inline (React sets style attributes); images only from the app itself or data/blob URLs (file previews);
# 'self' in connect-src also covers the same-origin GraphQL WebSocket.
WEB_CLIENT_HEADERS = {
    "Content-Security-Policy": "; ".join(
        [
            "default-src 'self'",
            "script-src 'self'",
            "style-src 'self' 'unsafe-inline'",
            "img-src 'self' data: blob:",
            "connect-src 'self'",
            "object-src 'none'",
            "base-uri 'none'",
            "form-action 'self'",
            "frame-ancestors 'none'",
        ]
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


class WebClient(StaticFiles):
    """The built web client; its client-side routes (`/tasks/<id>`, …) answer index.html."""

    async def get_response(self, path: str, scope: Any) -> Response:
        try:
            response = await super().get_response(path, scope)
        except HTTPException as exc:
            last = path.rsplit("/", 1)[-1]
            if exc.status_code != 404 or "." in last or path.lstrip("/").startswith(_NOT_CLIENT_ROUTES):
                raise
            response = await super().get_response("index.html", scope)
            response.headers["Cache-Control"] = "no-cache"
        response.headers.update(WEB_CLIENT_HEADERS)
        return response


async def metrics_endpoint(request: Request) -> Response:
    """Prometheus text: counters kept in Redis, so every server and worker process is counted. Admins only:
    its labels name every user's agent profiles."""
    principal: Principal = request.scope["kandev.principal"]
    if not principal.admin:
        return JSONResponse({"error": "metrics are for admins only", "code": "PERMISSION_DENIED"}, status_code=403)
    state: AppState = request.app.state.kandev
    return PlainTextResponse(await metrics.render(state.redis), media_type="text/plain; version=0.0.4")


async def no_frontend(request: Request) -> PlainTextResponse:
    return PlainTextResponse("Kandev API is running. GraphQL: /graphql (the web client is not built).")


def create_app(
    settings: Settings, mcp_surface: ToolSurface | None = None, *, embedded: EmbeddedChildren | None = None
) -> Starlette:
    """The ASGI app; `embedded` is the worker pool `kandev serve` supervises on the embedded default."""
    install_log_redaction()  # also when embedded in another ASGI server than `kandev serve`

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        app.state.kandev = await AppState.open(settings)
        try:
            async with mcp.lifespan():
                yield
        finally:
            await app.state.kandev.close()

    app: Starlette
    # The WebSockets and MCP sessions people hold open, closed or downgraded as their access changes.
    connections = OpenConnections()
    graphql = KandevGraphQL(lambda: app.state.kandev, connections, settings.ws_init_timeout_seconds)
    mcp = McpBridge(
        mcp_surface or KandevToolSurface(lambda: app.state.kandev), lambda: app.state.kandev, connections=connections
    )
    routes: list[Any] = [
        Route("/healthz", healthz),
        Route("/metrics", RequireToken(request_response(metrics_endpoint), lambda: app.state.kandev), methods=["GET"]),
        # Every method: the view answers those it does not take with 405 and its own Allow.
        Route("/graphql", RequireToken(graphql, lambda: app.state.kandev, public=graphql.serves_ide)),
        WebSocketRoute("/graphql", graphql),
        Route("/graphiql/{name}", graphiql_asset),
        Route("/favicon.ico", favicon),
        *mcp.routes(),
        *rest_routes(),
    ]
    if (FRONTEND_DIST / "index.html").exists():
        routes.append(Mount("/", WebClient(directory=FRONTEND_DIST, html=True), name="frontend"))
    else:
        routes.append(Route("/", no_frontend))
    # Host, Origin, content type and session-token rules run before any route, HTTP and WebSocket alike.
    app = Starlette(routes=routes, lifespan=lifespan, middleware=[Middleware(HttpGuard, settings=settings)])
    app.state.mcp_bridge = mcp
    app.state.embedded = embedded
    return app
