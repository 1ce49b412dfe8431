"""A local fake of an MCP Registry (the official registry's `GET /v0/servers`, cursor-paged), served by uvicorn on
a free port. Tests set `servers` (the wrapped {server, _meta} items) and can make it fail or vanish."""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
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

    def listing(self, query: str, params: dict[str, str]) -> tuple[int, bytes]:
        """The status and JSON body of `GET /v0/servers` with these query parameters."""
        self.requests.append(query)
        if self.failing:
            return 503, b'{"error": "unavailable"}'
        if self.raw_body is not None:
            return 200, self.raw_body
        limit = min(int(params.get("limit", "30")), self.page_size)
        start = int(params.get("cursor") or 0)
        chunk = self.servers[start : start + limit]
        metadata: dict[str, Any] = {"count": len(chunk)}
        if start + limit < len(self.servers):
            metadata["nextCursor"] = str(start + limit)
        return 200, json.dumps({"servers": chunk, "metadata": metadata}).encode()

    async def _list(self, request: Request) -> Response:
        status, body = self.listing(str(request.url.query), dict(request.query_params))
        return Response(body, status, media_type="application/json")


@asynccontextmanager
async def fake_mcp_registry(fake: FakeMcpRegistry | None = None) -> AsyncIterator[FakeMcpRegistry]:
    """The fake served on a free loopback port; `fake.url` is its base URL, valid inside the block."""
    fake = fake or FakeMcpRegistry()
    port = free_port()
    fake.url = f"http://127.0.0.1:{port}"
    async with serving(fake.app(), port):
        yield fake


@contextmanager
def threaded_fake_mcp_registry(fake: FakeMcpRegistry) -> Iterator[FakeMcpRegistry]:
    """The fake on a free loopback port in a thread, for synchronous (browser) tests."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802  # http.server's name
            parts = urlsplit(self.path)
            if parts.path != "/v0/servers":
                self.send_error(404)
                return
            status, body = fake.listing(parts.query, dict(parse_qsl(parts.query)))
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002  # quiet
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
