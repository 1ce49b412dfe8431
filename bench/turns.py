"""A scripted `/say` turn from startTask to turn end, split into queueing, agent start and protocol time.

One real `kandev worker` process runs the turns; the database and Redis are the embedded default
unless KANDEV_BENCH_DATABASE_URL / KANDEV_BENCH_REDIS_URL are set.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import redis.asyncio as aioredis
from sqlalchemy import select

from bench.backends import backends
from bench.foundation import summary
from kandev.adapters.rq_dispatch import RqDispatcher
from kandev.domain.access.bootstrap import bootstrap
from kandev.domain.services import Services
from kandev.domain.tasks.service import CreateTask
from kandev.models import Turn
from kandev.platform.database import Database
from kandev.platform.event_bus import EventBus, session_channel
from kandev.platform.settings import Settings
from kandev.wiring import service_context
from tests.support.workers import running_worker

TURNS = 20


async def measure(settings: Settings) -> dict[str, Any]:
    db = Database(settings.resolved_database_url())
    bus = EventBus(aioredis.from_url(settings.redis_url))
    jobs = RqDispatcher(settings.redis_url, bus, turn_timeout=600)
    services = Services(service_context(db, bus, jobs, settings, await bootstrap(db, settings)))
    workspace = (await services.workspaces.list())[0]
    totals, queueing, launch, protocol = [], [], [], []
    warm_totals, warm_reach, warm_queueing, warm_ready = [], [], [], []
    try:
        with running_worker(settings):
            for i in range(TURNS + 1):
                task = (await services.tasks.create(CreateTask(workspace_id=workspace.id, title=f"bench {i}"))).task
                started_at = time.time()
                began = time.perf_counter()
                delivery = await services.sessions.start_task(task.id, "/say benchmark", None)
                async with bus.subscribe(session_channel(delivery.session.id)) as events:
                    async with asyncio.timeout(60):
                        async for event in events:
                            if event["kind"] == "TURN_ENDED":
                                break
                total = time.perf_counter() - began
                if i == 0:
                    continue  # the worker's first job also pays its own imports
                async with db.read() as session:
                    turn = await session.scalar(select(Turn).where(Turn.session_id == delivery.session.id))
                totals.append(total)
                queueing.append(turn.started_at.timestamp() - started_at)
                launch.append(turn.timings["launch_ms"] / 1000)
                protocol.append(turn.timings["prompt_ms"] / 1000)
                # A follow-up on the same session: its agent is warm on the worker.
                async with bus.subscribe(session_channel(delivery.session.id)) as events:
                    began, sent_at = time.perf_counter(), time.time()
                    await services.sessions.send_message(task.id, "/say again")
                    async with asyncio.timeout(60):
                        async for event in events:
                            if event["kind"] == "TURN_ENDED":
                                break
                    total = time.perf_counter() - began
                async with db.read() as session:
                    turns = (await session.scalars(select(Turn).where(Turn.session_id == delivery.session.id))).all()
                follow_up = max(turns, key=lambda t: t.seq)
                assert "launch_ms" not in (follow_up.timings or {}), "the follow-up found its agent warm"
                warm_totals.append(total)
                warm_queueing.append(follow_up.started_at.timestamp() - sent_at)
                warm_ready.append(follow_up.timings["ready_ms"] / 1000)
                warm_reach.append(warm_queueing[-1] + warm_ready[-1])
    finally:
        jobs.close()
        await bus.close()
        await db.dispose()
    return {
        "turns": TURNS,
        "start_task_to_turn_end": summary(totals),
        "queueing": summary(queueing),
        "agent_process_start": summary(launch),
        "protocol": summary(protocol),
        "warm_follow_up_to_turn_end": summary(warm_totals),
        # From sending the follow-up until its prompt leaves for the warm agent: queueing (until a worker
        # claimed the turn) plus readying (the warm agent's checks and the context).
        "warm_follow_up_reaches_agent": summary(warm_reach),
        "warm_follow_up_queueing": summary(warm_queueing),
        "warm_follow_up_ready": summary(warm_ready),
        "targets": {"start_task_to_turn_end_median_ms": 200, "warm_follow_up_reaches_agent_median_ms": 50},
    }


async def run() -> dict[str, Any]:
    with backends() as where:
        settings = Settings(database_url=where.database_url, redis_url=where.redis_url, data_dir=where.folder / "data")
        return {"database": where.database, **await measure(settings)}
