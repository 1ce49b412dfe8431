"""Recovery from the database, the only source of truth: reap turns whose worker died, and enqueue
again every session that has queued prompts, every admitted automation run not launched yet and every webhook
delivery not fired yet (a restarted Redis may have lost their jobs)."""

from __future__ import annotations

import asyncio
import logging

from kandev.config import Settings
from kandev.domain.automations.launch import runs_to_launch
from kandev.domain.automations.webhooks import unprocessed_deliveries
from kandev.domain.sessions.turns import reap_expired_turns, sessions_with_pending_work
from kandev.state import SYSTEM, provide_services

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
    if reaped or pending or launches or deliveries:
        log.info(
            "recovery: reaped %d turn(s), re-enqueued %d session(s), %d automation run(s) and %d webhook delivery(ies)",
            len(reaped),
            len(pending),
            len(launches),
            len(deliveries),
        )
    return {"reaped": len(reaped), "enqueued": len(pending), "launches": len(launches), "deliveries": len(deliveries)}


def recover_sync(settings: Settings) -> dict[str, int]:
    return asyncio.run(recover(settings))
