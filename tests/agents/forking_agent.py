"""A stdlib ACP agent whose process tree tries to outlive it: `python forking_agent.py`.

Before answering `initialize` it forks a helper that forks a grandchild, which calls setsid and forks a
great-grandchild, and double-forks a daemon (its middle process exits, orphaning it) that calls setsid
too; all of them ignore SIGTERM and stdin EOF. Every prompt gets one agent message `tree PID...` (the
agent first, then its four descendants), also written to $FORK_TREE_FILE when set. A prompt holding
`/hang` then never ends (session/cancel is ignored); `/crash` exits with status 3 after the message.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time

DESCENDANTS = 4


def send(message: dict) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def linger(report: int) -> None:
    """Report this pid and stay alive until killed."""
    os.write(report, f"{os.getpid()}\n".encode())
    os.close(report)
    while True:
        time.sleep(3600)


def spawn_tree() -> list[int]:
    """Fork the escaping tree; returns the pids of its four processes once all of them run."""
    read_end, report = os.pipe()
    if os.fork() == 0:  # the helper, in the agent's group
        os.close(read_end)
        if os.fork() == 0:  # the grandchild leaves the group and the session
            os.setsid()
            if os.fork() == 0:
                linger(report)
            linger(report)
        middle = os.fork()
        if middle == 0:
            if os.fork() == 0:  # the daemon: orphaned when the middle process exits
                os.setsid()
                linger(report)
            os._exit(0)
        os.waitpid(middle, 0)
        linger(report)
    os.close(report)
    with os.fdopen(read_end) as lines:
        return [int(lines.readline()) for _ in range(DESCENDANTS)]


def main() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # inherited by every fork
    tree = [os.getpid(), *spawn_tree()]
    text = "tree " + " ".join(map(str, tree))
    if os.environ.get("FORK_TREE_FILE"):
        with open(os.environ["FORK_TREE_FILE"], "w") as f:
            f.write(text)
    for line in sys.stdin:
        message = json.loads(line)
        method, params = message.get("method"), message.get("params") or {}
        if method == "initialize":
            send({"id": message["id"], "result": {"protocolVersion": 1, "agentCapabilities": {}}})
        elif method == "session/new":
            send({"id": message["id"], "result": {"sessionId": "forking-session"}})
        elif method == "session/prompt":
            prompt = "\n".join(block.get("text", "") for block in params.get("prompt", []))
            chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
            send({"method": "session/update", "params": {"sessionId": params["sessionId"], "update": chunk}})
            if "/crash" in prompt:
                os._exit(3)
            if "/hang" not in prompt:
                send({"id": message["id"], "result": {"stopReason": "end_turn"}})
        elif "id" in message:
            send({"id": message["id"], "error": {"code": -32601, "message": f"{method} is not supported"}})
    while True:  # stdin EOF does not end it
        time.sleep(3600)


if __name__ == "__main__":
    main()
