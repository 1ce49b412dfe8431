"""RQ jobs of shipping, on the default queue: a fix round (its check logs read, its prompt queued), an auto-merge
of a green and approved request, and refreshing requests from their code host; and the scheduler's hook that
polls every open request every KANDEV_GITHUB_POLL_SECONDS (a Redis key per workspace keeps two schedulers from
piling polls up) and enqueues again the fix rounds a dead job left behind."""

from __future__ import annotations

import asyncio
import logging
import math

from kandev.domain.code_requests import MergeMethod
from kandev.domain.context import ServiceContext
from kandev.domain.errors import DomainError
from kandev.domain.shipping.fix_rounds import due_rounds, run_round
from kandev.domain.shipping.requests import open_requests, refresh_all
from kandev.domain.shipping.service import ShipService
from kandev.jobs.worker_loop import run_as_system
from kandev.platform.job_queues import DEFAULT, REFRESH_REQUESTS_JOB, enqueue
from kandev.platform.redis_client import sync_redis
from kandev.platform.settings import Settings
from kandev.wiring import SYSTEM, provide_services

log = logging.getLogger("kandev.jobs.shipping")

REFRESH_TIMEOUT_SECONDS = 600


def run_fix_round(round_id: str) -> str:
    """RQ entry point (sync): run one fix round once (a duplicate or late job finds it done)."""
    return run_as_system(run_round, round_id)


def auto_merge(task_id: str, repository_id: str) -> str:
    """RQ entry point (sync): merge the request if it is still green, approved and mergeable."""
    return run_as_system(_auto_merge, (task_id, repository_id))


async def _auto_merge(ctx: ServiceContext, pair: tuple[str, str]) -> str:
    task_id, repository_id = pair
    try:
        record = await ShipService(ctx).merge_request(task_id, repository_id, MergeMethod.MERGE)
    except DomainError as error:
        return f"not merged: {error.message}"
    return record.state


def refresh_requests(pairs: list[list[str]]) -> int:
    """RQ entry point (sync): refresh these (task, repository) requests; how many were."""
    return run_as_system(_refresh, pairs)


async def _refresh(ctx: ServiceContext, pairs: list[list[str]]) -> int:
    return await refresh_all(ctx, [(task_id, repository_id) for task_id, repository_id in pairs])


def poll_key(workspace_id: str | None) -> str:
    return f"kandev-ship-poll:{workspace_id or 'all'}"


async def ship_tick(settings: Settings) -> dict[str, int]:
    """The scheduler hook: enqueue due fix rounds again, and a refresh of every open request when its poll is due."""
    async with provide_services(settings, SYSTEM) as services:
        rounds = await due_rounds(services.ctx)
        for round_id in rounds:
            await services.ctx.jobs.enqueue_fix_round(round_id)
        pairs = await open_requests(services.ctx)
    enqueued = await asyncio.to_thread(_enqueue_poll, settings, pairs) if pairs else 0
    if rounds or enqueued:
        log.info("shipping: re-enqueued %d fix round(s), polled %d request(s)", len(rounds), enqueued)
    return {"rounds": len(rounds), "polled": enqueued}


def _enqueue_poll(settings: Settings, pairs: list[tuple[str, str]]) -> int:
    if settings.redis_url is None:
        return 0
    connection = sync_redis(settings.redis_url)
    try:
        if not connection.set(poll_key(None), b"1", nx=True, ex=max(1, math.ceil(settings.github_poll_seconds))):
            return 0
        enqueue(
            DEFAULT,
            REFRESH_REQUESTS_JOB,
            [list(pair) for pair in pairs],
            job_timeout=REFRESH_TIMEOUT_SECONDS,
            connection=connection,
            description=f"refresh {len(pairs)} pull/merge request(s)",
        )
    finally:
        connection.close()
    return len(pairs)
