"""GitHub triggers on the scheduler: the `github_tick` hook delivers due pending GitHub firings (retries
with backoff) and, every KANDEV_GITHUB_POLL_SECONDS per connected workspace, enqueues one
`poll_github_workspace` job on the default queue. A Redis key per workspace (SET NX with the poll interval
as its lifetime) keeps two schedulers, or a slow poll, from piling polls up."""

from __future__ import annotations

import asyncio
import logging
import math
import time
from typing import TYPE_CHECKING

from kandev.domain.github.connections import connected_workspace_ids
from kandev.domain.github.firings import deliver_pending
from kandev.domain.github.pull_requests import poll_github_now
from kandev.domain.github.webhooks import forget_old_deliveries
from kandev.jobs.worker_loop import run_as_system
from kandev.platform.job_queues import DEFAULT, enqueue
from kandev.platform.redis_client import sync_redis
from kandev.platform.settings import Settings
from kandev.wiring import SYSTEM, provide_services

if TYPE_CHECKING:
    from kandev.domain.context import ServiceContext

log = logging.getLogger("kandev.adapters.github.jobs")

POLL_JOB = "kandev.jobs.github_triggers.poll_github_workspace"
POLL_JOB_TIMEOUT_SECONDS = 600
FORGET_EVERY_SECONDS = 3600.0
_forgotten = [-FORGET_EVERY_SECONDS]  # when this process last pruned old webhook delivery ids (monotonic)


def poll_key(workspace_id: str) -> str:
    """Held for the poll interval once a workspace's poll is enqueued."""
    return f"kandev-github-poll:{workspace_id}"


def poll_github_workspace(workspace_id: str) -> int:
    """RQ entry point (sync): poll one workspace and fire what it found; returns how many firings settled."""
    return run_as_system(_poll, workspace_id)


async def _poll(ctx: ServiceContext, workspace_id: str) -> int:

    return len(await poll_github_now(ctx, workspace_id))


async def github_tick(settings: Settings) -> dict[str, int]:
    """The scheduler hook: deliver due pending firings, then enqueue the polls that are due (and forget
    webhook delivery ids older than their memory)."""

    async with provide_services(settings, SYSTEM) as services:
        delivered = await deliver_pending(services.ctx)
        if time.monotonic() - _forgotten[0] >= FORGET_EVERY_SECONDS:
            _forgotten[0] = time.monotonic()
            await forget_old_deliveries(services.ctx)
        async with services.ctx.read() as db:
            workspaces = await connected_workspace_ids(db)
    enqueued = await asyncio.to_thread(_enqueue_due_polls, settings, workspaces) if workspaces else 0
    if delivered or enqueued:
        log.info("github: delivered %d pending firing(s), enqueued %d poll(s)", len(delivered), enqueued)
    return {"delivered": len(delivered), "enqueued": enqueued}


def _enqueue_due_polls(settings: Settings, workspaces: list[str]) -> int:

    if settings.redis_url is None:
        return 0
    interval = max(1, math.ceil(settings.github_poll_seconds))
    connection = sync_redis(settings.redis_url)
    enqueued = 0
    try:
        for workspace_id in workspaces:
            if not connection.set(poll_key(workspace_id), b"1", nx=True, ex=interval):
                continue
            enqueue(
                DEFAULT,
                POLL_JOB,
                workspace_id,
                job_timeout=POLL_JOB_TIMEOUT_SECONDS,
                connection=connection,
                description=f"github poll workspace={workspace_id}",
            )
            enqueued += 1
    finally:
        connection.close()
    return enqueued
