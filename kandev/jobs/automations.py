"""RQ jobs of automations, on the automations queue: launching an admitted run (its task and first prompt),
firing accepted webhook deliveries (those recorded together, in one job), cleaning up a deleted run's or
automation's hidden task, reclaiming an automation's older run worktrees, and checking an automation's
pre-flight."""

from __future__ import annotations

from kandev.domain.automations.cleanup import run_cleanup
from kandev.domain.automations.launch import launch_run
from kandev.domain.automations.preflight import check_and_store
from kandev.domain.automations.retention import retain_worktrees as retain
from kandev.domain.automations.webhooks import deliver_all
from kandev.domain.context import ServiceContext
from kandev.jobs.worker_loop import run_as_system


def launch_automation_run(run_id: str) -> str:
    """RQ entry point (sync): create (or continue) an admitted run's task and queue its first prompt."""
    return run_as_system(launch_run, run_id)


def deliver_webhooks(delivery_ids: list[str]) -> dict[str, str]:
    """RQ entry point (sync): fire recorded webhook deliveries, each once (a redelivered job finds them done)."""
    return run_as_system(deliver_all, delivery_ids)


def clean_up_task(task_id: str) -> str:
    """RQ entry point (sync): perform one recorded task cleanup (a duplicate or repeated job does nothing)."""
    return run_as_system(run_cleanup, task_id)


def retain_worktrees(automation_id: str) -> int:
    """RQ entry point (sync): reclaim the automation's run worktrees beyond the kept ones; how many went."""
    return run_as_system(_retain, automation_id)


async def _retain(ctx: ServiceContext, automation_id: str) -> int:
    return len(await retain(ctx, automation_id))


def preflight_automation(automation_id: str) -> str:
    """RQ entry point (sync): check the automation's pre-flight and store its ack (retried inside with backoff);
    the stored status, or `unchanged` / `gone`."""
    return run_as_system(check_and_store, automation_id)
