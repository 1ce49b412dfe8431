"""Cold and warm scripted turns in each executor: the worktree executor (a plain process), a bubblewrap sandbox and
a Docker container of the locally built test image (tests/support/boxes.py; never pulled), all on one repository.

Cold: from `startTask` to the agent's first message (its box made and its agent started), a new task each time;
warm: a follow-up on the same session, its agent (and box) still up on the worker. One real `kandev worker` that
offers docker and sandbox runs the turns; an executor this host can't run is reported as such, not measured.
"""

from __future__ import annotations

import asyncio
import os
from datetime import UTC, datetime
from typing import Any

import redis.asyncio as aioredis
from sqlalchemy import func, select

from bench.backends import backends
from bench.foundation import summary
from kandev.domain.access.bootstrap import bootstrap
from kandev.domain.services import Services
from kandev.domain.tasks.service import CreateTask
from kandev.domain.workspace.repositories import RepositoryChoice
from kandev.jobs.capabilities import host_executors
from kandev.models import Message, Turn
from kandev.models.enums import ExecutorKind
from kandev.platform.database import Database
from kandev.platform.event_bus import EventBus, session_channel
from kandev.platform.settings import Settings
from kandev.wiring import dispatcher, service_context
from tests.support.boxes import TEST_IMAGE, docker_missing
from tests.support.git_repos import make_repository
from tests.support.workers import running_worker

TURNS = 10
# Run as root, the benchmark's plain agents run as root too (its interpreter may be where no other user reaches),
# so the container is told its user: nobody's ids, which a `/say` turn needs no more than.
CONTAINER_USER = "65534:65534" if os.geteuid() == 0 else ""


async def _turn(bus: EventBus, session_id: str, send: Any) -> None:
    """Runs `send` (which queues a turn of the session) and waits for that turn's end."""
    async with bus.subscribe(session_channel(session_id)) as events:
        await send()
        async with asyncio.timeout(120):
            async for event in events:
                if event["kind"] == "TURN_ENDED":
                    return


async def _first_agent_message(db: Database, session_id: str, since: datetime) -> float:
    """Seconds from `since` until the session's first agent message after it was written."""
    async with db.read() as session:
        written = await session.scalar(
            select(func.min(Message.created_at)).where(
                Message.session_id == session_id, Message.kind == "AGENT", Message.created_at >= since
            )
        )
    if written is None:
        raise RuntimeError(f"session {session_id}: the turn ended without an agent message")
    return (written - since).total_seconds()


async def _measure_kind(services: Services, db: Database, bus: EventBus, workspace_id: str, repo: str, executor: str):
    cold, warm, launch = [], [], []
    for i in range(TURNS + 1):
        made = CreateTask(
            workspace_id=workspace_id,
            title=f"bench {i}",
            repositories=[RepositoryChoice(repo)],
            executor_profile_id=executor,
        )
        task = (await services.tasks.create(made)).task
        began = datetime.now(UTC)
        session_id = (await services.sessions.start_task(task.id, "/say benchmark", None)).session.id
        await _turn(bus, session_id, _nothing)  # the turn is queued already; subscribed at once, as bench.turns
        if i > 0:  # the worker's first box of a kind also pays its imports and the kind's own set-up
            cold.append(await _first_agent_message(db, session_id, began))
            launch.append(await _launch_seconds(db, session_id))
            sent = datetime.now(UTC)
            await _turn(bus, session_id, lambda t=task.id: services.sessions.send_message(t, "/say again"))
            warm.append(await _first_agent_message(db, session_id, sent))
        await services.tasks.delete(task.id)  # its box goes with it
    return {
        "cold_start_to_first_message": summary(cold),
        "agent_start": summary(launch),
        "warm_follow_up_to_first_message": summary(warm),
    }


async def _launch_seconds(db: Database, session_id: str) -> float:
    """The session's first turn's agent start (box made, agent up, ACP session open), as the worker timed it."""
    async with db.read() as session:
        turn = await session.scalar(select(Turn).where(Turn.session_id == session_id, Turn.seq == 1))
    assert turn is not None and turn.timings
    return float(turn.timings["launch_ms"]) / 1000


async def _nothing() -> None:
    return None


async def measure(settings: Settings) -> dict[str, Any]:
    assert settings.redis_url is not None
    db = Database(settings.resolved_database_url())
    bus = EventBus(aioredis.from_url(settings.redis_url))
    jobs = dispatcher(settings, db, bus)
    services = Services(service_context(db, bus, jobs, settings, await bootstrap(db, settings)))
    workspace = (await services.workspaces.list())[0]
    folder = make_repository(settings.data_path.parent / "project")
    repo = str((await services.repositories.create(workspace.id, "project", str(folder))).id)
    profiles = {p.kind: str(p.id) for p in await services.executor_profiles.list(workspace.id) if p.builtin}
    unavailable = {kind: reason for kind, reason in (await host_executors()).items() if reason is not None}
    if "docker" not in unavailable and (missing := docker_missing()):
        unavailable["docker"] = missing
    for kind, config in (
        (ExecutorKind.SANDBOX, {}),
        (ExecutorKind.DOCKER, {"image": TEST_IMAGE, "user": CONTAINER_USER}),
    ):
        if kind.value not in unavailable:
            made = await services.executor_profiles.create(workspace.id, f"bench {kind.value}", kind, config)
            profiles[kind.value] = str(made.id)
    results: dict[str, Any] = {}
    try:
        with running_worker(settings, KANDEV_WORKER_CAPABILITIES="docker,sandbox"):
            for kind in (ExecutorKind.WORKTREE, ExecutorKind.SANDBOX, ExecutorKind.DOCKER):
                if kind.value in unavailable:
                    results[kind.value] = {"unavailable": unavailable[kind.value]}
                    continue
                results[kind.value] = await _measure_kind(services, db, bus, workspace.id, repo, profiles[kind.value])
    finally:
        jobs.close()
        await bus.close()
        await db.dispose()
    return {"turns": TURNS, **results, "targets": {"sandbox_cold_vs_worktree": 1.5, "docker_cold_median_ms": 2000}}


async def run() -> dict[str, Any]:
    with backends() as where:
        settings = Settings(
            database_url=where.database_url,
            redis_url=where.redis_url,
            data_dir=where.folder / "data",
        )
        return {"database": where.database, **await measure(settings)}


if __name__ == "__main__":
    import json

    print(json.dumps(asyncio.run(run()), indent=2))
