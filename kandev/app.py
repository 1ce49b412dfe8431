"""Starlette assembly: health, GraphQL (HTTP + graphql-transport-ws), and the built web client."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import text
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL
from strawberry.subscriptions import GRAPHQL_TRANSPORT_WS_PROTOCOL

from kandev.config import Settings
from kandev.schema.context import Context
from kandev.schema.root import schema
from kandev.state import AppState

log = logging.getLogger("kandev.app")
FRONTEND_DIST = Path(__file__).resolve().parent.parent / "frontend" / "dist"


class KandevGraphQL(GraphQL[Context, None]):
    def __init__(self, state_getter: Any) -> None:
        super().__init__(schema, subscription_protocols=[GRAPHQL_TRANSPORT_WS_PROTOCOL], keep_alive=True)
        self._state = state_getter

    async def get_context(self, request: Request | WebSocket, response: Any = None) -> Context:
        state: AppState = self._state()
        return Context.for_services(state.services(state.local_principal), request=request)


async def healthz(request: Request) -> JSONResponse:
    """Database and Redis reachability; 503 when either is down."""
    state: AppState = request.app.state.kandev
    checks = {"database": await _check(_ping_database(state)), "redis": await _check(state.redis.ping())}
    healthy = all(v == "ok" for v in checks.values())
    return JSONResponse({"status": "ok" if healthy else "degraded", **checks}, status_code=200 if healthy else 503)


async def _ping_database(state: AppState) -> None:
    async with state.db.read() as session:
        await session.execute(text("SELECT 1"))


async def _check(probe: Any) -> str:
    try:
        await asyncio.wait_for(probe, timeout=3)
    except Exception as exc:  # reported, not raised: health must answer even when parts are down
        return f"error: {type(exc).__name__}"
    return "ok"


async def no_frontend(request: Request) -> PlainTextResponse:
    return PlainTextResponse("Kandev API is running. GraphQL: /graphql (the web client is not built).")


def create_app(settings: Settings) -> Starlette:
    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        app.state.kandev = await AppState.open(settings)
        try:
            yield
        finally:
            await app.state.kandev.close()

    app: Starlette
    graphql = KandevGraphQL(lambda: app.state.kandev)
    routes: list[Any] = [
        Route("/healthz", healthz),
        Route("/graphql", graphql, methods=["GET", "POST"]),
        WebSocketRoute("/graphql", graphql),
    ]
    if (FRONTEND_DIST / "index.html").exists():
        routes.append(Mount("/", StaticFiles(directory=FRONTEND_DIST, html=True), name="frontend"))
    else:
        routes.append(Route("/", no_frontend))
    app = Starlette(routes=routes, lifespan=lifespan)
    return app
