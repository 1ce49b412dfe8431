"""A minimal raw JSON-RPC ACP agent that misbehaves on purpose: `python fake_agent.py MODE`.

Modes: `crash-on-prompt` (stderr noise with $API_KEY, exit 3 on session/prompt), `exit-on-initialize`
(exit 2 before answering), `deaf` (never answers a prompt, ignores cancel, SIGTERM and stdin EOF),
`hang` (`deaf` plus a child process in its group). Kept to the stdlib so it starts fast.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time


def reply(message: dict, result: dict) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\n")
    sys.stdout.flush()


def main(mode: str) -> None:
    if mode in ("deaf", "hang"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if mode == "hang":
        child = subprocess.Popen(["sleep", "60"])
        sys.stderr.write(f"child {child.pid}\n")
        sys.stderr.flush()
    for line in sys.stdin:
        message = json.loads(line)
        method = message.get("method")
        if method == "initialize":
            if mode == "exit-on-initialize":
                sys.stderr.write("fatal: no credentials configured\n")
                sys.exit(2)
            reply(message, {"protocolVersion": 1, "agentCapabilities": {}})
        elif method == "session/new":
            reply(message, {"sessionId": "fake-session"})
        elif method == "session/prompt" and mode == "crash-on-prompt":
            for n in range(30):
                sys.stderr.write(f"trace line {n}\n")
            sys.stderr.write(f"using key {os.environ.get('API_KEY')}\nSegmentation fault\n")
            sys.stderr.flush()
            os._exit(3)
    if mode in ("deaf", "hang"):
        time.sleep(3600)


if __name__ == "__main__":
    main(sys.argv[1])
