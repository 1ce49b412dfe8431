"""A local fake of an MCP Registry (the official registry's `GET /v0/servers`, cursor-paged), served by uvicorn on
a free port. Tests set `servers` (the wrapped {server, _meta} items) and can make it fail or vanish."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.support.server import free_port, serving

OFFICIAL = "io.modelcontextprotocol.registry/official"


def registry_item(
    name: str,
    *,
    version: str = "1.0.0",
    status: str = "active",
    description: str = "A server.",
    remotes: list[dict[str, Any]] | None = None,
    packages: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    server: dict[str, Any] = {
        "$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
        "name": name,
        "description": description,
        "version": version,
    }
    if remotes is not None:
        server["remotes"] = remotes
    if packages is not None:
        server["packages"] = packages
    meta = {"status": status, "publishedAt": "2026-01-01T00:00:00Z", "isLatest": True}
    return {"server": server, "_meta": {OFFICIAL: meta}}


def npm_package(identifier: str, version: str, secrets: tuple[str, ...] = ()) -> dict[str, Any]:
    env = [{"name": s, "isRequired": True, "isSecret": True} for s in secrets]
    return {
        "registryType": "npm",
        "identifier": identifier,
        "version": version,
        "transport": {"type": "stdio"},
        "environmentVariables": env,
    }


@dataclass
class FakeMcpRegistry:
    servers: list[dict[str, Any]] = field(default_factory=list)
    page_size: int = 2
    failing: bool = False  # every call answers 503
    raw_body: bytes | None = None  # answer with this instead of the listing
    requests: list[str] = field(default_factory=list)
    url: str = ""

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/v0/servers", self._list)])

    async def _list(self, request: Request) -> Response:
        self.requests.append(str(request.url.query))
        if self.failing:
            return JSONResponse({"error": "unavailable"}, 503)
        if self.raw_body is not None:
            return Response(self.raw_body, media_type="application/json")
        limit = min(int(request.query_params.get("limit", "30")), self.page_size)
        start = int(request.query_params.get("cursor") or 0)
        chunk = self.servers[start : start + limit]
        metadata: dict[str, Any] = {"count": len(chunk)}
        if start + limit < len(self.servers):
            metadata["nextCursor"] = str(start + limit)
        return JSONResponse({"servers": chunk, "metadata": metadata})


@asynccontextmanager
async def fake_mcp_registry(fake: FakeMcpRegistry | None = None) -> AsyncIterator[FakeMcpRegistry]:
    """The fake served on a free loopback port; `fake.url` is its base URL, valid inside the block."""
    fake = fake or FakeMcpRegistry()
    port = free_port()
    fake.url = f"http://127.0.0.1:{port}"
    async with serving(fake.app(), port):
        yield fake
