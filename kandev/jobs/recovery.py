"""Recovery from the database, the only source of truth: reap turns whose worker died, and enqueue
again every session that has queued prompts, every admitted automation run not launched yet, every webhook
delivery not fired yet, every task cleanup and notification delivery that is due (a restarted Redis may have
lost their jobs); and forget uploads no task took within a day."""

from __future__ import annotations

import asyncio
import logging

from kandev.domain.attachments.service import forget_unbound
from kandev.domain.automations.cleanup import due_cleanups
from kandev.domain.automations.launch import runs_to_launch
from kandev.domain.automations.webhooks import unprocessed_deliveries
from kandev.domain.notifications.deliveries import due_deliveries
from kandev.domain.sessions.turns import reap_expired_turns, sessions_with_pending_work
from kandev.platform.settings import Settings
from kandev.wiring import SYSTEM, provide_services

log = logging.getLogger("kandev.recovery")


async def recover(settings: Settings) -> dict[str, int]:
    async with provide_services(settings, SYSTEM) as services:
        ctx = services.ctx
        reaped = await reap_expired_turns(ctx)
        pending = await sessions_with_pending_work(ctx)
        for session_id in pending:
            await ctx.jobs.enqueue_turn(session_id)
        launches = await runs_to_launch(ctx)
        for run_id in launches:
            await ctx.jobs.enqueue_automation_run(run_id)
        deliveries = await unprocessed_deliveries(ctx)
        if deliveries:
            await ctx.jobs.enqueue_webhook_deliveries(deliveries)
        cleanups = await due_cleanups(ctx)
        for task_id in cleanups:
            await ctx.jobs.enqueue_task_cleanup(task_id)
        notifications = await due_deliveries(ctx)
        for delivery_id in notifications:
            await ctx.jobs.enqueue_notification(delivery_id)
        await forget_unbound(ctx)
    if reaped or pending or launches or deliveries or cleanups or notifications:
        log.info(
            "recovery: reaped %d turn(s), re-enqueued %d session(s), %d automation run(s), %d webhook delivery(ies) "
            "%d task cleanup(s) and %d notification(s)",
            len(reaped),
            len(pending),
            len(launches),
            len(deliveries),
            len(cleanups),
            len(notifications),
        )
    return {
        "reaped": len(reaped),
        "enqueued": len(pending),
        "launches": len(launches),
        "deliveries": len(deliveries),
        "cleanups": len(cleanups),
        "notifications": len(notifications),
    }


def recover_sync(settings: Settings) -> dict[str, int]:
    return asyncio.run(recover(settings))
