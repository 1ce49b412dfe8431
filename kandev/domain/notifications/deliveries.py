"""Deliveries: what happened in a workspace (a person is needed, a turn failed, a task reached review) becomes one
delivery row per channel that wants it, written in the transaction of the event itself, so it is never lost and
never owed twice; a job on the default queue sends it through the registered notifier.

- A job claims its row by moving `next_attempt_at` past its own run (compare-and-set, counting the attempt), so
  a duplicate job does nothing and a job that died mid-way (a killed worker) is taken up again once the claim
  lapses; the notification keeps its key on every attempt (a generic webhook receives it as Idempotency-Key).
- A failure is retried with exponential backoff up to KANDEV_NOTIFICATION_ATTEMPTS, then the row is FAILED; the
  channel keeps its last outcome (error, duration) for the settings page.
- Recovery (`due_deliveries`, on every scheduler tick and process start) enqueues every due row again.
Turns never wait on any of it: the event's transaction only writes rows."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import select, update
from sqlalchemy.engine import CursorResult

from kandev.domain.context import ServiceContext, UnitOfWork
from kandev.domain.events import TaskNeedsPerson, TaskReachedReview, TurnFailed
from kandev.domain.notifications.channels import (
    NEEDS_INPUT,
    REVIEW_READY,
    TURN_FAILED,
    record_outcome,
    target_of,
)
from kandev.domain.ports import NOTIFIER, Notification, NotificationFailed
from kandev.models import NotificationChannel, NotificationDelivery, Task
from kandev.models.base import new_id, utcnow
from kandev.models.enums import HIDDEN_ORIGINS
from kandev.platform.settings import Settings

log = logging.getLogger("kandev.notifications")

PENDING, DELIVERED, FAILED = "PENDING", "DELIVERED", "FAILED"
BATCH = 500
MAX_BACKOFF_SECONDS = 3600.0


async def task_needs_person(ctx: ServiceContext, uow: UnitOfWork, event: TaskNeedsPerson) -> None:
    asked = "asks permission" if event.what == "permission" else "asks a question"
    await _owe(ctx, uow, event.task_id, NEEDS_INPUT, event.key, f"needs you: the agent {asked}", event.detail)


async def turn_failed(ctx: ServiceContext, uow: UnitOfWork, event: TurnFailed) -> None:
    await _owe(ctx, uow, event.task_id, TURN_FAILED, f"turn_failed:{event.turn_id}", "a turn failed", event.error)


async def task_reached_review(ctx: ServiceContext, uow: UnitOfWork, event: TaskReachedReview) -> None:
    await _owe(ctx, uow, event.task_id, REVIEW_READY, event.key, "is ready for review", "")


async def _owe(
    ctx: ServiceContext, uow: UnitOfWork, task_id: str, event: str, key: str, headline: str, detail: str
) -> None:
    """One delivery per enabled channel of the task's workspace that wants `event` (hidden tasks: none)."""
    task = await uow.db.get(Task, task_id)
    if task is None or task.deleted_at is not None or task.origin in HIDDEN_ORIGINS:
        return
    channels = [
        channel
        for channel in await uow.db.scalars(
            select(NotificationChannel).where(
                NotificationChannel.workspace_id == task.workspace_id, NotificationChannel.enabled.is_(True)
            )
        )
        if event in (channel.events or [])
    ]
    if not channels:
        return
    link = f"{ctx.settings.resolved_public_url()}/tasks/{task.id}"
    title = f"{task.title} {headline}"[:300]
    body = "\n\n".join(part for part in (detail.strip()[:2000], link) if part)
    now = utcnow()
    created = []
    for channel in channels:
        delivery = NotificationDelivery(
            id=new_id(),
            channel_id=channel.id,
            event_key=key[:120],
            event=event,
            task_id=task.id,
            title=title,
            body=body,
            state=PENDING,
            attempts=0,
            next_attempt_at=now,
            created_at=now,
        )
        uow.db.add(delivery)
        created.append(delivery.id)
    await uow.db.flush()
    for delivery_id in created:
        uow.then(lambda delivery_id=delivery_id: ctx.jobs.enqueue_notification(delivery_id))  # type: ignore[misc]


def backoff(settings: Settings, attempts: int) -> timedelta:
    """The wait after the `attempts`-th failed attempt: the setting, doubling, capped at an hour."""
    base = settings.notification_backoff_seconds
    return timedelta(seconds=min(base * 2 ** max(attempts - 1, 0), MAX_BACKOFF_SECONDS))


def claim_seconds(settings: Settings) -> float:
    """How long a claimed attempt may take before it counts as lost (its worker died): a few timeouts."""
    return settings.notification_timeout_seconds * 3 + 5


async def due_deliveries(ctx: ServiceContext, now: datetime | None = None) -> list[str]:
    """Deliveries pending and due (never claimed, their claim lapsed, or their backoff over)."""
    async with ctx.read() as db:
        rows = await db.scalars(
            select(NotificationDelivery.id)
            .where(NotificationDelivery.state == PENDING, NotificationDelivery.next_attempt_at <= (now or utcnow()))
            .order_by(NotificationDelivery.next_attempt_at)
            .limit(BATCH)
        )
        return list(rows)


async def deliver(ctx: ServiceContext, delivery_id: str) -> str:
    """One attempt at one delivery, when it is due; what happened (the job's result)."""
    moment = utcnow()
    claimed = await _claim(ctx, delivery_id, moment)
    if claimed is None:
        return "nothing to do"
    delivery, channel_id = claimed
    async with ctx.read() as db:
        channel = await db.get(NotificationChannel, channel_id)
        if channel is None or not channel.enabled:
            await _finish(ctx, delivery_id, error="the channel was disabled", final=True)
            return "channel disabled"
        url, policy = target_of(ctx, channel)
    note = Notification(delivery.title, delivery.body, key=delivery.key)
    started = time.perf_counter()
    reason: str | None = None
    try:
        await asyncio.to_thread(NOTIFIER.get().send, url, note, policy, ctx.settings.notification_timeout_seconds)
    except NotificationFailed as error:
        reason = str(error)
    elapsed = round((time.perf_counter() - started) * 1000)
    final = reason is None or delivery.attempts >= ctx.settings.notification_attempts
    await _finish(ctx, delivery_id, error=reason, final=final, duration_ms=elapsed)
    if reason is None:
        return "delivered"
    log.warning("notification %s: attempt %d failed: %s", delivery_id, delivery.attempts, reason)
    return "failed" if final else "retrying"


@dataclass(frozen=True)
class _Claimed:
    title: str
    body: str
    key: str
    attempts: int


async def _claim(ctx: ServiceContext, delivery_id: str, moment: datetime) -> tuple[_Claimed, str] | None:
    async with ctx.unit_of_work() as uow:
        result = cast(
            CursorResult[Any],
            await uow.db.execute(
                update(NotificationDelivery)
                .where(
                    NotificationDelivery.id == delivery_id,
                    NotificationDelivery.state == PENDING,
                    NotificationDelivery.next_attempt_at <= moment,
                )
                .values(
                    next_attempt_at=moment + timedelta(seconds=claim_seconds(ctx.settings)),
                    attempts=NotificationDelivery.attempts + 1,
                )
                .execution_options(synchronize_session=False)
            ),
        )
        if not result.rowcount:
            return None
        row = await uow.db.get(NotificationDelivery, delivery_id, populate_existing=True)
        assert row is not None
        return _Claimed(row.title, row.body, row.id, row.attempts), row.channel_id


async def _finish(
    ctx: ServiceContext, delivery_id: str, *, error: str | None, final: bool, duration_ms: int | None = None
) -> None:
    async with ctx.unit_of_work() as uow:
        row = await uow.db.get(NotificationDelivery, delivery_id)
        if row is None or row.state != PENDING:
            return
        now = utcnow()
        if error is None:
            row.state, row.delivered_at, row.last_error = DELIVERED, now, None
        else:
            row.last_error = error[:500]
            if final:
                row.state = FAILED
            else:
                row.next_attempt_at = now + backoff(ctx.settings, row.attempts)
        channel = await uow.db.get(NotificationChannel, row.channel_id)
        if channel is not None and duration_ms is not None:
            record_outcome(channel, error, duration_ms)
