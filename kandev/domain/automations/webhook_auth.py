"""How a webhook delivery proves it comes from the webhook's sender: signed deliveries, and a limit on wrong
secrets.

Signed deliveries: the sender proves it holds the webhook's secret without sending it, and a captured
delivery can be neither replayed nor kept for later.

The scheme (the README and the web client's trigger editor show it to senders):

    X-Kandev-Timestamp: <Unix time in whole seconds>
    X-Kandev-Signature: sha256=<hex HMAC-SHA256, keyed with the webhook's secret, of "<timestamp>.<raw body>">

A delivery signed more than WINDOW away from the server's time, either way, is stale. A signature that was
accepted once is refused again: seen signatures are rows of the database (`webhook_signatures`, inserted in
the transaction that records the delivery), so neither a restart nor a second replica accepts a replay. A row
is kept until its timestamp is stale with a margin, when the window alone refuses the replay.

Wrong secrets are rate-limited without locking out the right sender: only refusals for a missing or wrong secret or
signature are counted, per webhook and source address (an IPv6 source by its /64, which one host can fill with
addresses), in a window kept in Redis so every replica counts together. Past KANDEV_WEBHOOK_FAILURE_LIMIT in
KANDEV_WEBHOOK_FAILURE_WINDOW_SECONDS, a further wrong one is answered 429 with Retry-After instead of 401. A
delivery that authenticates is never counted and never limited: it is verified as always, so an attacker who shares
the right sender's address (a proxy, a NAT) or forges its address cannot lock it out; the attacker only gets 429s
for its guesses, which a secret of 256 random bits leaves hopeless anyway."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from redis.exceptions import RedisError
from sqlalchemy import delete
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.automations.webhooks import Refusal, WebhookRefused
from kandev.domain.context import ServiceContext
from kandev.models import WebhookSignature
from kandev.platform.database import dialect_insert

WINDOW = timedelta(minutes=5)
# Seen signatures outlive the window by this margin, for server clocks that differ a little.
KEPT = WINDOW * 2
PREFIX = "sha256="
_TIMESTAMP = re.compile(r"[0-9]{1,10}")


@dataclass(frozen=True)
class Signed:
    """What a delivery's signature headers say; an unsigned delivery has neither."""

    timestamp: str | None = None
    signature: str | None = None

    @property
    def present(self) -> bool:
        return bool(self.signature)


@dataclass(frozen=True)
class Seen:
    """A verified signature: the automation it was for, the HMAC's hex digest and when it was signed."""

    automation_id: str
    digest: str
    signed_at: datetime

    @property
    def key(self) -> tuple[str, str]:
        return self.automation_id, self.digest


def signature_of(secret: bytes, timestamp: str, body: bytes) -> str:
    """The X-Kandev-Signature value of `body` sent at `timestamp`."""
    return PREFIX + hmac.new(secret, timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()


def verified(automation_id: str, secret: bytes, signed: Signed, body: bytes, now: datetime) -> Seen:
    """The delivery's signature when it is the body's under `secret` and signed within WINDOW of `now`.
    Raises WebhookRefused: UNAUTHENTICATED for a missing, malformed or wrong one, STALE for one outside the
    window (said only to a sender whose signature verified, who holds the secret)."""
    timestamp = (signed.timestamp or "").strip()
    offered = (signed.signature or "").strip().lower()
    if not _TIMESTAMP.fullmatch(timestamp):
        raise WebhookRefused(
            Refusal.UNAUTHENTICATED, "a signed delivery needs X-Kandev-Timestamp, the Unix time in whole seconds"
        )
    expected = signature_of(secret, timestamp, body)
    # Bytes, so a non-ASCII header value compares (in constant time) instead of raising.
    if not hmac.compare_digest(expected.encode(), offered.encode("utf-8", errors="replace")):
        raise WebhookRefused(Refusal.UNAUTHENTICATED, "the X-Kandev-Signature does not verify")
    signed_at = datetime.fromtimestamp(int(timestamp), UTC)
    if abs(now - signed_at) > WINDOW:
        raise WebhookRefused(
            Refusal.STALE, "the delivery was signed more than 5 minutes from the server's time; sign it anew"
        )
    return Seen(automation_id, expected.removeprefix(PREFIX), signed_at)


async def first_seen(db: AsyncSession, seen: Sequence[Seen]) -> set[tuple[str, str]]:
    """Record the signatures; the (automation, digest) pairs that were new (the others are replays). The
    primary key decides, so two processes recording one signature at once record it once."""
    statement = (
        dialect_insert(db, WebhookSignature)
        .on_conflict_do_nothing(index_elements=["automation_id", "signature"])
        .returning(WebhookSignature.automation_id, WebhookSignature.signature)
    )
    rows = [{"automation_id": s.automation_id, "signature": s.digest, "signed_at": s.signed_at} for s in seen]
    connection = await db.connection()
    return {(row[0], row[1]) for row in await connection.execute(statement, rows)}


async def forget_stale(db: AsyncSession, now: datetime) -> None:
    """Drop the signatures whose timestamp the window refuses anyway."""
    await db.execute(delete(WebhookSignature).where(WebhookSignature.signed_at < now - KEPT))


log = logging.getLogger("kandev.webhooks")
_COUNTS = "kandev:webhook-wrong-secrets:"
_SOURCE_LIMIT = 64


def source_key(source: str | None) -> str:
    """The address the count is kept for: an IPv4 address, an IPv6 address's /64, else the text as given."""
    if not source:
        return "-"
    try:
        address = ipaddress.ip_address(source)
    except ValueError:
        return source[:_SOURCE_LIMIT]
    if address.version == 6:
        return str(ipaddress.ip_network(f"{address}/64", strict=False))
    return str(address)


async def count_wrong_secret(ctx: ServiceContext, webhook: str, source: str | None) -> int | None:
    """Count one wrong secret for (webhook, source); the seconds until the count starts afresh when the limit is
    passed (answer 429 with that Retry-After), else None (answer 401). Redis out of reach counts nothing."""
    settings = ctx.settings
    key = f"{_COUNTS}{webhook}:{source_key(source)}"
    try:
        async with ctx.bus.redis.pipeline(transaction=True) as pipe:
            pipe.set(key, 0, ex=settings.webhook_failure_window_seconds, nx=True)
            pipe.incr(key)
            pipe.ttl(key)
            _, count, ttl = await pipe.execute()
    except (RedisError, OSError):
        log.warning("wrong webhook secrets could not be counted: Redis is out of reach")
        return None
    if int(count) <= settings.webhook_failure_limit:
        return None
    return max(int(ttl), 1)
