"""`kandev serve` as a real process tree on the embedded default, for tests and benchmarks.

Test servers run one embedded worker (KANDEV_WORKERS=1) unless a test is about the pool.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.support import cli_processes
from tests.support.cli_processes import KandevProcess
from tests.support.processes import alive
from tests.support.server import free_port

TEST_WORKERS = "1"


def serve_env(data_dir: Path, **settings: str) -> dict[str, str]:
    """This environment without any KANDEV_* setting, plus a data dir, one worker and `settings`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KANDEV_")}
    env.update(KANDEV_DATA_DIR=str(data_dir), KANDEV_WORKERS=TEST_WORKERS)
    env.update(settings)
    return env


def _parent_of(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _role(pid: int) -> str | None:
    """'redis', 'scheduler' or the worker's KANDEV_WORKER_NAME, from the child's command line and env."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return None
    if b"kandev.platform.embedded_redis" in argv:
        return "redis"
    if b"scheduler" in argv:
        return "scheduler"
    if b"worker" in argv:
        names = [e.split(b"=", 1)[1].decode() for e in environ if e.startswith(b"KANDEV_WORKER_NAME=")]
        return names[0] if names else "worker"
    return None


@dataclass
class Served:
    """A running `kandev serve`: its base URL, process and log file."""

    base: str
    process: subprocess.Popen[bytes] | KandevProcess
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def children(self) -> dict[str, int]:
        """Its live direct children by role ('redis', 'scheduler', each worker's name) -> pid."""
        found: dict[str, int] = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit() and _parent_of(int(entry)) == self.process.pid and alive(int(entry)):
                role = _role(int(entry))
                if role is not None:
                    found[role] = int(entry)
        return found

    def child_env(self, pid: int) -> dict[str, str]:
        raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        return dict(e.decode().split("=", 1) for e in raw if b"=" in e)

    def health(self) -> tuple[int, dict[str, Any]]:
        response = httpx.get(f"{self.base}/healthz", timeout=5)
        return response.status_code, response.json()

    def gql(self, query: str, **variables: Any) -> dict[str, Any]:
        body = httpx.post(f"{self.base}/graphql", json={"query": query, "variables": variables}, timeout=15).json()
        assert "errors" not in body, body
        return body["data"]

    def start_turn(self, prompt: str, title: str = "supervised") -> str:
        """Create a task and start it with `prompt`; returns the session id."""
        workspace_id = self.gql("{ workspaces { id } }")["workspaces"][0]["id"]
        task = self.gql(
            "mutation($i: CreateTaskInput!) { createTask(input: $i) { ... on CreateTaskPayload { task { id } } } }",
            i={"workspaceId": workspace_id, "title": title},
        )["createTask"]["task"]
        started = self.gql(
            "mutation($i: StartTaskInput!) { startTask(input: $i) { __typename"
            " ... on StartTaskPayload { session { id } } } }",
            i={"taskId": task["id"], "prompt": prompt},
        )["startTask"]
        assert started["__typename"] == "StartTaskPayload", started
        return started["session"]["id"]

    def agent_texts(self, session_id: str) -> list[str]:
        query = "query($id: ID!) { session(id: $id) { messages { nodes { kind text } } } }"
        nodes = self.gql(query, id=session_id)["session"]["messages"]["nodes"]
        return [m["text"] for m in nodes if m["kind"] == "AGENT"]

    def wait_for_agent_text(self, session_id: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            texts = self.agent_texts(session_id)
            if texts:
                return texts[0]
            time.sleep(0.05)
        raise AssertionError(f"no agent message arrived in {timeout}s\n{self.log()[-4000:]}")

    def run_turn(self, text: str, timeout: float = 60) -> str:
        """A scripted `/say text` turn through GraphQL, to its agent message."""
        return self.wait_for_agent_text(self.start_turn(f"/say {text}"), timeout)


def wait_healthy(served: Served, timeout: float = 90) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if served.process.poll() is not None:
            raise AssertionError(f"kandev serve exited early with {served.process.returncode}\n{served.log()[-4000:]}")
        try:
            status, body = served.health()
            if status == 200:
                return body
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"kandev serve did not become healthy in time\n{served.log()[-4000:]}")


def stop_served(served: Served, timeout: float = 30) -> int | None:
    if served.process.poll() is None:
        served.process.send_signal(signal.SIGTERM)
        try:
            served.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(served.process.pid, signal.SIGKILL)
            served.process.wait(timeout=10)
            raise
    return served.process.returncode


@contextmanager
def serving(
    tmp_path: Path, *, cwd: Path | None = None, python_flags: tuple[str, ...] = (), **settings: str
) -> Iterator[Served]:
    """`kandev serve` on a free port with its own data dir under `tmp_path`, healthy, stopped after."""
    port = free_port()
    log_path = tmp_path / "serve.log"
    args, env = ["serve", "--port", str(port)], serve_env(tmp_path / "data", **settings)
    with log_path.open("wb") as log:
        streams: dict[str, Any] = {"cwd": cwd, "stdout": log, "stderr": subprocess.STDOUT, "start_new_session": True}
        if python_flags:  # interpreter flags need an interpreter of its own
            process: Any = subprocess.Popen(
                [sys.executable, *python_flags, "-m", "kandev.cli", *args], env=env, **streams
            )
        else:
            process = cli_processes.spawn(args, env, **streams)
    served = Served(f"http://127.0.0.1:{port}", process, log_path)
    try:
        wait_healthy(served)
        yield served
    finally:
        stop_served(served)
