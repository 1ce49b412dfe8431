"""Shipping a task's changes: the pull or merge request opened for each of its repositories (as the code host
last showed it), the one-at-a-time claims that keep a code host from seeing a request twice, and the durable
rounds in which the task's agent is asked to fix failing checks."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from kandev.models.base import Base, JSONType, UTCDateTime, created_at_column, id_column, updated_at_column


class TaskShipRequest(Base):
    """The pull request (GitHub) or merge request (GitLab) of one repository of a task, opened from Kandev, and
    what the code host last said of it: refreshed by polling and webhooks, read by the task page and board."""

    __tablename__ = "task_ship_requests"

    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"), primary_key=True)
    repository_id: Mapped[str] = mapped_column(ForeignKey("repositories.id", ondelete="CASCADE"), primary_key=True)
    provider: Mapped[str] = mapped_column(String(20))
    host: Mapped[str] = mapped_column(String(255))
    # owner/name on GitHub, the project path on GitLab; `base_path` is a GitLab instance's path prefix.
    target: Mapped[str] = mapped_column(String(500))
    base_path: Mapped[str] = mapped_column(String(255), default="")
    number: Mapped[int] = mapped_column(Integer)
    url: Mapped[str] = mapped_column(String(1000), default="")
    # OPEN, CLOSED, MERGED
    state: Mapped[str] = mapped_column(String(10), default="OPEN")
    draft: Mapped[bool] = mapped_column(Boolean, default=False)
    title: Mapped[str] = mapped_column(Text, default="")
    head_branch: Mapped[str] = mapped_column(String(255))
    head_sha: Mapped[str] = mapped_column(String(64), default="")
    base_branch: Mapped[str] = mapped_column(String(255))
    # APPROVED, CHANGES_REQUESTED, REVIEW_REQUIRED, NONE
    review_decision: Mapped[str] = mapped_column(String(20), default="NONE")
    # MERGEABLE, CONFLICTING, BLOCKED, UNKNOWN; `mergeable_reason` is the host's word for it.
    mergeable: Mapped[str] = mapped_column(String(12), default="UNKNOWN")
    mergeable_reason: Mapped[str] = mapped_column(String(200), default="")
    # [{"id", "name", "status", "conclusion", "url"}] of the head commit.
    checks: Mapped[list[dict[str, Any]]] = mapped_column(JSONType, default=list)
    review_comments: Mapped[int] = mapped_column(Integer, default=0)
    merged_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    refreshed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    created_by: Mapped[str] = mapped_column(String(200), default="")
    created_at: Mapped[datetime] = created_at_column()
    updated_at: Mapped[datetime] = updated_at_column()


class ShipOperation(Base):
    """One shipping operation of a kind (push, open, merge, update) on a task's repository at a time: a click
    claims the row (compare-and-set on `claimed_until`), so a second click while the first runs is refused
    before anything reaches git or the code host; a claim a crash left behind lapses, and the next attempt
    first asks the code host what the lost one did."""

    __tablename__ = "ship_operations"

    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"), primary_key=True)
    repository_id: Mapped[str] = mapped_column(ForeignKey("repositories.id", ondelete="CASCADE"), primary_key=True)
    kind: Mapped[str] = mapped_column(String(20), primary_key=True)
    # RUNNING, DONE, FAILED
    state: Mapped[str] = mapped_column(String(10), default="RUNNING")
    claimed_until: Mapped[datetime] = mapped_column(UTCDateTime())
    actor: Mapped[str] = mapped_column(String(200), default="")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[str | None] = mapped_column(String(500), nullable=True)
    # What the last one that finished did (a push: the commit and where it went, for the next force-with-lease).
    result: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    updated_at: Mapped[datetime] = updated_at_column()


class CheckFixRound(Base):
    """A round of fixing failing checks: decided once per head commit of a task's request (the unique key), in
    the transaction that saw the failure; a job then reads the failing checks' logs and queues the one prompt
    (its id is stored). A job that died mid-way is taken up again once its claim lapses."""

    __tablename__ = "check_fix_rounds"
    __table_args__ = (UniqueConstraint("task_id", "repository_id", "head_sha"),)

    id: Mapped[str] = id_column()
    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"), index=True)
    repository_id: Mapped[str] = mapped_column(ForeignKey("repositories.id", ondelete="CASCADE"))
    head_sha: Mapped[str] = mapped_column(String(64))
    round: Mapped[int] = mapped_column(Integer)
    # [{"id", "name", "conclusion", "url"}] failing when the round was decided.
    checks: Mapped[list[dict[str, Any]]] = mapped_column(JSONType, default=list)
    # PENDING (its prompt not queued yet), PROMPTED, FAILED
    state: Mapped[str] = mapped_column(String(10), default="PENDING")
    claimed_until: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[str | None] = mapped_column(String(500), nullable=True)
    prompt_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    # When the failing check was first seen (the event), and when the prompt was queued.
    seen_at: Mapped[datetime] = mapped_column(UTCDateTime())
    prompted_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    created_at: Mapped[datetime] = created_at_column()
