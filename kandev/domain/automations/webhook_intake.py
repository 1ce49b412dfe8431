"""Accepting webhook deliveries with group commit: what the HTTP handler calls.

Each delivery is verified (the automation and its `X-Webhook-Secret`, or its signature: webhook_signatures,
in constant time), recorded and admitted before it is answered 202, exactly as if alone: in the transaction
that records it, its firing is admitted by fire's rules (firing.new_run), a triggered run while the automation
has a free slot, else a skipped run with the reason, so the answer tells a sender whether its delivery runs.
Deliveries that arrive while a batch is being written wait for the next batch and go together: one read finds
their automations, one transaction records them (`INSERT … ON CONFLICT DO NOTHING RETURNING`, so a repeated
idempotency key is answered with the delivery that holds it, deduplicated), counts their automations' active
runs once and admits them, and the fired runs' launch jobs are enqueued after commit (recovery launches a
triggered run whose job was lost). A burst then costs a few statements and a commit per batch instead of per
delivery, and a lone delivery is written at once.

The secret is never logged, stored in clear or echoed; refusals name no secret and no stored value. Wrong
secrets are counted per source address, and past a limit answered 429 (wrong_secrets).
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import re
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from cryptography.fernet import InvalidToken
from sqlalchemy import select, tuple_
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.automations.firing import Admission, deduplicated_reason
from kandev.domain.automations.webhook_auth import Seen, Signed, count_wrong_secret, first_seen, forget_stale, verified
from kandev.domain.automations.webhooks import (
    UNSTORABLE,
    Admitted,
    Receipt,
    Refusal,
    WebhookRefused,
    admit,
    outcome_of,
    trigger_data,
)
from kandev.domain.context import ServiceContext, UnitOfWork
from kandev.domain.sealed_secrets import cipher
from kandev.models import Automation, AutomationRun, AutomationTrigger, WebhookDelivery
from kandev.models.base import new_id, utcnow
from kandev.models.enums import RunStatus, TriggerType
from kandev.platform.database import dialect_insert

log = logging.getLogger("kandev.webhooks")
IDEMPOTENCY_KEY_LIMIT = 255
# Large enough that a burst on loopback fills it, small enough that one statement's parameters stay modest.
BATCH_LIMIT = 200
_ID = re.compile(r"[A-Za-z0-9-]{1,36}")
_SECRET_CACHE_LIMIT = 1024
# How often a process drops the seen signatures that the window refuses anyway.
_FORGET_EVERY_SECONDS = 60.0
# An automation's webhook secret ciphertext, whether it is enabled, its webhook trigger's id, whether that is,
# and whether the trigger takes signed deliveries only.
_Found = tuple[bytes | None, bool, str | None, bool, bool]
_NOT_FOUND: _Found = (None, False, None, False, False)


@dataclass
class _Arrival:
    automation_id: str
    secret: str | None
    key: str | None
    payload: Any  # the trigger data: any JSON value (webhooks.trigger_data)
    body: bytes
    signed: Signed
    answer: asyncio.Future[Receipt] = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    delivery_id: str = field(default_factory=new_id)
    trigger_id: str | None = None
    seen: Seen | None = None  # its signature, verified
    # Its firing, once admitted: the run written and whether it was triggered or skipped (and why).
    run: AutomationRun | None = None

    def receipt(self) -> Receipt:
        assert self.run is not None
        skipped = self.run.status == RunStatus.SKIPPED
        return Receipt(self.delivery_id, False, outcome_of(self.run), self.run.reason if skipped else None, self.run.id)

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
        self._forgotten_at = 0.0

    async def receive(
        self,
        automation_id: str,
        secret: str | None,
        body: bytes,
        idempotency_key: str | None,
        *,
        signed: Signed | None = None,
        source: str | None = None,
    ) -> Receipt:
        """Verify, record and admit one delivery, then enqueue its run's launch. Raises WebhookRefused:
        UNKNOWN before the secret is looked at (an unknown id reveals nothing a 401 would not), UNAUTHENTICATED
        (RATE_LIMITED once `source` sent too many) before anything about the automation's state, STALE,
        REPLAYED, DISABLED and BAD_KEY only for a caller who holds the secret."""
        if not _ID.fullmatch(automation_id):
            raise WebhookRefused(Refusal.UNKNOWN, "no webhook automation has that id")
        key = idempotency_key.strip() if idempotency_key else None
        signed = signed or Signed()
        # The raw body is kept only to verify a signature; the payload is what is recorded.
        arrival = _Arrival(
            automation_id, secret, key or None, trigger_data(body), body if signed.present else b"", signed
        )
        self._waiting.append(arrival)
        if self._writer is None:
            self._writer = asyncio.create_task(self._write_while_waiting())
        try:
            return await arrival.answer
        except WebhookRefused as refused:
            if refused.refusal is not Refusal.UNAUTHENTICATED:
                raise
            retry_after = await count_wrong_secret(self.ctx, automation_id, source)
            if retry_after is None:
                raise
            raise WebhookRefused(
                Refusal.RATE_LIMITED,
                "too many wrong secrets or signatures for this webhook from this address; a right one is still "
                "accepted",
                retry_after=retry_after,
            ) from None

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
                accepted = self._verified(batch, found, utcnow())
                await self._forget_stale_signatures(uow.db)
                return accepted, await self._record(uow, accepted) if accepted else set()
        except IntegrityError:
            # Only an automation removed between the read and the insert gets here (PostgreSQL; a repeated
            # key does not conflict into an error): record one by one, so the others are not refused with it.
            recorded: set[str] = set()
            for arrival in accepted:
                if arrival.answer.done():  # refused as a replay
                    continue
                arrival.run = None
                try:
                    async with self.ctx.unit_of_work() as uow:
                        recorded |= await self._record(uow, [arrival])
                except IntegrityError:
                    arrival.settle(refused=WebhookRefused(Refusal.UNKNOWN, "no webhook automation has that id"))
            return accepted, recorded

    def _verified(self, batch: list[_Arrival], found: dict[str, _Found], now: datetime) -> list[_Arrival]:
        """The batch's deliveries that may be recorded; the others are answered with their refusal."""
        accepted = []
        for arrival in batch:
            try:
                arrival.trigger_id = self._check(arrival, found.get(arrival.automation_id), now)
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
                AutomationTrigger.config,
            )
            .join(AutomationTrigger, AutomationTrigger.automation_id == Automation.id)
            .where(
                Automation.id.in_(automation_ids),
                Automation.deleted_at.is_(None),
                AutomationTrigger.type == TriggerType.WEBHOOK,
            )
        )
        return {row[0]: (row[1], row[2], row[3], row[4], bool((row[5] or {}).get("require_signature"))) for row in rows}

    def _check(self, arrival: _Arrival, found: _Found | None, now: datetime) -> str:
        """The webhook trigger's id, or the refusal, in the order that reveals nothing to a caller without
        the secret. A signed delivery is verified by its signature (either setting of the trigger); an
        unsigned one by its X-Webhook-Secret, unless the trigger takes signed deliveries only."""
        ciphertext, automation_enabled, trigger_id, trigger_enabled, signed_only = found or _NOT_FOUND
        if ciphertext is None:
            raise WebhookRefused(Refusal.UNKNOWN, "no webhook automation has that id")
        expected = self._secret(ciphertext)
        if expected is None:
            raise WebhookRefused(Refusal.UNAUTHENTICATED, "the X-Webhook-Secret header is missing or wrong")
        if arrival.signed.present:
            arrival.seen = verified(arrival.automation_id, expected, arrival.signed, arrival.body, now)
        elif signed_only:
            raise WebhookRefused(
                Refusal.UNAUTHENTICATED,
                "this webhook takes signed deliveries only: X-Kandev-Timestamp and X-Kandev-Signature",
            )
        # Bytes, so a non-ASCII header value compares (in constant time) instead of raising.
        elif not hmac.compare_digest(expected, (arrival.secret or "").encode("utf-8", errors="replace")):
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

    async def _forget_stale_signatures(self, db: AsyncSession) -> None:
        if time.monotonic() - self._forgotten_at >= _FORGET_EVERY_SECONDS:
            self._forgotten_at = time.monotonic()
            await forget_stale(db, utcnow())

    @staticmethod
    async def _unreplayed(db: AsyncSession, arrivals: list[_Arrival]) -> list[_Arrival]:
        """The arrivals but those whose signature was accepted before (answered REPLAYED), the others'
        signatures now recorded; of one signature twice in the batch, the first goes on."""
        firsts: dict[tuple[str, str], _Arrival] = {}
        for arrival in arrivals:
            if arrival.seen is not None:
                firsts.setdefault(arrival.seen.key, arrival)
        fresh = await first_seen(db, [a.seen for a in firsts.values() if a.seen]) if firsts else set()
        kept = []
        for arrival in arrivals:
            key = arrival.seen.key if arrival.seen else None
            if key is None or (firsts[key] is arrival and key in fresh):
                kept.append(arrival)
            else:
                arrival.settle(refused=WebhookRefused(Refusal.REPLAYED, "this signature was accepted before"))
        return kept

    async def _record(self, uow: UnitOfWork, arrivals: list[_Arrival]) -> set[str]:
        """Insert the deliveries and admit the fresh ones' firings; the ids actually written."""
        recorded = await self._insert(uow.db, arrivals)
        fresh = [a for a in arrivals if a.delivery_id in recorded]
        if fresh:
            await self._admit(uow, fresh)
        return recorded

    async def _admit(self, uow: UnitOfWork, fresh: list[_Arrival]) -> None:
        runs = await admit(
            uow,
            [Admitted(a.delivery_id, a.automation_id, a.trigger_id, a.payload) for a in fresh],
            self.ctx.db.is_sqlite,
        )
        for arrival in fresh:
            arrival.run = runs[arrival.delivery_id]

    async def _insert(self, db: AsyncSession, arrivals: list[_Arrival]) -> set[str]:
        """Record the signatures, then insert the deliveries but the replays; the ids actually written (a
        repeated key writes nothing: the unique constraint decides, so concurrent repeats across processes
        record one delivery)."""
        arrivals = await self._unreplayed(db, arrivals)
        if not arrivals:
            return set()
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
        """A repeated key is answered with the delivery that holds it (deduplicated, with the reason), and
        nothing is enqueued."""
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
