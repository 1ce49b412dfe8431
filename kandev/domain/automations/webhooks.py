"""Webhook deliveries: `POST /api/v1/automations/webhook/{automation_id}` verified, recorded and fanned out.

`receive` is all the HTTP handler does: check the automation and its `X-Webhook-Secret` (constant time,
against the decrypted secret), record the delivery in one short transaction and enqueue its job. The job
(`deliver`) fires the automation with the delivery's payload as trigger data, once: its dedup key is the
delivery's id, and the delivery records what the firing came to. A delivery whose job was lost (Redis
restarted between commit and enqueue) is found by `unprocessed_deliveries` and enqueued again by recovery.

The secret is never logged, stored in clear or echoed; refusals name no secret and no stored value.
"""

from __future__ import annotations

import hmac
import json
import logging
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from cryptography.fernet import InvalidToken
from sqlalchemy import insert, select, update
from sqlalchemy.exc import IntegrityError

from kandev.domain.automations.firing import Admission, fire
from kandev.domain.context import ServiceContext
from kandev.domain.errors import NotFoundError
from kandev.domain.workspace.secrets import cipher
from kandev.models import Automation, AutomationTrigger, WebhookDelivery
from kandev.models.base import new_id, utcnow
from kandev.models.enums import RunTriggerType, TriggerType

log = logging.getLogger("kandev.webhooks")
IDEMPOTENCY_KEY_LIMIT = 255
# Recovery leaves younger unprocessed deliveries to the job enqueued with them.
RECOVERY_GRACE = timedelta(seconds=30)
# Neither PostgreSQL's jsonb nor its text takes NUL or an unpaired surrogate; both become U+FFFD.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
_ID = re.compile(r"[A-Za-z0-9-]{1,36}")


class Refusal(StrEnum):
    UNKNOWN = "unknown"  # no such live automation, or it has no webhook trigger
    UNAUTHENTICATED = "unauthenticated"  # a missing or wrong secret
    DISABLED = "disabled"  # the automation or its webhook trigger is disabled
    BAD_KEY = "bad_key"  # an idempotency key longer than IDEMPOTENCY_KEY_LIMIT
    BAD_BODY = "bad_body"  # a verified body that is not what the endpoint takes


class WebhookRefused(Exception):
    def __init__(self, refusal: Refusal, message: str) -> None:
        super().__init__(message)
        self.refusal = refusal
        self.message = message


@dataclass(frozen=True)
class Receipt:
    delivery_id: str
    deduplicated: bool


def trigger_data(body: bytes) -> dict[str, Any]:
    """A JSON object body as it is; anything else (empty, not JSON, a JSON array or scalar, invalid UTF-8)
    as {"body": <the raw text, decoded as UTF-8 with replacement>}."""
    try:
        parsed = json.loads(body, parse_constant=_no_constant) if body.strip() else None
    except (ValueError, RecursionError):
        parsed = None
    if isinstance(parsed, dict):
        data: dict[str, Any] = _storable(parsed)
        return data
    return {"body": _UNSTORABLE.sub("\ufffd", body.decode("utf-8", errors="replace"))}


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _storable(value: Any) -> Any:
    if isinstance(value, str):
        return _UNSTORABLE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_storable(k): _storable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_storable(v) for v in value]
    return value


def _secret_matches(expected_ciphertext: bytes, server_key: bytes, offered: str | None) -> bool:
    try:
        expected = cipher(server_key).decrypt(expected_ciphertext)
    except InvalidToken:
        return False
    # Bytes, so a non-ASCII header value compares (in constant time) instead of raising.
    return hmac.compare_digest(expected, (offered or "").encode("utf-8", errors="replace"))


async def receive(
    ctx: ServiceContext, automation_id: str, secret: str | None, body: bytes, idempotency_key: str | None
) -> Receipt:
    """Verify and record one delivery, then enqueue its job. Raises WebhookRefused: UNKNOWN before the
    secret is looked at (an unknown id reveals nothing a 401 would not), UNAUTHENTICATED before anything
    about the automation's state, DISABLED only for a caller who holds the secret."""
    key = idempotency_key.strip() if idempotency_key else None
    if not _ID.fullmatch(automation_id):
        raise WebhookRefused(Refusal.UNKNOWN, "no webhook automation has that id")
    async with ctx.read() as db:
        # One statement: the live automation with its webhook trigger (an automation has at most one).
        found = (
            await db.execute(
                select(
                    Automation.webhook_secret_ciphertext,
                    Automation.enabled,
                    AutomationTrigger.id,
                    AutomationTrigger.enabled,
                )
                .join(AutomationTrigger, AutomationTrigger.automation_id == Automation.id)
                .where(
                    Automation.id == automation_id,
                    Automation.deleted_at.is_(None),
                    AutomationTrigger.type == TriggerType.WEBHOOK,
                )
                .limit(1)
            )
        ).first()
    ciphertext, automation_enabled, trigger_id, trigger_enabled = found or (None, False, None, False)
    if ciphertext is None:
        raise WebhookRefused(Refusal.UNKNOWN, "no webhook automation has that id")
    if not _secret_matches(ciphertext, ctx.settings.server_key, secret):
        raise WebhookRefused(Refusal.UNAUTHENTICATED, "the X-Webhook-Secret header is missing or wrong")
    if not automation_enabled or not trigger_enabled:
        what = "automation" if not automation_enabled else "automation's webhook trigger"
        raise WebhookRefused(Refusal.DISABLED, f"the {what} is disabled")
    if key is not None and (len(key) > IDEMPOTENCY_KEY_LIMIT or _UNSTORABLE.search(key)):
        limit = IDEMPOTENCY_KEY_LIMIT
        raise WebhookRefused(Refusal.BAD_KEY, f"the idempotency key must be text of at most {limit} characters")
    payload = trigger_data(body)
    delivery_id = new_id()
    try:
        async with ctx.db.transaction() as db:
            await db.execute(
                insert(WebhookDelivery).values(
                    id=delivery_id,
                    automation_id=automation_id,
                    trigger_id=trigger_id,
                    idempotency_key=key or None,
                    payload=payload,
                    received_at=utcnow(),
                )
            )
    except IntegrityError:
        # A repeated key (the unique constraint decides, so concurrent repeats record one delivery).
        if not key:
            raise
        async with ctx.read() as db:
            held = await _holder(db, automation_id, key)
        if held is None:  # the automation was deleted (cascade) in between
            raise WebhookRefused(Refusal.UNKNOWN, "no webhook automation has that id") from None
        return Receipt(held, True)
    try:
        await ctx.jobs.enqueue_webhook_delivery(delivery_id)
    except Exception:
        # Recorded is what 202 promises; recovery enqueues it again.
        log.warning("webhook delivery %s recorded but not enqueued; recovery will enqueue it", delivery_id)
    return Receipt(delivery_id, False)


async def _holder(db: Any, automation_id: str, key: str) -> str | None:
    held: str | None = await db.scalar(
        select(WebhookDelivery.id).where(
            WebhookDelivery.automation_id == automation_id, WebhookDelivery.idempotency_key == key
        )
    )
    return held


async def deliver(ctx: ServiceContext, delivery_id: str) -> str:
    """The delivery job: fire once (dedup key `webhook:<delivery id>`) and record the outcome. A job run
    again finds the delivery processed, or fire answers DEDUPLICATED with the run the first one wrote."""
    async with ctx.read() as db:
        delivery = await db.get(WebhookDelivery, delivery_id)
        if delivery is None:
            return "gone"
        if delivery.processed_at is not None:
            return "already processed"
        automation_id, trigger_id, payload = delivery.automation_id, delivery.trigger_id, delivery.payload
    run_id: str | None = None
    if trigger_id is None:  # the webhook trigger was removed after the delivery was accepted
        outcome = "refused"
    else:
        try:
            fired = await fire(
                ctx,
                automation_id,
                trigger_id=trigger_id,
                trigger_type=RunTriggerType.WEBHOOK,
                data=payload,
                dedup_key=f"webhook:{delivery_id}",
            )
        except NotFoundError:
            outcome = "gone"
        else:
            outcome, run_id = str(fired.admission), fired.run_id
    # The key is this delivery's own: DEDUPLICATED means another run of this job fired it, and that is
    # what the delivery came to, whichever of the two records it first.
    recorded = str(Admission.FIRED) if outcome == Admission.DEDUPLICATED else outcome
    async with ctx.db.transaction() as db:
        await db.execute(
            update(WebhookDelivery)
            .where(WebhookDelivery.id == delivery_id, WebhookDelivery.processed_at.is_(None))
            .values(processed_at=utcnow(), run_id=run_id, outcome=recorded)
        )
    return outcome


async def unprocessed_deliveries(ctx: ServiceContext, received_before: datetime | None = None) -> list[str]:
    """Deliveries not processed yet that were received before `received_before` (default: RECOVERY_GRACE
    ago, so a delivery whose job is merely queued is left alone), oldest first."""
    cutoff = received_before or utcnow() - RECOVERY_GRACE
    async with ctx.read() as db:
        rows = await db.scalars(
            select(WebhookDelivery.id)
            .where(WebhookDelivery.processed_at.is_(None), WebhookDelivery.received_at < cutoff)
            .order_by(WebhookDelivery.received_at)
            .limit(10_000)
        )
        return list(rows)
