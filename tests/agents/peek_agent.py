"""A stdlib-only ACP agent that tries to read what it must not: `python peek_agent.py`.

Its prompt carries one line `PEEK {"key": ABSOLUTE_KEY_PATH, "pids": {"server": N, ...}}`. It answers with one
agent message, a JSON object: its uid, gid and cwd, its whole environment, and for each read (the key by a
path relative to its cwd and by the absolute path, /proc/<pid>/environ of its parent and of every pid given)
either {"ok": true, "text": ...} or {"ok": false, "error": ...}. Kept to the stdlib (and world-readable
when copied) so any interpreter and any user can run it.
"""

from __future__ import annotations

import json
import os
import sys


def send(message: dict) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def attempt(path: str) -> dict:
    try:
        with open(path, "rb") as file:
            return {"path": path, "ok": True, "text": file.read().decode("utf-8", "replace")}
    except OSError as error:
        return {"path": path, "ok": False, "error": f"{type(error).__name__}: {error.strerror}"}


def peek(prompt: str) -> dict:
    line = next(line for line in prompt.splitlines() if line.startswith("PEEK "))
    wanted = json.loads(line.removeprefix("PEEK "))
    pids = {"parent": os.getppid(), **wanted["pids"]}
    reads = {
        "key_relative": attempt(os.path.relpath(wanted["key"], os.getcwd())),
        "key_absolute": attempt(wanted["key"]),
    }
    reads.update({f"environ_{name}": attempt(f"/proc/{pid}/environ") for name, pid in pids.items()})
    return {"uid": os.getuid(), "gid": os.getgid(), "cwd": os.getcwd(), "env": dict(os.environ), "reads": reads}


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        method, params = message.get("method"), message.get("params") or {}
        if method == "initialize":
            send({"id": message["id"], "result": {"protocolVersion": 1, "agentCapabilities": {}}})
        elif method == "session/new":
            send({"id": message["id"], "result": {"sessionId": "peek-session"}})
        elif method == "session/prompt":
            prompt = "\n".join(block.get("text", "") for block in params.get("prompt", []))
            report = json.dumps(peek(prompt))
            chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": report}}
            send({"method": "session/update", "params": {"sessionId": params["sessionId"], "update": chunk}})
            send({"id": message["id"], "result": {"stopReason": "end_turn"}})
        elif "id" in message:
            send({"id": message["id"], "error": {"code": -32601, "message": f"{method} is not supported"}})


if __name__ == "__main__":
    main()
