"""The `kandev` MCP server inside a box: `python3 -I -S mcp_stdio.py` (or `python -m kandev.edge.mcp_stdio`).

An agent in a sandbox or container has no network, so the session's MCP server it is handed in ACP `session/new`
is this stdio program. It connects to the session's Unix socket (KANDEV_MCP_SOCKET, mounted from the worker's
host), sends the session token (KANDEV_MCP_TOKEN) as its first line, then copies bytes both ways: the agent's
MCP messages (newline-delimited JSON-RPC) to the socket, the answers back. The worker on the other end checks the
token and carries the messages to Kandev's MCP endpoint (kandev.runtime.mcp_relay); nothing in the box reaches
Kandev any other way. Standard library only: it runs on whatever Python the box has."""

from __future__ import annotations

import os
import socket
import sys
import threading

_CHUNK = 65536


def _copy_in(connection: socket.socket) -> None:
    """stdin -> socket until stdin ends, then half-close so the other side sees the end."""
    try:
        while data := os.read(0, _CHUNK):
            connection.sendall(data)
    except OSError:
        pass
    finally:
        try:
            connection.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def main() -> int:
    path, token = os.environ.get("KANDEV_MCP_SOCKET", ""), os.environ.get("KANDEV_MCP_TOKEN", "")
    if not path or not token:
        sys.stderr.write("kandev MCP bridge: KANDEV_MCP_SOCKET and KANDEV_MCP_TOKEN must be set\n")
        return 2
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(path)
        connection.sendall(token.encode() + b"\n")
    except OSError as error:
        sys.stderr.write(f"kandev MCP bridge: cannot reach {path}: {error.strerror}\n")
        return 1
    threading.Thread(target=_copy_in, args=(connection,), daemon=True).start()
    try:
        while data := connection.recv(_CHUNK):
            view = memoryview(data)
            while view:
                view = view[os.write(1, view) :]
    except OSError:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
