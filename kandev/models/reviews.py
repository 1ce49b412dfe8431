"""Reviewing a task's changes: discussion threads on lines of its diff, the files a person marked reviewed, and
the task's change stats as the worker last measured them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from kandev.models.base import Base, JSONType, UTCDateTime, created_at_column, id_column, updated_at_column


class ReviewThread(Base):
    """A discussion on a line range of a task's diff (or a whole file, or the whole task). `line`/`end_line`
    follow the anchored lines as the file changes; the anchor keeps the lines as they were when it was opened."""

    __tablename__ = "review_threads"
    __table_args__ = (
        Index("ix_review_threads_task_state", "task_id", "state"),
        # A code host's review comment becomes one thread, whatever how often it is read.
        UniqueConstraint("task_id", "external_id"),
    )

    id: Mapped[str] = id_column()
    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"))
    # Null for a task-level thread (no path).
    repository_id: Mapped[str | None] = mapped_column(ForeignKey("repositories.id", ondelete="CASCADE"), nullable=True)
    path: Mapped[str | None] = mapped_column(String(1000), nullable=True)
    # 1-based lines of `side` (OLD: the base version, NEW: the current one); null for a file-level thread.
    line: Mapped[int | None] = mapped_column(Integer, nullable=True)
    end_line: Mapped[int | None] = mapped_column(Integer, nullable=True)
    side: Mapped[str] = mapped_column(String(3), default="NEW")
    # OPEN, RESOLVED, OUTDATED
    state: Mapped[str] = mapped_column(String(10), default="OPEN")
    # PERSON or AGENT: who opened it; GITHUB or GITLAB: a review comment made on the code host.
    origin: Mapped[str] = mapped_column(String(10), default="PERSON")
    # The code host's id of the comment it came from (origin GITHUB / GITLAB).
    external_id: Mapped[str | None] = mapped_column(String(200), nullable=True)
    anchor_commit: Mapped[str | None] = mapped_column(String(40), nullable=True)
    anchor_line: Mapped[int | None] = mapped_column(Integer, nullable=True)
    anchor_text: Mapped[str] = mapped_column(Text, default="")
    # {"before": [lines], "after": [lines]}: what surrounded the anchored lines.
    anchor_context: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    created_by: Mapped[str] = mapped_column(String(200))
    resolved_by: Mapped[str | None] = mapped_column(String(200), nullable=True)
    resolved_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # The queued prompt that carried it to the agent (sendReviewToAgent) and when.
    sent_in_prompt_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    created_at: Mapped[datetime] = created_at_column()
    updated_at: Mapped[datetime] = updated_at_column()


class ReviewComment(Base):
    """One markdown comment of a thread, by a person or an agent session."""

    __tablename__ = "review_comments"

    id: Mapped[str] = id_column()
    thread_id: Mapped[str] = mapped_column(ForeignKey("review_threads.id", ondelete="CASCADE"), index=True)
    # PERSON or AGENT
    author_kind: Mapped[str] = mapped_column(String(10))
    author_user_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    author_login: Mapped[str | None] = mapped_column(String(100), nullable=True)
    author_session_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    body: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = created_at_column()


class ReviewedFile(Base):
    """A file a person marked reviewed, keyed by the diff they saw: another change makes it unreviewed."""

    __tablename__ = "reviewed_files"

    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"), primary_key=True)
    repository_id: Mapped[str] = mapped_column(ForeignKey("repositories.id", ondelete="CASCADE"), primary_key=True)
    path: Mapped[str] = mapped_column(String(1000), primary_key=True)
    diff_key: Mapped[str] = mapped_column(String(64))
    reviewed_by: Mapped[str] = mapped_column(String(200))
    reviewed_at: Mapped[datetime] = created_at_column()


class TaskChangeStats(Base):
    """The last measure of a task's changes, per repository (its totals are on the task row, which board cards
    read): tells which files changed since, and keeps a repository measured by another worker."""

    __tablename__ = "task_change_stats"

    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"), primary_key=True)
    # {repository id: {"files", "additions", "deletions", "keys": {path: diff key}, "renamed": {old: new}}}
    digest: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    computed_at: Mapped[datetime] = updated_at_column()
