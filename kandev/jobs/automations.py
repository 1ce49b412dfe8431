"""RQ jobs of automations, on the automations queue: launching an admitted run (its task and first prompt),
firing accepted webhook deliveries (those recorded together, in one job), cleaning up a deleted run's or
automation's hidden task, and reclaiming an automation's older run worktrees."""

from __future__ import annotations

import asyncio

from kandev.config import Settings
from kandev.domain.automations.cleanup import run_cleanup
from kandev.domain.automations.launch import launch_run
from kandev.domain.automations.retention import retain_worktrees as retain
from kandev.domain.automations.webhooks import deliver_all
from kandev.jobs.worker_loop import current_loop
from kandev.state import SYSTEM, provide_services


def launch_automation_run(run_id: str) -> str:
    """RQ entry point (sync): on the worker's event loop and services, or (outside a worker) on fresh ones."""
    worker = current_loop()
    if worker is None:
        return asyncio.run(_launch_alone(Settings(), run_id))
    return worker.call(launch_run(worker.ctx.with_principal(SYSTEM), run_id))


async def _launch_alone(settings: Settings, run_id: str) -> str:
    async with provide_services(settings, SYSTEM) as services:
        return await launch_run(services.ctx, run_id)


def deliver_webhooks(delivery_ids: list[str]) -> dict[str, str]:
    """RQ entry point (sync): fire recorded webhook deliveries, each once (a redelivered job finds them done)."""
    worker = current_loop()
    if worker is None:
        return asyncio.run(_deliver_alone(Settings(), delivery_ids))
    return worker.call(deliver_all(worker.ctx.with_principal(SYSTEM), delivery_ids))


async def _deliver_alone(settings: Settings, delivery_ids: list[str]) -> dict[str, str]:
    async with provide_services(settings, SYSTEM) as services:
        return await deliver_all(services.ctx, delivery_ids)


def clean_up_task(task_id: str) -> str:
    """RQ entry point (sync): perform one recorded task cleanup (a duplicate or repeated job does nothing)."""
    worker = current_loop()
    if worker is None:
        return asyncio.run(_clean_up_alone(Settings(), task_id))
    return worker.call(run_cleanup(worker.ctx.with_principal(SYSTEM), task_id))


async def _clean_up_alone(settings: Settings, task_id: str) -> str:
    async with provide_services(settings, SYSTEM) as services:
        return await run_cleanup(services.ctx, task_id)


def retain_worktrees(automation_id: str) -> int:
    """RQ entry point (sync): reclaim the automation's run worktrees beyond the kept ones; how many went."""
    worker = current_loop()
    if worker is None:
        return asyncio.run(_retain_alone(Settings(), automation_id))
    return len(worker.call(retain(worker.ctx.with_principal(SYSTEM), automation_id)))


async def _retain_alone(settings: Settings, automation_id: str) -> int:
    async with provide_services(settings, SYSTEM) as services:
        return len(await retain(services.ctx, automation_id))
