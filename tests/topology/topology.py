"""A production topology on one machine: two `kandev serve` replicas, two named workers and two schedulers
on one PostgreSQL and one Redis, with auth on. Every part is a real process started from the real CLI."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from redis import Redis

from tests.integration.test_serve import wait_healthy
from tests.support.server import free_port

SECRET_KEY = "topology-test-server-key-0123456789abcdef"
ERRORS = "__typename ... on Error { message code }"


class GraphQLError(AssertionError):
    pass


@dataclass
class Role:
    """One process of the topology: its name, its `kandev` arguments and the settings it got."""

    name: str
    args: list[str]
    env: dict[str, str]
    process: subprocess.Popen[bytes] | None = None

    @property
    def command(self) -> str:
        """The kandev command it runs (`serve`, `worker`, `scheduler`)."""
        return self.args[0]


@dataclass
class Topology:
    database_url: str
    redis_url: str
    replicas: list[str]
    token: str = ""
    workspace_id: str = ""
    roles: dict[str, Role] = field(default_factory=dict)
    home: Path = Path("/nonexistent")

    def gql(self, replica: int, query: str, timeout: float = 30, **variables: Any) -> dict[str, Any]:
        response = httpx.post(
            f"{self.replicas[replica]}/graphql",
            json={"query": query, "variables": variables},
            headers={"Authorization": f"Bearer {self.token}"},
            timeout=timeout,
        )
        body = response.json()
        if response.status_code != 200 or body.get("errors"):
            raise GraphQLError(f"{response.status_code}: {body}")
        return body["data"]

    def mutate(self, replica: int, query: str, field_name: str, **variables: Any) -> dict[str, Any]:
        """A mutation's payload; a typed error (the result union's Error arm) fails the test."""
        payload = self.gql(replica, query, **variables)[field_name]
        if "code" in payload:
            raise GraphQLError(f"{field_name}: {payload}")
        return payload

    def start(self, role: Role) -> None:
        role.process = subprocess.Popen(
            [sys.executable, "-I", "-m", "kandev.cli", *role.args],
            env=role.env,
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=None,
        )

    def add_replica(self, name: str, *, work_dir: Path) -> int:
        """Another `kandev serve` replica, as on a machine of its own without the workers' working trees (its own
        work dir); its index in `replicas` once it is healthy."""
        port = free_port()
        env = {
            **base_env(self.database_url, self.redis_url, self.home),
            "KANDEV_PUBLIC_URL": f"http://127.0.0.1:{port}",
            "KANDEV_DATA_DIR": str(self.home / name),
            "KANDEV_WORK_DIR": str(work_dir),
        }
        role = self.roles[name] = Role(name, ["serve", "--port", str(port)], env)
        self.start(role)
        assert role.process is not None
        self.replicas.append(f"http://127.0.0.1:{port}")
        wait_healthy(self.replicas[-1], role.process)
        return len(self.replicas) - 1

    def remove_replica(self, name: str) -> None:
        role = self.roles.pop(name)
        url = f"http://127.0.0.1:{role.args[-1]}"
        if role.process is not None and role.process.poll() is None:
            with suppress(ProcessLookupError):
                os.killpg(role.process.pid, signal.SIGTERM)
            role.process.wait(timeout=20)
        self.replicas.remove(url)

    def kill(self, name: str) -> None:
        """kill -9 of the role's process and of its whole group (a worker's job process and agents)."""
        process = self.roles[name].process
        assert process is not None
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=15)

    def stop_all(self) -> None:
        live = [r.process for r in self.roles.values() if r.process is not None and r.process.poll() is None]
        for process in live:
            with suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + 20
        for process in live:
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                with suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=5)


def base_env(database_url: str, redis_url: str, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KANDEV_")}
    env.update(
        KANDEV_DATABASE_URL=database_url,
        KANDEV_REDIS_URL=redis_url,
        KANDEV_AUTH="on",
        KANDEV_SECRET_KEY=SECRET_KEY,
        KANDEV_ALLOWED_HOSTS="kandev.internal",
        # One machine plays every host: the working trees are shared, as a network volume would be.
        KANDEV_WORK_DIR=str(home / "work"),
        KANDEV_TURN_LEASE_SECONDS="3",
        # Repositories a test registers live under the topology's home.
        KANDEV_SOURCE_ROOTS=str(home / "sources"),
        KANDEV_SCHEDULER_INTERVAL_SECONDS="0.5",
    )
    return env


def cli(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-I", "-m", "kandev.cli", *args], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, f"kandev {' '.join(args)}: {done.stderr}"
    return done.stdout


def planned_topology(database_url: str, redis_url: str, home: Path) -> Topology:
    """The processes of the topology and their settings, not started: serve ×2, worker ×2, scheduler ×2."""
    env = base_env(database_url, redis_url, home)
    ports = [free_port(), free_port()]
    topology = Topology(database_url, redis_url, [f"http://127.0.0.1:{p}" for p in ports], home=home)
    for index, port in enumerate(ports, 1):
        own = {**env, "KANDEV_PUBLIC_URL": f"http://127.0.0.1:{port}", "KANDEV_DATA_DIR": str(home / f"serve-{index}")}
        topology.roles[f"serve-{index}"] = Role(f"serve-{index}", ["serve", "--port", str(port)], own)
    for index in (1, 2):
        # Agents reach the MCP endpoint through the public URL: a load balancer's, here the first replica.
        worker = {
            **env,
            "KANDEV_PUBLIC_URL": f"http://127.0.0.1:{ports[0]}",
            "KANDEV_WORKER_NAME": f"worker-{index}",
            "KANDEV_DATA_DIR": str(home / f"worker-{index}"),
        }
        topology.roles[f"worker-{index}"] = Role(f"worker-{index}", ["worker"], worker)
        scheduler = {**env, "KANDEV_DATA_DIR": str(home / f"scheduler-{index}")}
        topology.roles[f"scheduler-{index}"] = Role(f"scheduler-{index}", ["scheduler"], scheduler)
    return topology


@contextmanager
def running_topology(database_url: str, redis_url: str, home: Path) -> Iterator[Topology]:
    """Migrate, create an admin with a token and a workspace, with every process of the topology running."""
    Redis.from_url(redis_url).flushdb()
    topology = planned_topology(database_url, redis_url, home)
    env = base_env(database_url, redis_url, home)
    cli(env, "db", "upgrade")
    cli(env, "user", "create", "operator", "--admin")
    topology.token = cli(env, "token", "create", "--name", "topology", "--user", "operator").strip().splitlines()[-1]
    try:
        for role in topology.roles.values():
            topology.start(role)
        for index, base in enumerate(topology.replicas, 1):
            process = topology.roles[f"serve-{index}"].process
            assert process is not None
            wait_healthy(base, process)
        created = topology.mutate(
            0,
            f"mutation($i: CreateWorkspaceInput!) {{ createWorkspace(input: $i) {{ {ERRORS}"
            " ... on WorkspacePayload { workspace { id } } } }",
            "createWorkspace",
            i={"name": "Topology"},
        )
        topology.workspace_id = created["workspace"]["id"]
        yield topology
    finally:
        topology.stop_all()
