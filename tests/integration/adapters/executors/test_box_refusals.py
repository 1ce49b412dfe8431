"""A hostile agent in a box (the probe, tests/agents/box_probe.py, run from its task's worktree) tries everything the
issue says it must not do, in a Docker container and in a bubblewrap sandbox, and is refused each time: the server
key and database, another task's files, writing outside its worktree and temp, the host's processes and
environment, loopback services (Redis, Kandev's HTTP port, PostgreSQL) and the Docker socket. Its own work still
succeeds, nothing outside its worktree changes, and breaking its memory limit ends the turn with a clear error."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from sqlalchemy import select

from kandev.models import Message, Session
from kandev.models.enums import ExecutorKind
from tests.support.boxes import needs
from tests.support.factories import started_task
from tests.support.watch import watching

pytestmark = pytest.mark.slow

KINDS = [ExecutorKind.DOCKER, ExecutorKind.SANDBOX]


async def probe_turn(services, bus, db, started: Any, number: int, wanted: dict[str, Any] | None) -> Any:
    """Send the probe `wanted` (None: the prompt already queued) and return its turn and report."""
    session_id = started.session_id
    if wanted is not None:
        await services.sessions.send_message(started.task_id, f"PROBE {json.dumps(wanted)}", session_id=session_id)
    async with watching(bus, db, session_id) as watch:
        turns = await watch.turns_ended(number, timeout=120)
    async with db.read() as s:
        said = list(
            await s.scalars(
                select(Message.text)
                .where(Message.session_id == session_id, Message.kind == "AGENT")
                .order_by(Message.seq)
            )
        )
    return turns[-1], json.loads(said[-1]) if said and turns[-1].state == "COMPLETED" else None


def own_task_dir(settings, task_id: str) -> Path:
    return settings.work_path / "worktrees" / task_id


def loopback_services(settings, address: str) -> list[list[Any]]:
    """Every service of this system that listens on loopback: the app, Redis and the database server."""
    targets = [["127.0.0.1", int(address.rsplit(":", 1)[1])]]
    for url in (settings.redis_url, settings.resolved_database_url()):
        split = urlsplit(url)
        if split.hostname in ("127.0.0.1", "localhost") and split.port:
            targets.append(["127.0.0.1", split.port])
    return targets


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.value)
async def test_a_hostile_agent_in_a_box_is_refused_everything_outside_it(
    live, services, bus, db, workspace_id, settings, box_profile, probe_profile, probe_repository, start_probe, kind
):
    needs(kind.value)
    # Another task of the same repository, on the plain worktree executor: its worktree is on this host.
    other = await started_task(
        services, workspace_id, 'PROBE {"own": true}', agent_profile_id=probe_profile, repositories=[probe_repository]
    )
    async with watching(bus, db, other.session_id) as watch:
        assert (await watch.next_turn_end(timeout=60)).state == "COMPLETED"
    async with db.read() as s:
        other_dir = Path((await s.get(Session, other.session_id)).working_dir)
    canary = settings.data_path / "canary"
    canary.write_text("the server's own")
    key = settings.data_path / "server.key"
    key.write_text("0" * 64)
    executor = await box_profile(kind, memory_mb=512 if kind == ExecutorKind.SANDBOX else 256, pids=128)
    started = await start_probe(executor, {"own": True})
    turn, own = await probe_turn(services, bus, db, started, 1, None)
    assert turn.state == "COMPLETED", turn.error
    own = own["own"]
    # Its own work succeeds: its worktree and its temp are its to write.
    assert own["write_cwd"]["ok"] and own["write_tmp"]["ok"], own
    database = urlsplit(settings.resolved_database_url()).path
    host_pids = [os.getpid(), live.worker_pid, 1]
    attack = {
        "read": [str(key), str(canary), database, str(other_dir / "README")],
        "list": [str(settings.data_path), str(settings.work_path), str(other_dir), str(other_dir.parent)],
        "write": [
            "/kandev-probe",
            "/usr/kandev-probe",
            "/etc/kandev-probe",
            "/run/kandev/probe",
            str(settings.data_path / "probe"),
            str(other_dir / "probe"),
        ],
        "connect": loopback_services(settings, live.address),
        "unix": ["/var/run/docker.sock", "/run/docker.sock"],
        "pids": host_pids[:2],
    }
    turn, report = await probe_turn(services, bus, db, started, 2, attack)
    assert turn.state == "COMPLETED", turn.error
    refused = {name: outcome for name, outcome in report.items() if not name.startswith("pid ")}
    allowed = {name: outcome for name, outcome in refused.items() if outcome["ok"] is not False}
    # A box sees the folders above its task directory and its identity's HOME (mounted at their own paths, for
    # git and a signed-in agent) as empty stubs: listing one shows the way to its own things, never another's.
    own_path = set(own_task_dir(settings, started.task_id).parts) | set(Path(own["home"]).parts)
    stubs = {n for n, o in allowed.items() if n.startswith("list ") and set(o["value"]) <= own_path}
    assert refused and not set(allowed) - stubs, allowed
    # The host's processes are not there at all (its own PID namespace); nor is anything of the server's env.
    assert report[f"pid {os.getpid()}"] is False and report[f"pid {live.worker_pid}"] is False
    assert len(own["processes"]) < 10, own["processes"]
    assert not [name for name in own["env"] if name.startswith("KANDEV_")]
    # Nothing was written on the host outside the box's own worktree.
    assert not (settings.data_path / "probe").exists() and not (other_dir / "probe").exists()
    assert not Path("/kandev-probe").exists() and not Path("/usr/kandev-probe").exists()
    assert canary.read_text() == "the server's own"


@pytest.mark.parametrize(
    ("kind", "error"),
    [(ExecutorKind.DOCKER, "exceeded its memory limit of 96 MB"), (ExecutorKind.SANDBOX, "MemoryError")],
    ids=["docker", "sandbox"],
)
async def test_breaking_the_memory_limit_ends_the_turn_with_a_clear_error(
    live, services, bus, db, workspace_id, box_profile, start_probe, kind, error
):
    needs(kind.value)
    # The sandbox limits address space (the interpreter alone maps ~30 MB); the container its memory, without swap.
    executor = await box_profile(kind, memory_mb=96 if kind == ExecutorKind.DOCKER else 160)
    started = await start_probe(executor, {"alloc_mb": 400})
    turn, _ = await probe_turn(services, bus, db, started, 1, None)
    assert turn.state == "FAILED" and error in (turn.error or ""), turn.error


async def test_a_container_past_its_process_limit_is_refused_more(
    live, services, bus, db, workspace_id, box_profile, start_probe
):
    needs("docker")
    executor = await box_profile(ExecutorKind.DOCKER, pids=24)
    started = await start_probe(executor, {"spawn": 60})
    turn, report = await probe_turn(services, bus, db, started, 1, None)
    assert turn.state == "COMPLETED", turn.error
    assert report["spawn"]["started"] < 24 and report["spawn"]["refused"], report
