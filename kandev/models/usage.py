"""What each turn cost (tokens, money, context) and the budgets that stop tasks and automations spending more."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Boolean, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from kandev.models.base import Base, UTCDateTime, created_at_column, id_column, updated_at_column


class TurnUsage(Base):
    """One turn's usage as its agent reported it (clamped to sane bounds), with the keys totals group by."""

    __tablename__ = "turn_usage"
    __table_args__ = (
        Index("ix_turn_usage_workspace_recorded", "workspace_id", "recorded_at"),
        Index("ix_turn_usage_automation", "automation_id", "recorded_at"),
    )

    turn_id: Mapped[str] = mapped_column(ForeignKey("turns.id", ondelete="CASCADE"), primary_key=True)
    session_id: Mapped[str] = mapped_column(ForeignKey("sessions.id", ondelete="CASCADE"), index=True)
    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"), index=True)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    # The automation whose run the task worked for when the turn started (null: none).
    automation_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    agent_profile_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    agent_name: Mapped[str] = mapped_column(String(200), default="")
    model: Mapped[str | None] = mapped_column(String(200), nullable=True)
    input_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    output_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    cache_read_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    cache_write_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    cost_usd: Mapped[float | None] = mapped_column(Float, nullable=True)
    # The agent's context window: tokens in it now, and its size.
    context_used: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    context_size: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    # Set when a reported figure was out of bounds and clamped; says which and what was reported.
    clamped: Mapped[bool] = mapped_column(Boolean, default=False)
    clamp_note: Mapped[str | None] = mapped_column(Text, nullable=True)
    recorded_at: Mapped[datetime] = created_at_column()
    updated_at: Mapped[datetime] = updated_at_column()


class Budget(Base):
    """A spending limit of one task (over its whole life) or one automation (per calendar month, UTC)."""

    __tablename__ = "budgets"
    __table_args__ = (UniqueConstraint("subject_kind", "subject_id"),)

    id: Mapped[str] = id_column()
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"), index=True)
    # task or automation
    subject_kind: Mapped[str] = mapped_column(String(20))
    subject_id: Mapped[str] = mapped_column(String(36))
    # TOTAL (a task's) or MONTH (an automation's)
    period: Mapped[str] = mapped_column(String(10), default="TOTAL")
    limit_tokens: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    limit_usd: Mapped[float | None] = mapped_column(Float, nullable=True)
    # When the limit was last raised or set: a task stopped by it may go on.
    revision: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = created_at_column()
    updated_at: Mapped[datetime] = updated_at_column()
    reached_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
