"""Workspace automations: the definition, its ordered repositories, its triggers and its runs."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, ForeignKey, Index, Integer, LargeBinary, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from kandev.models.base import Base, JSONType, UTCDateTime, created_at_column, id_column, updated_at_column


class Automation(Base):
    __tablename__ = "automations"
    __table_args__ = (Index("ix_automations_workspace_name", "workspace_id", "name"),)

    id: Mapped[str] = id_column()
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    # Either may be empty on save (the spec's form allows it); a launch needs a usable one.
    agent_profile_id: Mapped[str | None] = mapped_column(
        ForeignKey("agent_profiles.id", ondelete="SET NULL"), nullable=True
    )
    executor_profile_id: Mapped[str | None] = mapped_column(
        ForeignKey("executor_profiles.id", ondelete="SET NULL"), nullable=True
    )
    destination: Mapped[str] = mapped_column(String(20), default="hidden")
    workflow_id: Mapped[str | None] = mapped_column(ForeignKey("workflows.id", ondelete="SET NULL"), nullable=True)
    # Null: the workflow's own start step.
    workflow_step_id: Mapped[str | None] = mapped_column(
        ForeignKey("workflow_steps.id", ondelete="SET NULL"), nullable=True
    )
    prompt: Mapped[str] = mapped_column(Text, default="")
    title_template: Mapped[str] = mapped_column(String(500), default="")
    context: Mapped[str] = mapped_column(String(30), default="new_task_per_run")
    max_concurrent_runs: Mapped[int] = mapped_column(Integer, default=1)
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    created_via: Mapped[str] = mapped_column(String(10), default="form")
    created_by: Mapped[str] = mapped_column(String(200))
    # The webhook trigger's secret, encrypted with the server key (kandev.domain.sealed_secrets.cipher).
    webhook_secret_ciphertext: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    # The last pre-flight acknowledgement (kandev.domain.automations.preflight.Ack as JSON; null: never checked),
    # the fingerprint of the inputs it answers for, and the attempts the pending check has taken.
    last_ack: Mapped[dict[str, Any] | None] = mapped_column(JSONType, nullable=True)
    ack_fingerprint: Mapped[str | None] = mapped_column(String(64), nullable=True)
    ack_attempts: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    created_at: Mapped[datetime] = created_at_column()
    updated_at: Mapped[datetime] = updated_at_column()
    deleted_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class AutomationRepository(Base):
    """One (repository, base branch) pair of an automation, in the order the operator chose."""

    __tablename__ = "automation_repositories"

    automation_id: Mapped[str] = mapped_column(ForeignKey("automations.id", ondelete="CASCADE"), primary_key=True)
    repository_id: Mapped[str] = mapped_column(
        ForeignKey("repositories.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    position: Mapped[int] = mapped_column(Integer, default=0)
    base_branch: Mapped[str] = mapped_column(String(200))


class AutomationTrigger(Base):
    """What fires an automation; `config` holds the type's settings ({expression, timezone} for a schedule,
    the filters of a GitHub condition, nothing for a webhook)."""

    __tablename__ = "automation_triggers"

    id: Mapped[str] = id_column()
    automation_id: Mapped[str] = mapped_column(ForeignKey("automations.id", ondelete="CASCADE"), index=True)
    type: Mapped[str] = mapped_column(String(30))
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    config: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    # A schedule's next fire, kept by the automation service on every save and advanced by the scheduler
    # when it claims a due fire; null unless an enabled schedule of an enabled, live automation.
    next_fire_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True, index=True)
    created_at: Mapped[datetime] = created_at_column()
    updated_at: Mapped[datetime] = updated_at_column()


class AutomationRun(Base):
    """One firing. `dedup_key` (null for manual runs) is unique per automation, so two schedulers or two
    deliveries never fire the same occurrence twice."""

    __tablename__ = "automation_runs"
    __table_args__ = (
        UniqueConstraint("automation_id", "dedup_key"),
        Index("ix_automation_runs_automation_created", "automation_id", "created_at", "id"),
        # What admission counts (the open runs of an automation), without reading its whole history.
        Index("ix_automation_runs_automation_status", "automation_id", "status"),
    )

    id: Mapped[str] = id_column()
    automation_id: Mapped[str] = mapped_column(ForeignKey("automations.id", ondelete="CASCADE"))
    trigger_id: Mapped[str | None] = mapped_column(
        ForeignKey("automation_triggers.id", ondelete="SET NULL"), nullable=True
    )
    trigger_type: Mapped[str] = mapped_column(String(30))
    status: Mapped[str] = mapped_column(String(20), default="triggered")
    # Why a run was skipped or failed, in words for people.
    reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    dedup_key: Mapped[str | None] = mapped_column(String(500), nullable=True)
    task_id: Mapped[str | None] = mapped_column(ForeignKey("tasks.id", ondelete="SET NULL"), nullable=True, index=True)
    session_id: Mapped[str | None] = mapped_column(ForeignKey("sessions.id", ondelete="SET NULL"), nullable=True)
    turn_id: Mapped[str | None] = mapped_column(ForeignKey("turns.id", ondelete="SET NULL"), nullable=True)
    title_snapshot: Mapped[str] = mapped_column(String(200), default="")
    # Any JSON value: an object for every trigger but a webhook, whose JSON array or scalar body is kept as it is.
    trigger_data: Mapped[Any] = mapped_column(JSONType, default=dict)
    # The moment the trigger names ({{trigger.timestamp}}): a schedule's occurrence, else when it fired.
    occurred_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # Why a continue-session run started a new task instead (the previous one was missing or incompatible).
    continuation_note: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = created_at_column()
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    stopped_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class WebhookDelivery(Base):
    """One accepted webhook POST, recorded before its 202 so a crash between answer and firing loses nothing.
    `processed_at` is null until the delivery job fired it (or was refused); `idempotency_key` (the sender's
    Idempotency-Key or X-GitHub-Delivery) is unique per automation, so a retried delivery is recorded once."""

    __tablename__ = "webhook_deliveries"
    __table_args__ = (
        UniqueConstraint("automation_id", "idempotency_key"),
        Index("ix_webhook_deliveries_unprocessed", "processed_at", "received_at"),
    )

    id: Mapped[str] = id_column()
    automation_id: Mapped[str] = mapped_column(ForeignKey("automations.id", ondelete="CASCADE"))
    trigger_id: Mapped[str | None] = mapped_column(
        ForeignKey("automation_triggers.id", ondelete="SET NULL"), nullable=True
    )
    idempotency_key: Mapped[str | None] = mapped_column(String(255), nullable=True)
    payload: Mapped[Any] = mapped_column(JSONType, default=dict)  # any JSON value (webhooks.trigger_data)
    received_at: Mapped[datetime] = mapped_column(UTCDateTime())
    processed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    run_id: Mapped[str | None] = mapped_column(ForeignKey("automation_runs.id", ondelete="SET NULL"), nullable=True)
    # The firing's admission (fired, skipped, deduplicated, refused), or `gone` for a deleted automation.
    outcome: Mapped[str | None] = mapped_column(String(20), nullable=True)


class WebhookSignature(Base):
    """A signature a signed webhook delivery was accepted with (kandev.domain.automations.webhook_auth):
    the same signature again is a replay and refused, whichever server process or replica gets it, and after a
    restart. Kept until its signed timestamp is outside the window, when the timestamp alone refuses it."""

    __tablename__ = "webhook_signatures"

    automation_id: Mapped[str] = mapped_column(ForeignKey("automations.id", ondelete="CASCADE"), primary_key=True)
    signature: Mapped[str] = mapped_column(String(64), primary_key=True)  # the HMAC's hex digest
    signed_at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)


class AutomationThreadMessage(Base):
    """One entry of an automation's thread (kandev.domain.automations.thread): its own system messages and
    each run's request and outcome. Rows outlive the automation's soft delete, and a run's deletion (run_id
    and task_id are plain links, no foreign keys)."""

    __tablename__ = "automation_thread_messages"
    __table_args__ = (
        # One entry per (automation, key): a retried step never writes its entry twice. Keyless entries repeat.
        UniqueConstraint("automation_id", "dedup_key"),
        Index("ix_automation_thread_messages_page", "automation_id", "created_at", "id"),
    )

    id: Mapped[str] = id_column()
    automation_id: Mapped[str] = mapped_column(ForeignKey("automations.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(30))
    text: Mapped[str] = mapped_column(Text)
    run_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    task_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    dedup_key: Mapped[str | None] = mapped_column(String(100), nullable=True)
    created_at: Mapped[datetime] = created_at_column()
