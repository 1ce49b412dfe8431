"""A test ACP agent: the scripted agent behind a pipe that appends each MCP bearer token it is handed in
`session/new` or `session/load` to the file named by its first argument (standard library only)."""

from __future__ import annotations

import json
import subprocess
import sys


def tokens_in(line: bytes) -> list[str]:
    try:
        message = json.loads(line)
    except ValueError:
        return []
    if not isinstance(message, dict) or message.get("method") not in ("session/new", "session/load"):
        return []
    found = []
    for server in (message.get("params") or {}).get("mcpServers") or []:
        for header in server.get("headers") or []:
            if header.get("name", "").lower() == "authorization":
                found.append(header.get("value", "").removeprefix("Bearer "))
    return found


def main() -> int:
    out = sys.argv[1]
    agent = subprocess.Popen([sys.executable, "-m", "kandev.runtime.scripted"], stdin=subprocess.PIPE)
    assert agent.stdin is not None
    for line in sys.stdin.buffer:
        for token in tokens_in(line):
            with open(out, "a", encoding="utf-8") as spied:
                spied.write(token + "\n")
        agent.stdin.write(line)
        agent.stdin.flush()
    agent.stdin.close()
    return agent.wait()


if __name__ == "__main__":
    sys.exit(main())
