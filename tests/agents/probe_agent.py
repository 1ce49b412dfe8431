"""A stdlib-only ACP agent that plays a hostile agent next to another user's: `python probe_agent.py`.

Each prompt carries one line `PROBE {...}`. With `{"report": true}` it does its own work (a file in its working
directory, its HOME and a shared /tmp folder), keeps the session token it was given in `session/new` in
`$HOME/.probe-token` (the transcript would redact it), and answers its pid, ids, working directory and
environment. With `{"attack": {...}}` it tries, and reports per attempt {"ok": bool, "error": ...}: reading
/proc/<pid>/environ and /proc/<pid>/mem of the given pids, listing and writing into the given folders, reading
the given files, rewriting, replacing and adding to the given cached package; and it harvests every
session-token-shaped text (`kst_...`) it can read anywhere it was pointed at or in any process's environment.
It stays alive between turns (a warm agent), so the other user's agent can be attacked while it runs.
"""

from __future__ import annotations

import json
import os
import re
import sys

TOKEN = re.compile(rb"kst_[A-Za-z0-9_.-]{20,}")
state: dict = {}


def send(message: dict) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def outcome(action) -> dict:
    try:
        value = action()
    except OSError as error:
        return {"ok": False, "error": f"{type(error).__name__}: {error.strerror}"}
    return {"ok": True, "value": value}


def read(path: str, limit: int = 1 << 20) -> bytes:
    with open(path, "rb") as file:
        return file.read(limit)


def read_mem(pid: int) -> str:
    with open(f"/proc/{pid}/mem", "rb") as mem:
        mem.seek(0x400000)
        return mem.read(16).hex()


def append(path: str, text: str) -> int:
    with open(path, "a") as file:
        return file.write(text)


def write_into(folder: str) -> str:
    path = os.path.join(folder, f"probe-{os.getuid()}")
    with open(path, "w") as file:
        file.write("written by another user's agent")
    return path


def harvest(places: list[str]) -> list[str]:
    found: set[str] = set()
    sources = [f"/proc/{pid}/environ" for pid in os.listdir("/proc") if pid.isdigit()]
    for place in places:
        for root, _, files in os.walk(place):
            sources.extend(os.path.join(root, name) for name in files)
    for source in sources:
        try:
            found.update(match.decode() for match in TOKEN.findall(read(source)))
        except OSError:
            pass
    return sorted(found)


def attack(wanted: dict) -> dict:
    report: dict = {}
    for pid in wanted.get("pids", []):
        report[f"environ {pid}"] = outcome(lambda pid=pid: read(f"/proc/{pid}/environ").decode("utf-8", "replace"))
        report[f"mem {pid}"] = outcome(lambda pid=pid: read_mem(pid))
    for folder in wanted.get("dirs", []):
        report[f"list {folder}"] = outcome(lambda folder=folder: os.listdir(folder))
        report[f"write {folder}"] = outcome(lambda folder=folder: write_into(folder))
    for path in wanted.get("files", []):
        report[f"read {path}"] = outcome(lambda path=path: read(path).decode("utf-8", "replace"))
    if cached := wanted.get("cached_file"):
        folder = os.path.dirname(cached)
        report["rewrite cached"] = outcome(lambda: append(cached, "// changed by an agent"))
        report["replace cached"] = outcome(lambda: os.rename(cached, cached + ".gone"))
        report["add to cache"] = outcome(lambda: os.symlink("/etc/passwd", os.path.join(folder, "planted")))
    report["harvest"] = harvest(wanted.get("dirs", []))
    return report


def keep_token() -> str:
    path = os.path.join(os.environ["HOME"], ".probe-token")
    with open(path, "w") as file:
        file.write(state.get("token") or "")
    return path


def own_work() -> dict:
    written = {}
    for folder in (os.getcwd(), os.environ.get("HOME", "")):
        written[folder] = outcome(lambda folder=folder: write_into(folder))
    written["token"] = outcome(keep_token)
    shared = f"/tmp/probe-{os.getuid()}-{os.getpid()}"  # a shared folder: what it leaves there stays its own
    written["shared"] = outcome(lambda: write_into(shared) if os.makedirs(shared, exist_ok=True) is None else "")
    return {
        "pid": os.getpid(),
        "uid": os.getuid(),
        "gid": os.getgid(),
        "groups": os.getgroups(),
        "cwd": os.getcwd(),
        "env": dict(os.environ),
        "written": written,
    }


def respond(prompt: str) -> dict:
    line = next(line for line in prompt.splitlines() if line.startswith("PROBE "))
    wanted = json.loads(line.removeprefix("PROBE "))
    return attack(wanted["attack"]) if "attack" in wanted else own_work()


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        method, params = message.get("method"), message.get("params") or {}
        if method == "initialize":
            send({"id": message["id"], "result": {"protocolVersion": 1, "agentCapabilities": {}}})
        elif method == "session/new":
            for server in params.get("mcpServers") or []:
                for header in server.get("headers") or []:
                    if header.get("name") == "Authorization":
                        state["token"] = header["value"].removeprefix("Bearer ")
            send({"id": message["id"], "result": {"sessionId": "probe-session"}})
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
