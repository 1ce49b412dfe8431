"""Tasks, their dependencies and the step-transition history."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, ForeignKey, Index, Integer, String, Text, UniqueConstraint, text
from sqlalchemy.orm import Mapped, mapped_column

from kandev.models.base import Base, JSONType, UTCDateTime, created_at_column, id_column, updated_at_column


class Task(Base):
    __tablename__ = "tasks"
    __table_args__ = (
        # One live task per identity; a deleted task frees its external id, an archived one keeps it.
        Index(
            "uq_tasks_workspace_external_id",
            "workspace_id",
            "external_id",
            unique=True,
            sqlite_where=text("external_id IS NOT NULL AND deleted_at IS NULL"),
            postgresql_where=text("external_id IS NOT NULL AND deleted_at IS NULL"),
        ),
        Index("ix_tasks_workspace_created", "workspace_id", "created_at", "id"),
    )

    id: Mapped[str] = id_column()
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    workflow_id: Mapped[str] = mapped_column(ForeignKey("workflows.id", ondelete="RESTRICT"), index=True)
    workflow_step_id: Mapped[str] = mapped_column(ForeignKey("workflow_steps.id", ondelete="RESTRICT"), index=True)
    parent_id: Mapped[str | None] = mapped_column(
        ForeignKey("tasks.id", ondelete="SET NULL"), nullable=True, index=True
    )
    title: Mapped[str] = mapped_column(String(200))
    prompt: Mapped[str] = mapped_column(Text, default="")
    state: Mapped[str] = mapped_column(String(30), default="TODO")
    autopilot: Mapped[bool] = mapped_column(Boolean, default=False)
    origin: Mapped[str] = mapped_column(String(30), default="user")
    external_id: Mapped[str | None] = mapped_column(String(500), nullable=True)
    agent_profile_id: Mapped[str | None] = mapped_column(
        ForeignKey("agent_profiles.id", ondelete="SET NULL"), nullable=True
    )
    executor_profile_id: Mapped[str | None] = mapped_column(
        ForeignKey("executor_profiles.id", ondelete="SET NULL"), nullable=True
    )
    # A start requested at creation that waits for dependencies: {"prompt": ..., "agent_profile_id": ...}.
    deferred_launch: Mapped[dict[str, Any] | None] = mapped_column(JSONType, nullable=True)
    block_reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    # Set by the creating transaction once all of its work is done; NULL only for a create that has
    # claimed its external id but not finished (still running, or crashed): creation_complete=false.
    creation_completed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    created_by: Mapped[str | None] = mapped_column(String(200), nullable=True)
    # Agent-generated titles: the first eligible session claims the handoff; a human rename ends it.
    title_pending: Mapped[bool] = mapped_column(Boolean, default=False, server_default=text("false"))
    title_owner_session_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    created_at: Mapped[datetime] = created_at_column()
    updated_at: Mapped[datetime] = updated_at_column()
    archived_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    deleted_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # Its checkout directories were reclaimed (automation worktree retention); the next turn re-creates them
    # from the task's branches and clears this.
    worktree_reclaimed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # What it changed over its repositories (files, +, −) as last measured where its worktrees are
    # (kandev.domain.changes.stats); null until first measured, and always for a task without a repository.
    change_files: Mapped[int | None] = mapped_column(Integer, nullable=True)
    change_additions: Mapped[int | None] = mapped_column(Integer, nullable=True)
    change_deletions: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # Fix failing checks of its pull requests (off by default): at most `fix_checks_max_rounds` rounds counted
    # from `fix_checks_since` (when it was last turned on). Auto-merge when green and approved is separate.
    fix_checks_enabled: Mapped[bool] = mapped_column(Boolean, default=False, server_default=text("false"))
    fix_checks_max_rounds: Mapped[int] = mapped_column(Integer, default=3, server_default=text("3"))
    fix_checks_since: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    auto_merge: Mapped[bool] = mapped_column(Boolean, default=False, server_default=text("false"))


class TaskCleanup(Base):
    """A task to delete and whose directories to reclaim, written in the transaction that decided it (an
    automation or its runs deleted), so the work survives a lost job or a crash: the cleanup job claims the
    row by moving `next_attempt_at`, a failure is retried with backoff, and `done_at` ends it."""

    __tablename__ = "task_cleanups"

    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"), primary_key=True)
    reason: Mapped[str] = mapped_column(String(30))
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)
    last_error: Mapped[str | None] = mapped_column(String(500), nullable=True)
    done_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    created_at: Mapped[datetime] = created_at_column()


class TaskDependency(Base):
    """`task_id` is blocked by `blocked_by_id` until that task completes."""

    __tablename__ = "task_dependencies"

    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"), primary_key=True)
    blocked_by_id: Mapped[str] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"), primary_key=True, index=True)
    created_at: Mapped[datetime] = created_at_column()


class StepTransition(Base):
    __tablename__ = "step_transitions"

    id: Mapped[str] = id_column()
    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"), index=True)
    from_step_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    to_step_id: Mapped[str] = mapped_column(String(36))
    trigger: Mapped[str] = mapped_column(String(40))
    actor: Mapped[str] = mapped_column(String(200))
    details: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    created_at: Mapped[datetime] = created_at_column()


class TaskRepository(Base):
    """A repository a task works in, with the base branch and (once created) the task's own branch."""

    __tablename__ = "task_repositories"

    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"), primary_key=True)
    repository_id: Mapped[str] = mapped_column(ForeignKey("repositories.id", ondelete="CASCADE"), primary_key=True)
    position: Mapped[int] = mapped_column(default=0)
    base_branch: Mapped[str | None] = mapped_column(String(200), nullable=True)
    branch: Mapped[str | None] = mapped_column(String(200), nullable=True)
    created_at: Mapped[datetime] = created_at_column()


class TaskFolder(Base):
    """A plain folder attached to a task as a workspace source (no git): the agent sees it beside the
    task's repositories."""

    __tablename__ = "task_folders"
    __table_args__ = (UniqueConstraint("task_id", "name"),)

    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"), primary_key=True)
    path: Mapped[str] = mapped_column(String(1000), primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    position: Mapped[int] = mapped_column(default=0)
    created_at: Mapped[datetime] = created_at_column()
