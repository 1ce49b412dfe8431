"""The durable outbox of GitHub firings: every GitHub trigger (PR poll, merged task PR, push and CI
webhooks) records the firing it decided in the transaction that decided it, and `deliver_pending` admits
each through `fire` and deletes it. A crash between the decision and the firing leaves the row, which the
next delivery fires (the dedup key makes a repeated attempt harmless); an attempt that raises is tried again
later with exponential backoff, up to MAX_ATTEMPTS.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.automations.firing import FireOutcome, fire
from kandev.domain.context import ServiceContext
from kandev.domain.errors import NotFoundError
from kandev.models import GithubPendingFiring
from kandev.models.base import new_id, utcnow

log = logging.getLogger("kandev.adapters.github.firings")

BACKOFF_SECONDS = 30.0
MAX_BACKOFF_SECONDS = 3600.0
MAX_ATTEMPTS = 20
BATCH = 100


def backoff(attempts: int) -> timedelta:
    """The wait after the `attempts`-th failed attempt: 30 s, 60 s, 120 s, … capped at an hour."""
    return timedelta(seconds=min(BACKOFF_SECONDS * 2 ** max(attempts - 1, 0), MAX_BACKOFF_SECONDS))


async def record_firing(
    db: AsyncSession,
    *,
    workspace_id: str,
    automation_id: str,
    trigger_id: str,
    trigger_type: str,
    dedup_key: str,
    data: Mapping[str, Any],
) -> bool:
    """Add the firing to the caller's transaction unless the same (automation, key) is already pending.

    A concurrent writer of the same key makes the caller's commit fail on the unique constraint: the callers
    treat that as "a concurrent pass got there first"."""
    pending = await db.scalar(
        select(GithubPendingFiring.id).where(
            GithubPendingFiring.automation_id == automation_id, GithubPendingFiring.dedup_key == dedup_key
        )
    )
    if pending is not None:
        return False
    for row in db.new:
        if isinstance(row, GithubPendingFiring) and (row.automation_id, row.dedup_key) == (automation_id, dedup_key):
            return False
    db.add(
        GithubPendingFiring(
            id=new_id(),
            workspace_id=workspace_id,
            automation_id=automation_id,
            trigger_id=trigger_id,
            trigger_type=trigger_type,
            dedup_key=dedup_key,
            data=dict(data),
            attempts=0,
            next_attempt_at=utcnow(),
        )
    )
    return True


async def deliver_pending(
    ctx: ServiceContext, workspace_id: str | None = None, *, now: datetime | None = None
) -> list[FireOutcome]:
    """Fire every pending firing that is due (of one workspace, or all); the outcomes of those admitted.

    `fire` answering anything (fired, skipped at the cap, deduplicated, refused) settles the row; only an
    exception keeps it, with the next attempt pushed back."""
    moment = now or utcnow()
    query = select(GithubPendingFiring).where(GithubPendingFiring.next_attempt_at <= moment)
    if workspace_id is not None:
        query = query.where(GithubPendingFiring.workspace_id == workspace_id)
    async with ctx.read() as db:
        due = list(
            await db.scalars(query.order_by(GithubPendingFiring.created_at, GithubPendingFiring.id).limit(BATCH))
        )
    outcomes: list[FireOutcome] = []
    for row in due:
        try:
            outcome = await fire(
                ctx,
                row.automation_id,
                trigger_id=row.trigger_id,
                trigger_type=row.trigger_type,
                data=row.data,
                dedup_key=row.dedup_key,
            )
        except NotFoundError:
            log.info("automation %s is gone: dropping its pending GitHub firing %s", row.automation_id, row.dedup_key)
            await _settle(ctx, row.id)
            continue
        except Exception as error:
            await _failed(ctx, row, error, moment)
            continue
        await _settle(ctx, row.id)
        outcomes.append(outcome)
    return outcomes


async def _settle(ctx: ServiceContext, row_id: str) -> None:
    async with ctx.unit_of_work() as uow:
        await uow.db.execute(delete(GithubPendingFiring).where(GithubPendingFiring.id == row_id))


async def _failed(ctx: ServiceContext, row: GithubPendingFiring, error: Exception, moment: datetime) -> None:
    attempts = row.attempts + 1
    if attempts >= MAX_ATTEMPTS:
        log.error(
            "giving up on GitHub firing %s of automation %s after %d attempts: %s",
            row.dedup_key,
            row.automation_id,
            attempts,
            type(error).__name__,
        )
        await _settle(ctx, row.id)
        return
    log.warning(
        "GitHub firing %s of automation %s failed (attempt %d), retrying later",
        row.dedup_key,
        row.automation_id,
        attempts,
        exc_info=True,
    )
    async with ctx.unit_of_work() as uow:
        stored = await uow.db.get(GithubPendingFiring, row.id)
        if stored is not None:
            stored.attempts = attempts
            stored.next_attempt_at = moment + backoff(attempts)
            stored.last_error = f"{type(error).__name__}: {error}"[:500]
