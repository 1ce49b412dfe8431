"""Accepting webhook deliveries with group commit: what the HTTP handler calls.

Each delivery is verified (the automation and its `X-Webhook-Secret`, in constant time), recorded and
admitted before it is answered 202, exactly as if alone: in the transaction that records it, its firing is
admitted by fire's rules (firing.new_run): a triggered run while the automation has a free slot, else a
skipped run with the reason, so the answer tells a sender whether its delivery runs. Deliveries that arrive
while a batch is being written wait for the next batch and go together: one read finds their automations,
one transaction records them (`INSERT … ON CONFLICT DO NOTHING RETURNING`, so a repeated idempotency key is
answered with the delivery that holds it, deduplicated), counts their automations' active runs once and
admits them, and the fired runs' launch jobs are enqueued after commit (recovery launches a triggered run
whose job was lost). A burst then costs a few statements and a commit per batch instead of per delivery.

The secret is never logged, stored in clear or echoed; refusals name no secret and no stored value.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import re
from dataclasses import dataclass, field
from typing import Any

from cryptography.fernet import InvalidToken
from sqlalchemy import func, insert, select, tuple_, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.db import dialect_insert
from kandev.domain.automations.firing import Admission, deduplicated_reason, new_run
from kandev.domain.automations.run_events import emit_runs_created
from kandev.domain.automations.runs import active_sql
from kandev.domain.automations.webhooks import UNSTORABLE, Receipt, Refusal, WebhookRefused, trigger_data
from kandev.domain.context import ServiceContext, UnitOfWork
from kandev.domain.workspace.secrets import cipher
from kandev.models import Automation, AutomationRun, AutomationTrigger, WebhookDelivery
from kandev.models.base import new_id, utcnow
from kandev.models.enums import RunStatus, RunTriggerType, TriggerType

log = logging.getLogger("kandev.webhooks")
IDEMPOTENCY_KEY_LIMIT = 255
# Large enough that a burst on loopback fills it, small enough that one statement's parameters stay modest.
BATCH_LIMIT = 200
_ID = re.compile(r"[A-Za-z0-9-]{1,36}")
_SECRET_CACHE_LIMIT = 1024
# An automation's webhook secret ciphertext, whether it is enabled, its webhook trigger's id and whether that is.
_Found = tuple[bytes | None, bool, str | None, bool]


@dataclass
class _Arrival:
    automation_id: str
    secret: str | None
    key: str | None
    payload: Any  # the trigger data: any JSON value (webhooks.trigger_data)
    answer: asyncio.Future[Receipt] = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    delivery_id: str = field(default_factory=new_id)
    trigger_id: str | None = None
    # Its firing, once admitted: the run written and whether it was triggered or skipped (and why).
    run: AutomationRun | None = None

    def receipt(self) -> Receipt:
        assert self.run is not None
        skipped = self.run.status == RunStatus.SKIPPED
        admission = Admission.SKIPPED if skipped else Admission.FIRED
        return Receipt(self.delivery_id, False, admission.value, self.run.reason if skipped else None, self.run.id)

    def settle(self, receipt: Receipt | None = None, refused: BaseException | None = None) -> None:
        if self.answer.done():  # its caller went away (a closed connection); the outcome stands anyway
            return
        if refused is not None:
            self.answer.set_exception(refused)
        else:
            self.answer.set_result(receipt)  # type: ignore[arg-type]


class WebhookIntake:
    """One per process and event loop (the app holds it): the deliveries it was handed, batched."""

    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx
        self._waiting: list[_Arrival] = []
        self._writer: asyncio.Task[None] | None = None
        # Decrypted secrets by ciphertext: a rotation writes a new ciphertext, so an old entry never matches.
        self._secrets: dict[bytes, bytes | None] = {}

    async def receive(
        self, automation_id: str, secret: str | None, body: bytes, idempotency_key: str | None
    ) -> Receipt:
        """Verify, record and admit one delivery, then enqueue its run's launch. Raises WebhookRefused: UNKNOWN
        before the secret is looked at (an unknown id reveals nothing a 401 would not), UNAUTHENTICATED before anything
        about the automation's state, DISABLED and BAD_KEY only for a caller who holds the secret."""
        if not _ID.fullmatch(automation_id):
            raise WebhookRefused(Refusal.UNKNOWN, "no webhook automation has that id")
        key = idempotency_key.strip() if idempotency_key else None
        arrival = _Arrival(automation_id, secret, key or None, trigger_data(body))
        self._waiting.append(arrival)
        if self._writer is None:
            self._writer = asyncio.create_task(self._write_while_waiting())
        return await arrival.answer

    async def _write_while_waiting(self) -> None:
        """Record batch after batch while deliveries wait. A batch's enqueue overlaps the next batch's
        writes (at most one enqueue in flight, so batches are launched in the order they were recorded)."""
        enqueuing: asyncio.Task[None] | None = None
        try:
            while self._waiting or enqueuing is not None:
                if not self._waiting:
                    await _finished(enqueuing)
                    enqueuing = None
                    continue
                batch, self._waiting = self._waiting[:BATCH_LIMIT], self._waiting[BATCH_LIMIT:]
                fresh = await self._recorded(batch)
                await _finished(enqueuing)
                enqueuing = asyncio.create_task(self._enqueue(fresh)) if fresh else None
        finally:
            self._writer = None

    async def _recorded(self, batch: list[_Arrival]) -> list[_Arrival]:
        """Verify and record the batch, answering every delivery but the fresh ones, which are returned."""
        try:
            accepted, recorded = await self._verified_and_recorded(batch)
            fresh = [a for a in accepted if a.delivery_id in recorded]
            repeats = [a for a in accepted if a.delivery_id not in recorded and not a.answer.done()]
            if repeats:
                await self._answer_repeats(repeats)
            return fresh
        except Exception as error:
            log.exception("recording a batch of %d webhook deliveries failed", len(batch))
            for arrival in batch:
                arrival.settle(refused=error)
            return []

    async def _enqueue(self, fresh: list[_Arrival]) -> None:
        """Enqueue the launch of the recorded deliveries' triggered runs, then answer them 202."""
        fired = [a.run.id for a in fresh if a.run is not None and a.run.status == RunStatus.TRIGGERED]
        try:
            for run_id in fired:
                await self.ctx.jobs.enqueue_automation_run(run_id)
        except Exception:
            # Admitted is what 202 promises; recovery launches a triggered run whose job was lost.
            log.warning("%d webhook runs admitted but not all enqueued; recovery launches them", len(fired))
        for arrival in fresh:
            arrival.settle(arrival.receipt())

    async def _verified_and_recorded(self, batch: list[_Arrival]) -> tuple[list[_Arrival], set[str]]:
        """Verify the batch and insert what may be recorded, in one transaction (one round of BEGIN and
        COMMIT per batch); the others are answered with their refusal. Returns (accepted, recorded ids)."""
        accepted: list[_Arrival] = []
        try:
            async with self.ctx.unit_of_work() as uow:
                found = await self._webhook_automations(uow.db, {a.automation_id for a in batch})
                accepted = self._verified(batch, found)
                return accepted, await self._record(uow, accepted) if accepted else set()
        except IntegrityError:
            # Only an automation removed between the read and the insert gets here (PostgreSQL; a repeated
            # key does not conflict into an error): record one by one, so the others are not refused with it.
            recorded: set[str] = set()
            for arrival in accepted:
                arrival.run = None
                try:
                    async with self.ctx.unit_of_work() as uow:
                        recorded |= await self._record(uow, [arrival])
                except IntegrityError:
                    arrival.settle(refused=WebhookRefused(Refusal.UNKNOWN, "no webhook automation has that id"))
            return accepted, recorded

    def _verified(self, batch: list[_Arrival], found: dict[str, _Found]) -> list[_Arrival]:
        """The batch's deliveries that may be recorded; the others are answered with their refusal."""
        accepted = []
        for arrival in batch:
            try:
                arrival.trigger_id = self._check(arrival, found.get(arrival.automation_id))
            except WebhookRefused as refused:
                arrival.settle(refused=refused)
            else:
                accepted.append(arrival)
        return accepted

    @staticmethod
    async def _webhook_automations(db: AsyncSession, automation_ids: set[str]) -> dict[str, _Found]:
        """The live automations with their webhook trigger (an automation has at most one), in one statement."""
        rows = await db.execute(
            select(
                Automation.id,
                Automation.webhook_secret_ciphertext,
                Automation.enabled,
                AutomationTrigger.id,
                AutomationTrigger.enabled,
            )
            .join(AutomationTrigger, AutomationTrigger.automation_id == Automation.id)
            .where(
                Automation.id.in_(automation_ids),
                Automation.deleted_at.is_(None),
                AutomationTrigger.type == TriggerType.WEBHOOK,
            )
        )
        return {row[0]: (row[1], row[2], row[3], row[4]) for row in rows}

    def _check(self, arrival: _Arrival, found: _Found | None) -> str:
        """The webhook trigger's id, or the refusal, in the order that reveals nothing to a caller without
        the secret."""
        ciphertext, automation_enabled, trigger_id, trigger_enabled = found or (None, False, None, False)
        if ciphertext is None:
            raise WebhookRefused(Refusal.UNKNOWN, "no webhook automation has that id")
        expected = self._secret(ciphertext)
        # Bytes, so a non-ASCII header value compares (in constant time) instead of raising.
        offered = (arrival.secret or "").encode("utf-8", errors="replace")
        if expected is None or not hmac.compare_digest(expected, offered):
            raise WebhookRefused(Refusal.UNAUTHENTICATED, "the X-Webhook-Secret header is missing or wrong")
        if not automation_enabled or not trigger_enabled:
            what = "automation" if not automation_enabled else "automation's webhook trigger"
            raise WebhookRefused(Refusal.DISABLED, f"the {what} is disabled")
        key = arrival.key
        if key is not None and (len(key) > IDEMPOTENCY_KEY_LIMIT or UNSTORABLE.search(key)):
            limit = IDEMPOTENCY_KEY_LIMIT
            raise WebhookRefused(Refusal.BAD_KEY, f"the idempotency key must be text of at most {limit} characters")
        return str(trigger_id)

    def _secret(self, ciphertext: bytes) -> bytes | None:
        if ciphertext not in self._secrets:
            if len(self._secrets) >= _SECRET_CACHE_LIMIT:
                self._secrets.clear()
            try:
                self._secrets[ciphertext] = cipher(self.ctx.settings.server_key).decrypt(ciphertext)
            except InvalidToken:
                self._secrets[ciphertext] = None
        return self._secrets[ciphertext]

    async def _record(self, uow: UnitOfWork, arrivals: list[_Arrival]) -> set[str]:
        """Insert the deliveries and admit the fresh ones' firings; the ids actually written."""
        recorded = await self._insert(uow.db, arrivals)
        fresh = [a for a in arrivals if a.delivery_id in recorded]
        if fresh:
            await self._admit(uow, fresh)
        return recorded

    async def _admit(self, uow: UnitOfWork, fresh: list[_Arrival]) -> None:
        """Admit the fresh deliveries as `fire` admits a firing (its rules: firing.new_run), in their recording
        transaction: in arrival order, a triggered run while the automation has a free slot (the batch's own
        runs counted), else a skipped run with the reason; each delivery records what it came to."""
        db = uow.db
        ids = sorted({a.automation_id for a in fresh})
        if not self.ctx.db.is_sqlite:
            # Held to the commit, as fire holds it: concurrent firings of an automation count each other.
            await db.execute(select(Automation.id).where(Automation.id.in_(ids)).with_for_update())
        automations = {row.id: row for row in await db.scalars(select(Automation).where(Automation.id.in_(ids)))}
        counted = select(AutomationRun.automation_id, func.count()).where(
            AutomationRun.automation_id.in_(ids), active_sql()
        )
        active: dict[str, int] = {
            row[0]: row[1] for row in await db.execute(counted.group_by(AutomationRun.automation_id))
        }
        now = utcnow()
        for arrival in fresh:
            automation = automations[arrival.automation_id]
            key = f"webhook:{arrival.delivery_id}"
            run = new_run(
                automation,
                arrival.trigger_id,
                RunTriggerType.WEBHOOK,
                now,
                arrival.payload,
                key,
                active.get(automation.id, 0),
                now,
            )
            if run.status == RunStatus.TRIGGERED:
                active[automation.id] = active.get(automation.id, 0) + 1
            arrival.run = run
        # One statement for the batch's runs (Core: the ORM's per-object bookkeeping would cost more).
        columns = [c.key for c in AutomationRun.__table__.columns]
        runs = [{name: getattr(a.run, name) for name in columns} for a in fresh if a.run is not None]
        await db.execute(insert(AutomationRun), runs)
        await db.execute(
            update(WebhookDelivery),
            [
                {"id": a.delivery_id, "processed_at": now, "run_id": a.run.id, "outcome": a.receipt().admission}
                for a in fresh
                if a.run is not None
            ],
        )
        by_workspace: dict[str, list[AutomationRun]] = {}
        for arrival in fresh:
            assert arrival.run is not None
            by_workspace.setdefault(automations[arrival.automation_id].workspace_id, []).append(arrival.run)
        for workspace_id, admitted in by_workspace.items():
            await emit_runs_created(uow, admitted, workspace_id)

    async def _insert(self, db: AsyncSession, arrivals: list[_Arrival]) -> set[str]:
        """Insert the deliveries; the ids actually written (a repeated key writes nothing: the unique
        constraint decides, so concurrent repeats across processes record one delivery)."""
        # One compiled statement whatever the batch's size (executemany with RETURNING batches the rows).
        statement = (
            dialect_insert(db, WebhookDelivery)
            .on_conflict_do_nothing(index_elements=["automation_id", "idempotency_key"])
            .returning(WebhookDelivery.id)
        )
        received_at = utcnow()
        rows = [
            {
                "id": a.delivery_id,
                "automation_id": a.automation_id,
                "trigger_id": a.trigger_id,
                "idempotency_key": a.key,
                "payload": a.payload,
                "received_at": received_at,
            }
            for a in arrivals
        ]
        connection = await db.connection()
        return set((await connection.execute(statement, rows)).scalars())

    async def _answer_repeats(self, repeats: list[_Arrival]) -> None:
        """A repeated key is answered with the delivery that holds it, and nothing is enqueued."""
        pairs = {(a.automation_id, a.key) for a in repeats}
        async with self.ctx.read() as db:
            rows = await db.execute(
                select(
                    WebhookDelivery.automation_id,
                    WebhookDelivery.idempotency_key,
                    WebhookDelivery.id,
                    WebhookDelivery.outcome,
                    WebhookDelivery.run_id,
                ).where(tuple_(WebhookDelivery.automation_id, WebhookDelivery.idempotency_key).in_(pairs))
            )
            holders = {(row[0], row[1]): (row[2], row[3], row[4]) for row in rows}
        for arrival in repeats:
            held = holders.get((arrival.automation_id, arrival.key))
            if held is None:  # the automation was deleted (cascade) in between
                arrival.settle(refused=WebhookRefused(Refusal.UNKNOWN, "no webhook automation has that id"))
                continue
            delivery_id, outcome, run_id = held
            reason = deduplicated_reason(f"webhook:{delivery_id}")
            if outcome not in (None, Admission.FIRED):
                reason = f"already received for this delivery, which was {outcome}"
            arrival.settle(Receipt(delivery_id, True, Admission.DEDUPLICATED.value, reason, run_id))


async def _finished(task: asyncio.Task[None] | None) -> None:
    if task is not None:
        await task
