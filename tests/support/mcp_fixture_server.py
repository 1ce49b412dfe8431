#!/usr/bin/env python3
"""mcp_package/server.js for a box whose image has Python and no Node: a dependency-free MCP server over stdio
(newline-delimited JSON-RPC). Tool `whoami` answers with FIXTURE_TOKEN from its env and its arguments; `where` with
its working directory and host name."""

import json
import os
import socket
import sys

TOOLS = [
    {"name": "whoami", "description": "Echo FIXTURE_TOKEN and the arguments", "inputSchema": {"type": "object"}},
    {"name": "where", "description": "The server's working directory and host", "inputSchema": {"type": "object"}},
]


def answer(request: dict) -> dict:
    method, params = request.get("method"), request.get("params") or {}
    if method == "initialize":
        info = {"name": "fixture-mcp", "version": "1.2.3"}
        return {
            "result": {
                "protocolVersion": params.get("protocolVersion"),
                "capabilities": {"tools": {}},
                "serverInfo": info,
            }
        }
    if method == "tools/list":
        return {"result": {"tools": TOOLS}}
    if method == "tools/call":
        if params.get("name") == "where":
            text = f"{os.getcwd()} on {socket.gethostname()}"
        else:
            arguments = json.dumps(params.get("arguments") or {}, separators=(",", ":"))
            text = f"token={os.environ.get('FIXTURE_TOKEN', '(none)')} args={arguments}"
        return {"result": {"content": [{"type": "text", "text": text}], "isError": False}}
    if method == "ping":
        return {"result": {}}
    return {"error": {"code": -32601, "message": "method not found"}}


for line in sys.stdin:
    try:
        request = json.loads(line)
    except ValueError:
        continue
    if "id" in request:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], **answer(request)}) + "\n")
        sys.stdout.flush()
