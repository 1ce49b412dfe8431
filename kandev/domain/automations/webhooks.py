"""Webhook deliveries: `POST /api/v1/automations/webhook/{automation_id}` verified, recorded and admitted.

The HTTP handler only hands the delivery to the process's intake (webhook_intake), which verifies it, records
it and admits its firing in one transaction, so the answer says what it came to (fired, skipped at the cap,
or deduplicated by its key). The job (`deliver`) remains for deliveries recorded before they were admitted at
intake: it fires the automation once (its dedup key is the delivery's id) and records the outcome; recovery
finds such deliveries with `unprocessed_deliveries`.

Admitting webhook deliveries in the transaction that records them, by fire's rules (firing.new_run): in
arrival order, a triggered run while the automation has a free slot (the batch's own runs counted), else a
skipped run with the reason; each delivery records what it came to. A batch costs a few statements, not a
few per delivery: one count of the automations' active runs, one insert of the runs, one update of the
deliveries, one insert of the skips' thread entries."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from sqlalchemy import func, insert, select, update

from kandev.domain.automations.firing import Admission, fire, new_run
from kandev.domain.automations.run_events import emit_runs_created
from kandev.domain.automations.runs import active_sql
from kandev.domain.context import ServiceContext, UnitOfWork
from kandev.domain.errors import NotFoundError, ValidationError
from kandev.domain.validation import decode_json
from kandev.models import Automation, AutomationRun, WebhookDelivery
from kandev.models.base import utcnow
from kandev.models.enums import RunStatus, RunTriggerType

log = logging.getLogger("kandev.webhooks")
# Recovery leaves younger unprocessed deliveries to the job enqueued with them.
RECOVERY_GRACE = timedelta(seconds=30)
# Neither PostgreSQL's jsonb nor its text takes NUL or an unpaired surrogate; both become U+FFFD.
UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


class Refusal(StrEnum):
    UNKNOWN = "unknown"  # no such live automation, or it has no webhook trigger
    UNAUTHENTICATED = "unauthenticated"  # a missing or wrong secret or signature
    STALE = "stale"  # a signature that verifies, made outside the 5-minute window
    REPLAYED = "replayed"  # a signature that verifies and was accepted before
    RATE_LIMITED = "rate_limited"  # another wrong secret from a source that sent too many (wrong_secrets)
    DISABLED = "disabled"  # the automation or its webhook trigger is disabled
    BAD_KEY = "bad_key"  # an idempotency key longer than IDEMPOTENCY_KEY_LIMIT
    BAD_BODY = "bad_body"  # a verified body that is not what the endpoint takes


class WebhookRefused(Exception):
    def __init__(self, refusal: Refusal, message: str, *, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.refusal = refusal
        self.message = message
        self.retry_after = retry_after  # RATE_LIMITED: seconds until wrong secrets are counted afresh


@dataclass(frozen=True)
class Receipt:
    """What a delivery came to: its firing's admission (fired, skipped, deduplicated) and why it did not run."""

    delivery_id: str
    deduplicated: bool
    admission: str
    reason: str | None = None
    run_id: str | None = None


def trigger_data(body: bytes) -> Any:
    """Any valid JSON body as it is (an object, an array or a scalar: `{{webhook.0.x}}` reads an array's first
    item); anything else (empty, not UTF-8, not JSON, too deep to walk) as {"body": <the raw text, decoded as
    UTF-8 with replacement>}."""
    if body.strip():
        try:
            return _storable(decode_json(body))
        except ValidationError:
            pass
    return {"body": UNSTORABLE.sub("\ufffd", body.decode("utf-8", errors="replace"))}


def _storable(value: Any) -> Any:
    if isinstance(value, str):
        return UNSTORABLE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_storable(k): _storable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_storable(v) for v in value]
    return value


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


async def deliver_all(ctx: ServiceContext, delivery_ids: list[str]) -> dict[str, str]:
    """The job of deliveries recorded together: each is delivered on its own, so one that fails neither
    stops nor repeats the others; the job fails afterwards (recovery enqueues what is left unprocessed)."""
    outcomes: dict[str, str] = {}
    failed = 0
    for delivery_id in delivery_ids:
        try:
            outcomes[delivery_id] = await deliver(ctx, delivery_id)
        except Exception:
            log.exception("webhook delivery %s failed; recovery delivers it again", delivery_id)
            outcomes[delivery_id] = "error"
            failed += 1
    if failed:
        raise RuntimeError(f"{failed} of {len(delivery_ids)} webhook deliveries failed (logged)")
    return outcomes


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


@dataclass(frozen=True)
class Admitted:
    """A recorded delivery to admit."""

    delivery_id: str
    automation_id: str
    trigger_id: str | None
    payload: Any


async def admit(uow: UnitOfWork, deliveries: list[Admitted], sqlite: bool) -> dict[str, AutomationRun]:
    """Each delivery's run (triggered or skipped), by delivery id, written with the deliveries' outcomes."""
    db = uow.db
    ids = sorted({d.automation_id for d in deliveries})
    if not sqlite:
        # Held to the commit, as fire holds it: concurrent firings of an automation count each other.
        await db.execute(select(Automation.id).where(Automation.id.in_(ids)).with_for_update())
    # The automations and their active runs in one statement (a batch's statements are its latency).
    active_count = (
        select(func.count())
        .select_from(AutomationRun)
        .where(AutomationRun.automation_id == Automation.id, active_sql())
        .correlate(Automation)
        .scalar_subquery()
    )
    rows = (await db.execute(select(Automation, active_count).where(Automation.id.in_(ids)))).all()
    automations = {automation.id: automation for automation, _ in rows}
    active: dict[str, int] = {automation.id: count or 0 for automation, count in rows}
    now = utcnow()
    runs: dict[str, AutomationRun] = {}
    for delivery in deliveries:
        automation = automations[delivery.automation_id]
        count = active.get(automation.id, 0)
        key = f"webhook:{delivery.delivery_id}"
        run = new_run(automation, delivery.trigger_id, RunTriggerType.WEBHOOK, now, delivery.payload, key, count, now)
        if run.status == RunStatus.TRIGGERED:
            active[automation.id] = count + 1
        runs[delivery.delivery_id] = run
    # Core, not the ORM: its per-object bookkeeping would cost more than the statement.
    columns = [c.key for c in AutomationRun.__table__.columns]
    await db.execute(insert(AutomationRun), [{name: getattr(run, name) for name in columns} for run in runs.values()])
    outcomes = [
        {"id": delivery_id, "processed_at": now, "run_id": run.id, "outcome": outcome_of(run)}
        for delivery_id, run in runs.items()
    ]
    await db.execute(update(WebhookDelivery), outcomes)
    by_workspace: dict[str, list[AutomationRun]] = {}
    for delivery in deliveries:
        workspace_id = automations[delivery.automation_id].workspace_id
        by_workspace.setdefault(workspace_id, []).append(runs[delivery.delivery_id])
    for workspace_id, admitted in by_workspace.items():
        await emit_runs_created(uow, admitted, workspace_id)
    return runs


def outcome_of(run: AutomationRun) -> str:
    return (Admission.SKIPPED if run.status == RunStatus.SKIPPED else Admission.FIRED).value
