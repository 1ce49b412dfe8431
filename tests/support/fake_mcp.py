"""A remote MCP server over Streamable HTTP (the official SDK under uvicorn) for workspace-MCP tests, and the
locally packed npm fixture package (never the public registry)."""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Context, MCPServer

from tests.support.server import serving

FIXTURE_PACKAGE = Path(__file__).parent / "mcp_package"
FIXTURE_NAME, FIXTURE_VERSION = "@kandev-test/fixture-mcp", "1.2.3"


@dataclass
class RemoteMcp:
    url: str
    authorizations: list[str | None] = field(default_factory=list)


def _server(recorder: RemoteMcp) -> MCPServer:
    server = MCPServer("remote-docs")

    @server.tool()
    def whoami(ctx: Context) -> dict[str, Any]:
        """Answer with the Authorization header the call carried."""
        authorization = (ctx.headers or {}).get("authorization")
        recorder.authorizations.append(authorization)
        return {"authorization": authorization}

    return server


@asynccontextmanager
async def remote_mcp() -> AsyncIterator[RemoteMcp]:
    recorder = RemoteMcp(url="")
    async with serving(_server(recorder).streamable_http_app(), lifespan="on") as address:
        recorder.url = f"http://{address}/mcp"
        yield recorder


def npm_pack(package: Path, destination: Path) -> None:
    """`npm pack` the package folder into `destination`, a folder of tarballs KANDEV_MCP_NPM_SOURCE can name."""
    destination.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["npm", "pack", str(package), "--pack-destination", str(destination)],
        check=True,
        capture_output=True,
        timeout=120,
        cwd=destination,
    )


def pack_fixture(destination: Path) -> Path:
    """`npm pack` the fixture package into `destination` (the folder KANDEV_MCP_NPM_SOURCE points at)."""
    npm_pack(FIXTURE_PACKAGE, destination)
    return destination
