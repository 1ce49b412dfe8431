"""The worker's end of a box's MCP bridge: a Unix socket per session, in a folder of its own that the box sees at
/run/kandev, beside the in-box program (kandev/edge/mcp_stdio.py) that the agent is handed as its stdio `kandev`
MCP server.

A connection must first send this launch's session token (compared in constant time; anything else is hung up
on), then its newline-delimited JSON-RPC messages are carried to Kandev's MCP endpoint (`/mcp/session`, Streamable
HTTP with that token as bearer, by the official MCP client) and the answers and notifications back. So the box
needs no network, holds nothing that reaches Kandev but this socket, and the server's MCP endpoint stays the one
place that authorizes and executes tools. The socket folder is reachable by name only (its parent is 0711) and
removed when the agent closes."""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import os
import secrets
import shutil
from pathlib import Path
from typing import Any

from kandev.domain.workspace.executor_config import BRIDGE_DIR
from kandev.platform.handover import ensure_dir, remove_tree
from kandev.runtime.base import MCP_SERVER_NAME, McpServerEntry

log = logging.getLogger(__name__)

SOCKET, PROGRAM = "mcp.sock", "mcp_stdio.py"
BOXES = "boxes"
_HELPER = Path(__file__).resolve().parents[1] / "edge" / PROGRAM
_TOKEN_SECONDS = 10.0
_LINE_LIMIT = 16 * 1024 * 1024
_ROOT_MODE, _FOLDER_MODE = 0o711, 0o755


def bridge_folder(work_path: Path, session_id: str) -> Path:
    """A new folder for one launch's bridge (made by McpRelay.start): unguessable, so nothing planted can be it."""
    return work_path / BOXES / f"{session_id[:8]}-{secrets.token_hex(8)}"


class McpRelay:
    """One launch's socket: opened before the box starts, closed (folder removed) with its agent."""

    def __init__(self, folder: Path, token: str, url: str) -> None:
        self.folder = folder
        self._token = token.encode()
        self._url = url
        self._server: asyncio.AbstractServer | None = None
        self._connections: set[asyncio.Task[None]] = set()

    def entry(self, python: str = "python3") -> McpServerEntry:
        """The stdio `kandev` MCP server the agent in the box is handed."""
        env = {"KANDEV_MCP_SOCKET": f"{BRIDGE_DIR}/{SOCKET}", "KANDEV_MCP_TOKEN": self._token.decode()}
        return McpServerEntry(
            name=MCP_SERVER_NAME,
            transport="stdio",
            command=python,
            args=["-I", "-S", f"{BRIDGE_DIR}/{PROGRAM}"],
            env=env,
        )

    async def start(self) -> None:
        ensure_dir(self.folder.parent, _ROOT_MODE)
        ensure_dir(self.folder, _FOLDER_MODE)
        shutil.copyfile(_HELPER, self.folder / PROGRAM)
        (self.folder / PROGRAM).chmod(0o644)
        # A socket's address holds at most 107 bytes, and a work dir may be deep: it is bound through the folder's
        # descriptor, whose /proc name is short whatever the path.
        folder = os.open(self.folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            address = f"/proc/self/fd/{folder}/{SOCKET}"
            self._server = await asyncio.start_unix_server(self._accept, address, limit=_LINE_LIMIT)
        finally:
            os.close(folder)
        os.chmod(self.folder / SOCKET, 0o666)  # the box's user, whoever it is, must connect; the token is the lock

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        for task in list(self._connections):
            task.cancel()
        if self._connections:
            await asyncio.wait(self._connections, timeout=2.0)
        with contextlib.suppress(OSError):
            remove_tree(self.folder)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            async with asyncio.timeout(_TOKEN_SECONDS):
                given = (await reader.readline()).rstrip(b"\n")
            if not self._token or not hmac.compare_digest(given, self._token):
                log.warning("MCP bridge %s: a connection without this session's token was refused", self.folder.name)
                return
            await self._carry(reader, writer)
        except (TimeoutError, ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        except Exception:
            log.exception("MCP bridge %s: the relay failed", self.folder.name)
        finally:
            self._connections.discard(task)
            writer.close()

    async def _carry(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Lines from the box to the MCP endpoint, its messages back as lines, until either side ends."""
        import anyio
        import httpx2
        from mcp import types
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared.message import SessionMessage

        headers = {"Authorization": f"Bearer {self._token.decode()}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=None)) as http,
            streamable_http_client(self._url, http_client=http) as (incoming, outgoing),
            anyio.create_task_group() as group,
        ):

            async def upward() -> None:
                while line := await reader.readline():
                    try:
                        message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                    except ValueError:
                        continue  # not JSON-RPC: MCP's stdio servers skip such lines too
                    await outgoing.send(SessionMessage(message))
                group.cancel_scope.cancel()

            async def downward() -> None:
                async for item in incoming:
                    if isinstance(item, Exception):
                        continue
                    writer.write(_line(item.message))
                    await writer.drain()
                group.cancel_scope.cancel()

            group.start_soon(upward)
            group.start_soon(downward)


def _line(message: Any) -> bytes:
    return (message.model_dump_json(by_alias=True, exclude_unset=True) + "\n").encode()
