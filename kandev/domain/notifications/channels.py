"""A workspace's notification channels: a name, a URL in the notification library's form (json://host/path,
slack://..., mailto://..., ntfy://topic), and the events it wants. The URL carries tokens, so it is stored
encrypted like a workspace secret and never answered: only its service and host are. A non-admin's URL must not
point inward (kandev.domain.outbound): it is checked when saved and again, pinned, at every send."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.access.scope import load_workspace
from kandev.domain.context import Principal, ServiceContext
from kandev.domain.errors import NotFoundError, PermissionDeniedError, ValidationError
from kandev.domain.outbound import OutboundPolicy, outbound_policy
from kandev.domain.ports import NOTIFIER, Notification, NotificationFailed, NotificationTarget
from kandev.domain.workspace.secrets import cipher
from kandev.models import NotificationChannel, NotificationDelivery
from kandev.models.base import new_id, utcnow
from kandev.platform.log_redaction import remember_secrets

NEEDS_INPUT, TURN_FAILED, REVIEW_READY = "NEEDS_INPUT", "TURN_FAILED", "REVIEW_READY"
EVENTS = (NEEDS_INPUT, TURN_FAILED, REVIEW_READY)
MAX_URL = 2000
MAX_CHANNELS = 20
# An attempt that took longer than this shows the channel as slow.
SLOW_MS = 5000


@dataclass(frozen=True)
class ChannelRecord:
    id: str
    workspace_id: str
    name: str
    service: str
    target: str
    events: list[str]
    enabled: bool
    last_attempt_at: datetime | None
    last_delivered_at: datetime | None
    last_error: str | None
    last_duration_ms: int | None
    pending: int
    failed: int
    created_at: datetime

    @property
    def status(self) -> str:
        """NEW (never tried), OK, SLOW (its last attempt took over SLOW_MS) or FAILING (its last attempt failed)."""
        if self.last_attempt_at is None:
            return "NEW"
        if self.last_error is not None:
            return "FAILING"
        return "SLOW" if (self.last_duration_ms or 0) > SLOW_MS else "OK"


@dataclass(frozen=True)
class TestOutcome:
    delivered: bool
    error: str | None


def record_outcome(channel: NotificationChannel, error: str | None, duration_ms: int) -> None:
    """The channel's last attempt, for the settings page."""
    now = utcnow()
    channel.last_attempt_at, channel.last_duration_ms = now, duration_ms
    channel.last_error = error[:500] if error else None
    if error is None:
        channel.last_delivered_at = now


def target_of(ctx: ServiceContext, channel: NotificationChannel) -> tuple[str, OutboundPolicy | None]:
    """The channel's URL, decrypted, and the rule its connections pass (None: an admin saved it)."""
    url = cipher(ctx.settings.server_key).decrypt(channel.url_ciphertext).decode()
    remember_secrets([url])
    return url, None if channel.trusted else outbound_policy(ctx.settings)


class NotificationChannelService:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    async def list(self, workspace_id: str) -> list[ChannelRecord]:
        async with self.ctx.read() as db:
            await self._workspace(db, workspace_id)
            rows = list(
                await db.scalars(
                    select(NotificationChannel)
                    .where(NotificationChannel.workspace_id == workspace_id)
                    .order_by(NotificationChannel.created_at, NotificationChannel.id)
                )
            )
            counts = await _counts(db, [row.id for row in rows])
        return [_record(row, counts.get(row.id, {})) for row in rows]

    async def create(self, workspace_id: str, name: str, url: str, events: Sequence[str]) -> ChannelRecord:
        remember_secrets([url])  # before any check: no log line about a refusal may carry it either
        clean = _name(name)
        wanted = _events(events)
        async with self.ctx.read() as db:
            await self._workspace(db, workspace_id)
            held = await db.scalar(
                select(func.count())
                .select_from(NotificationChannel)
                .where(NotificationChannel.workspace_id == workspace_id)
            )
        if (held or 0) >= MAX_CHANNELS:
            raise ValidationError(f"a workspace has at most {MAX_CHANNELS} notification channels", field="workspaceId")
        target = await self._check(url)
        async with self.ctx.unit_of_work() as uow:
            await self._workspace(uow.db, workspace_id)
            row = NotificationChannel(
                id=new_id(),
                workspace_id=workspace_id,
                name=clean,
                url_ciphertext=cipher(self.ctx.settings.server_key).encrypt(url.encode()),
                service=target.service[:40],
                target=target.target[:300],
                events=wanted,
                enabled=True,
                trusted=self._trusted,
                created_by=self.ctx.principal.user_id if self.ctx.principal.user_id != "system" else None,
                created_at=utcnow(),
                updated_at=utcnow(),
            )
            uow.db.add(row)
            await uow.db.flush()
            return _record(row, {})

    async def update(
        self,
        channel_id: str,
        *,
        name: str | None = None,
        url: str | None = None,
        events: Sequence[str] | None = None,
        enabled: bool | None = None,
    ) -> ChannelRecord:
        """Only the fields given change; a new URL is checked (and trusted) as the caller's."""
        target = await self._check(url) if url is not None else None
        async with self.ctx.unit_of_work() as uow:
            row = await self._load(uow.db, channel_id)
            if name is not None:
                row.name = _name(name)
            if events is not None:
                row.events = _events(events)
            if enabled is not None:
                row.enabled = enabled
            if url is not None and target is not None:
                row.url_ciphertext = cipher(self.ctx.settings.server_key).encrypt(url.encode())
                row.service, row.target, row.trusted = target.service[:40], target.target[:300], self._trusted
                row.last_error = None
            row.updated_at = utcnow()
            counts = await _counts(uow.db, [row.id])
            return _record(row, counts.get(row.id, {}))

    async def delete(self, channel_id: str) -> ChannelRecord:
        async with self.ctx.unit_of_work() as uow:
            row = await self._load(uow.db, channel_id)
            record = _record(row, {})
            await uow.db.delete(row)
            return record

    async def test(self, channel_id: str) -> TestOutcome:
        """Send a test notification now (not queued: the answer says whether it arrived) and keep the outcome."""
        async with self.ctx.read() as db:
            row = await self._load(db, channel_id)
            url, policy = target_of(self.ctx, row)
            name = row.name
        note = Notification(
            "Kandev test notification", f"Channel '{name}' reaches you.", key=f"test:{channel_id}:{new_id()}"
        )
        started = time.perf_counter()
        try:
            await asyncio.to_thread(
                NOTIFIER.get().send, url, note, policy, self.ctx.settings.notification_timeout_seconds
            )
        except NotificationFailed as failed:
            error: str | None = str(failed)
        else:
            error = None
        async with self.ctx.unit_of_work() as uow:
            channel = await uow.db.get(NotificationChannel, channel_id)
            if channel is not None:
                record_outcome(channel, error, round((time.perf_counter() - started) * 1000))
        return TestOutcome(error is None, error)

    @property
    def _trusted(self) -> bool:
        principal = self.ctx.principal
        return principal.admin and principal.session_id is None

    async def _check(self, url: str) -> NotificationTarget:
        if not isinstance(url, str) or not url.strip() or len(url) > MAX_URL:
            raise ValidationError(f"url must be 1 to {MAX_URL} characters", field="url")
        policy = None if self._trusted else outbound_policy(self.ctx.settings)
        return await asyncio.to_thread(NOTIFIER.get().check, url.strip(), policy, "url")

    async def _workspace(self, db: AsyncSession, workspace_id: str) -> None:
        _refuse_agents(self.ctx.principal)
        await load_workspace(db, self.ctx.principal, workspace_id)

    async def _load(self, db: AsyncSession, channel_id: str) -> NotificationChannel:
        _refuse_agents(self.ctx.principal)
        row = await db.get(NotificationChannel, channel_id)
        if row is None:
            raise NotFoundError("notification channel", channel_id)
        try:
            await load_workspace(db, self.ctx.principal, row.workspace_id)
        except NotFoundError:
            raise NotFoundError("notification channel", channel_id) from None
        return row


def _refuse_agents(principal: Principal) -> None:
    if principal.session_id is not None:
        raise PermissionDeniedError("an agent session cannot configure notifications", reason="agent_session")


def _name(name: str) -> str:
    clean = (name or "").strip()
    if not 1 <= len(clean) <= 200:
        raise ValidationError("name must be 1 to 200 characters", field="name")
    return clean


def _events(events: Sequence[str]) -> list[str]:
    wanted = [str(e) for e in events]
    if not wanted or any(e not in EVENTS for e in wanted):
        raise ValidationError(f"events must be one or more of {', '.join(EVENTS)}", field="events")
    return [e for e in EVENTS if e in wanted]


async def _counts(db: AsyncSession, channel_ids: list[str]) -> dict[str, dict[str, int]]:
    """Deliveries still owed (PENDING) and given up (FAILED) per channel."""
    if not channel_ids:
        return {}
    rows = await db.execute(
        select(NotificationDelivery.channel_id, NotificationDelivery.state, func.count())
        .where(NotificationDelivery.channel_id.in_(channel_ids), NotificationDelivery.state.in_(("PENDING", "FAILED")))
        .group_by(NotificationDelivery.channel_id, NotificationDelivery.state)
    )
    found: dict[str, dict[str, int]] = {}
    for channel_id, state, count in rows:
        found.setdefault(channel_id, {})[state] = int(count)
    return found


def _record(row: NotificationChannel, counts: dict[str, int]) -> ChannelRecord:
    return ChannelRecord(
        id=row.id,
        workspace_id=row.workspace_id,
        name=row.name,
        service=row.service,
        target=row.target,
        events=list(row.events or []),
        enabled=row.enabled,
        last_attempt_at=row.last_attempt_at,
        last_delivered_at=row.last_delivered_at,
        last_error=row.last_error,
        last_duration_ms=row.last_duration_ms,
        pending=counts.get("PENDING", 0),
        failed=counts.get("FAILED", 0),
        created_at=row.created_at,
    )
