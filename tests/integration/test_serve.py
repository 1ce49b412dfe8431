"""`kandev serve` on the embedded default, as a user starts it: a real process tree."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.processes import descendants, wait_gone
from tests.support.serve import serve_env
from tests.support.server import free_port


def wait_healthy(base: str, process: subprocess.Popen[bytes], timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"kandev serve exited early with {process.returncode}")
        try:
            response = httpx.get(f"{base}/healthz", timeout=2)
            if response.status_code == 200:
                return response.json()
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise AssertionError("kandev serve did not become healthy in time")


def wait_for_agent_text(base: str, session_id: str, timeout: float = 30) -> str:
    query = "query($id: ID!) { session(id: $id) { messages { nodes { kind text } } } }"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        data = httpx.post(f"{base}/graphql", json={"query": query, "variables": {"id": session_id}}, timeout=10).json()
        texts = [m["text"] for m in data["data"]["session"]["messages"]["nodes"] if m["kind"] == "AGENT"]
        if texts:
            return texts[0]
        time.sleep(0.1)
    raise AssertionError("no agent message arrived")


@pytest.mark.slow
def test_serve_on_the_embedded_default_answers_and_leaves_no_process_after_sigterm(tmp_path: Path):
    port = free_port()
    env = serve_env(tmp_path / "data")
    process = subprocess.Popen(
        [sys.executable, "-m", "kandev.cli", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        health = wait_healthy(base, process)
        assert (health["status"], health["database"], health["redis"]) == ("ok", "ok", "ok")
        assert health["embedded"] == {"workers": 1, "configured_workers": 1, "scheduler": "ok", "redis": "ok"}
        workspaces = httpx.post(f"{base}/graphql", json={"query": "{ workspaces { id name } }"}, timeout=10).json()
        workspace_id = workspaces["data"]["workspaces"][0]["id"]
        created = httpx.post(
            f"{base}/graphql",
            json={
                "query": "mutation($i: CreateTaskInput!) { createTask(input: $i) { __typename"
                " ... on CreateTaskPayload { task { id title state } } } }",
                "variables": {"i": {"workspaceId": workspace_id, "title": "From a real server"}},
            },
            timeout=10,
        ).json()["data"]["createTask"]
        assert created["__typename"] == "CreateTaskPayload"
        assert created["task"]["title"] == "From a real server"
        assert (tmp_path / "data" / "kandev.db").exists()
        assert (tmp_path / "data" / "server.key").exists()
        # The server's state is its user's alone; agents work beside it, never inside it.
        assert stat.S_IMODE((tmp_path / "data").stat().st_mode) == 0o700
        assert {p.name: stat.S_IMODE(p.stat().st_mode) for p in (tmp_path / "data").glob("*")} == {
            name: 0o600
            for name in (
                "kandev.db",
                "kandev.db-wal",
                "kandev.db-shm",
                "server.key",
                "redis.port",
            )
        }
        assert stat.S_IMODE((tmp_path / "data-work").stat().st_mode) == 0o700
        # The embedded worker runs a scripted turn started over GraphQL.
        started = httpx.post(
            f"{base}/graphql",
            json={
                "query": "mutation($i: StartTaskInput!) { startTask(input: $i) { __typename"
                " ... on StartTaskPayload { session { id } } } }",
                "variables": {"i": {"taskId": created["task"]["id"], "prompt": "/say served by the embedded worker"}},
            },
            timeout=10,
        ).json()["data"]["startTask"]
        assert started["__typename"] == "StartTaskPayload"
        assert wait_for_agent_text(base, started["session"]["id"]) == "served by the embedded worker"
        tree = descendants(process.pid)
        assert len(tree) >= 3, "expected the embedded Redis server, a worker and the scheduler"
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            raise
    assert wait_gone(tree) == set()
    assert process.returncode == 0


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "::"])
def test_serve_with_auth_off_refuses_a_non_loopback_bind_naming_kandev_auth_on(tmp_path: Path, host: str):
    env = {k: v for k, v in os.environ.items() if not k.startswith("KANDEV_")}
    env["KANDEV_DATA_DIR"] = str(tmp_path / "data")
    done = subprocess.run(
        [sys.executable, "-m", "kandev.cli", "serve", "--host", host, "--port", str(free_port())],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "KANDEV_AUTH=on" in lines[0] and host in lines[0]
    assert not (tmp_path / "data").exists(), "nothing may start before the refusal"
