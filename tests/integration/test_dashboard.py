"""`kandev dashboard`: rq-dashboard on loopback against the embedded Redis of a running `kandev serve` (found
through the port file it writes) or KANDEV_REDIS_URL; with KANDEV_AUTH=on only an admin's token gets in."""

from __future__ import annotations

import base64
import os
import re
import stat
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from kandev.platform.data_dir import EMBEDDED_REDIS_PORT_FILE
from tests.integration.test_serve import wait_for_agent_text, wait_healthy
from tests.support import cli_processes
from tests.support.cli_processes import KandevProcess, spawn
from tests.support.server import free_port
from tests.support.workers import stop_gracefully


def kandev_env(data: Path, **settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KANDEV_")}
    return {**env, "KANDEV_DATA_DIR": str(data), "KANDEV_WORKERS": "1", **settings}


@contextmanager
def running(args: list[str], env: dict[str, str]) -> Iterator[KandevProcess]:
    process = spawn(args, env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        yield process
    finally:
        stop_gracefully(process)


def wait_answering(base: str, process: KandevProcess, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"kandev dashboard exited with {process.returncode}: {process.stderr.read()!r}")
        try:
            httpx.get(base, timeout=2)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise AssertionError("kandev dashboard did not answer in time")


def listening_addresses(port: int) -> set[str]:
    """The local addresses (hex, as the kernel lists them) listening on `port`."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not Path(table).exists():
            continue
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, _, hex_port = local.rpartition(":")
            if state == "0A" and int(hex_port, 16) == port:
                found.add(address)
    return found


def graphql(base: str, query: str, **variables: Any) -> dict[str, Any]:
    return httpx.post(f"{base}/graphql", json={"query": query, "variables": variables}, timeout=10).json()["data"]


def start_turn(base: str, title: str, prompt: str) -> tuple[str, str]:
    workspace_id = graphql(base, "{ workspaces { id } }")["workspaces"][0]["id"]
    task_id = graphql(
        base,
        "mutation($i: CreateTaskInput!) { createTask(input: $i) { ... on CreateTaskPayload { task { id } } } }",
        i={"workspaceId": workspace_id, "title": title},
    )["createTask"]["task"]["id"]
    session_id = graphql(
        base,
        "mutation($i: StartTaskInput!) { startTask(input: $i) { ... on StartTaskPayload { session { id } } } }",
        i={"taskId": task_id, "prompt": prompt},
    )["startTask"]["session"]["id"]
    return task_id, session_id


def jobs_in(dashboard: str, registry: str) -> list[dict[str, Any]]:
    queues = httpx.get(f"{dashboard}/0/data/queues.json", timeout=10).json()["queues"]
    return [
        job
        for queue in queues
        for job in httpx.get(f"{dashboard}/0/data/jobs/{queue['name']}/{registry}/50/asc/1.json", timeout=10).json()[
            "jobs"
        ]
    ]


def wait_for_job(dashboard: str, registry: str, needle: str, timeout: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for job in jobs_in(dashboard, registry):
            if needle in job["description"]:
                return job
        time.sleep(0.2)
    raise AssertionError(f"no {registry} job mentioning {needle}: {jobs_in(dashboard, registry)}")


@pytest.mark.slow
def test_the_dashboard_finds_the_embedded_redis_of_serve_and_shows_turns_by_task_id_and_title(tmp_path: Path):
    data = tmp_path / "data"
    port, redis_port, dashboard_port = free_port(), free_port(), free_port()
    base, dashboard = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{dashboard_port}"
    serve_env = kandev_env(data, KANDEV_EMBEDDED_REDIS_PORT=str(redis_port))
    with running(["serve", "--port", str(port)], serve_env) as server:
        wait_healthy(base, server)
        port_file = data / EMBEDDED_REDIS_PORT_FILE
        assert port_file.read_text().strip() == str(redis_port)
        assert stat.S_IMODE(port_file.stat().st_mode) == 0o600
        task_id, session_id = start_turn(base, "Ship the <b>login</b> page", "/say shipped")
        assert wait_for_agent_text(base, session_id) == "shipped"
        failed_task_id, _ = start_turn(base, "Doomed task", "/fail the model is overloaded")
        # No Redis setting: the dashboard reads the port `kandev serve` recorded.
        with running(["dashboard", "--port", str(dashboard_port)], kandev_env(data)) as process:
            wait_answering(dashboard, process)
            page = httpx.get(f"{dashboard}/", timeout=10)
            assert page.status_code == 200 and "kandev-turns" in httpx.get(f"{dashboard}/0/data/queues.json").text
            assets = re.findall(r'(?:src|href)="(/static/[^"]+)"', page.text)
            assert len(assets) >= 4, page.text
            assert {httpx.get(f"{dashboard}{asset}", timeout=10).status_code for asset in assets} == {200}
            finished = wait_for_job(dashboard, "finished", f"task={task_id}")
            assert finished["description"] == f"turn session={session_id} task={task_id} «Ship the ‹b›login‹/b› page»"
            failed = wait_for_job(dashboard, "failed", f"task={failed_task_id}")
            assert "Doomed task" in failed["description"] and "the model is overloaded" in failed["exc_info"]
            assert listening_addresses(dashboard_port) == {"0100007F"}, "loopback only"
            assert httpx.get(f"{dashboard}/", headers={"Host": "evil.example"}, timeout=10).status_code == 421
    assert not port_file.exists(), "a stopped server leaves no stale port behind"


def test_without_a_running_server_or_redis_url_the_dashboard_says_what_to_do(tmp_path: Path):
    done = cli_processes.run(["dashboard", "--port", str(free_port())], kandev_env(tmp_path / "data"), timeout=60)
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert EMBEDDED_REDIS_PORT_FILE in line and "kandev serve" in line and "KANDEV_REDIS_URL" in line


def cli(env: dict[str, str], *args: str) -> str:
    done = cli_processes.run(args, env, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def basic(token: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"admin:{token}".encode()).decode()}


@pytest.mark.slow
def test_with_auth_on_an_admins_token_gets_in_a_members_is_forbidden_and_none_is_challenged(
    tmp_path: Path, redis_url: str
):
    env = kandev_env(tmp_path / "data", KANDEV_AUTH="on", KANDEV_REDIS_URL=redis_url)
    cli(env, "user", "create", "root", "--admin")
    cli(env, "user", "create", "alice")
    admin_token = cli(env, "token", "create", "--name", "dashboard", "--user", "root")
    member_token = cli(env, "token", "create", "--name", "dashboard", "--user", "alice")
    port = free_port()
    dashboard = f"http://127.0.0.1:{port}"
    with running(["dashboard", "--port", str(port)], env) as process:
        wait_answering(dashboard, process)
        assert httpx.get(f"{dashboard}/", timeout=10).status_code == 401
        assert httpx.get(f"{dashboard}/", headers=basic("kdv_not-a-token"), timeout=10).status_code == 401
        assert httpx.get(f"{dashboard}/", headers=basic(member_token), timeout=10).status_code == 403
        assert httpx.get(f"{dashboard}/0/data/queues.json", headers=basic(member_token), timeout=10).status_code == 403
        response = httpx.get(f"{dashboard}/0/data/queues.json", headers=basic(admin_token), timeout=10)
        assert response.status_code == 200 and "queues" in response.json()
        token_id = cli(env, "token", "list", "--user", "root").splitlines()[1].split("\t")[0]
        cli(env, "token", "revoke", token_id)
        assert httpx.get(f"{dashboard}/", headers=basic(admin_token), timeout=10).status_code == 401
