"""Where a workspace's notifications go (channels) and each notification owed to a channel (deliveries)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, ForeignKey, Integer, LargeBinary, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from kandev.models.base import Base, JSONType, UTCDateTime, created_at_column, id_column, updated_at_column


class NotificationChannel(Base):
    """A target in the notification library's URL form; the URL is encrypted like a secret (it carries tokens)."""

    __tablename__ = "notification_channels"

    id: Mapped[str] = id_column()
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    url_ciphertext: Mapped[bytes] = mapped_column(LargeBinary)
    # The service and host only (e.g. "json", "hooks.example.com"): what the settings page may show.
    service: Mapped[str] = mapped_column(String(40))
    target: Mapped[str] = mapped_column(String(300), default="")
    events: Mapped[list[str]] = mapped_column(JSONType, default=list)
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    # Saved by an admin: the outbound rule (kandev.domain.outbound) is not applied to its URL.
    trusted: Mapped[bool] = mapped_column(Boolean, default=False)
    created_by: Mapped[str | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"), nullable=True)
    # The last attempt's outcome, for the settings page.
    last_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    last_delivered_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    last_error: Mapped[str | None] = mapped_column(String(500), nullable=True)
    last_duration_ms: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[datetime] = created_at_column()
    updated_at: Mapped[datetime] = updated_at_column()


class NotificationDelivery(Base):
    """One event owed to one channel, written in the transaction of the event (so it is never lost and never
    owed twice); a job claims it by moving `next_attempt_at`, retries with backoff, and ends it DELIVERED or
    FAILED."""

    __tablename__ = "notification_deliveries"
    __table_args__ = (UniqueConstraint("channel_id", "event_key"),)

    id: Mapped[str] = id_column()
    channel_id: Mapped[str] = mapped_column(ForeignKey("notification_channels.id", ondelete="CASCADE"), index=True)
    # What happened, once: e.g. "permission:<request id>", "turn_failed:<turn id>", "review:<task id>:<turn id>".
    event_key: Mapped[str] = mapped_column(String(120))
    event: Mapped[str] = mapped_column(String(20))
    task_id: Mapped[str | None] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"), nullable=True, index=True)
    title: Mapped[str] = mapped_column(String(300))
    body: Mapped[str] = mapped_column(Text)
    # PENDING, DELIVERED, FAILED
    state: Mapped[str] = mapped_column(String(20), default="PENDING", index=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)
    last_error: Mapped[str | None] = mapped_column(String(500), nullable=True)
    created_at: Mapped[datetime] = created_at_column()
    delivered_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
