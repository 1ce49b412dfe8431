"""A stdlib-only ACP agent that plays a hostile agent inside a box (sandbox or container): `python3 box_probe.py`.

Each prompt carries one line `PROBE {...}`; the agent tries what it names and answers one JSON report whose
entries are {"ok": bool, "value" or "error"}:

    read: [paths]            read each file (the server key, the database, another task's file)
    list: [paths]            list each folder (the data dir, the work dir, another task's worktree)
    write: [paths]           create each file (outside the worktree: /, /usr, /etc, the host's home...)
    connect: [[host, port]]  open a TCP connection (loopback services: Redis, PostgreSQL, Kandev's HTTP port)
    unix: [paths]            connect to each Unix socket (the Docker socket)
    pids: [pids]             whether each host pid is visible in /proc (the worker's, the server's)
    env: [names]             the values of these environment variables (None when unset)
    own: true                its own uid, cwd, HOME, a write in its cwd and /tmp, the processes it sees, its env
    alloc_mb: N              allocate and touch N MB (past a memory limit the box is stopped)
    spawn: N                 start N sleeping children (past a process limit the rest are refused)
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys


def send(message: dict) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def outcome(action) -> dict:
    try:
        value = action()
    except OSError as error:
        return {"ok": False, "error": f"{type(error).__name__}: {error.strerror or error}"}
    return {"ok": True, "value": value}


def read(path: str) -> str:
    with open(path, "rb") as file:
        return file.read(4096).hex()


def write(path: str) -> str:
    with open(path, "w") as file:
        file.write("written by a boxed agent")
    return path


def connect(host: str, port: int) -> str:
    with socket.create_connection((host, port), timeout=2):
        return "connected"


def unix(path: str) -> str:
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(2)
        sock.connect(path)
        return "connected"


def visible(pid: int) -> bool:
    return os.path.exists(f"/proc/{pid}/status")


def own() -> dict:
    here = os.path.join(os.getcwd(), "probe-own")
    return {
        "uid": os.getuid(),
        "cwd": os.getcwd(),
        "home": os.environ.get("HOME"),
        "env": sorted(os.environ),
        "processes": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
        "write_cwd": outcome(lambda: write(here)),
        "write_tmp": outcome(lambda: write("/tmp/probe-own")),
        "hostname": socket.gethostname(),
    }


def spawn(count: int) -> dict:
    started, refused = [], None
    for _ in range(count):
        try:
            started.append(subprocess.Popen(["sleep", "30"]))
        except OSError as error:
            refused = f"{type(error).__name__}: {error.strerror or error}"
            break
    for child in started:
        child.kill()
        child.wait()
    return {"started": len(started), "refused": refused}


def respond(prompt: str) -> dict:
    line = next(line for line in prompt.splitlines() if line.startswith("PROBE "))
    wanted = json.loads(line.removeprefix("PROBE "))
    report: dict = {}
    for path in wanted.get("read", []):
        report[f"read {path}"] = outcome(lambda path=path: read(path))
    for path in wanted.get("list", []):
        report[f"list {path}"] = outcome(lambda path=path: os.listdir(path))
    for path in wanted.get("write", []):
        report[f"write {path}"] = outcome(lambda path=path: write(path))
    for host, port in wanted.get("connect", []):
        report[f"connect {host}:{port}"] = outcome(lambda host=host, port=port: connect(host, port))
    for path in wanted.get("unix", []):
        report[f"unix {path}"] = outcome(lambda path=path: unix(path))
    for pid in wanted.get("pids", []):
        report[f"pid {pid}"] = visible(pid)
    for name in wanted.get("env", []):
        report[f"env {name}"] = os.environ.get(name)
    if wanted.get("own"):
        report["own"] = own()
    if wanted.get("spawn"):
        report["spawn"] = spawn(int(wanted["spawn"]))
    if wanted.get("alloc_mb"):
        held = bytearray(int(wanted["alloc_mb"]) << 20)
        for index in range(0, len(held), 4096):
            held[index] = 1
        report["alloc"] = len(held) >> 20
    return report


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        method, params = message.get("method"), message.get("params") or {}
        if method == "initialize":
            send({"id": message["id"], "result": {"protocolVersion": 1, "agentCapabilities": {}}})
        elif method == "session/new":
            send({"id": message["id"], "result": {"sessionId": "box-probe"}})
        elif method == "session/prompt":
            prompt = "\n".join(block.get("text", "") for block in params.get("prompt", []))
            text = json.dumps(respond(prompt))
            chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
            send({"method": "session/update", "params": {"sessionId": params["sessionId"], "update": chunk}})
            send({"id": message["id"], "result": {"stopReason": "end_turn"}})
        elif "id" in message:
            send({"id": message["id"], "error": {"code": -32601, "message": f"{method} is not supported"}})


if __name__ == "__main__":
    main()
