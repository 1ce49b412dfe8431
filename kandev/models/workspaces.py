"""Workspaces (owned by a user) and the repositories registered in them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from kandev.models.base import Base, JSONType, created_at_column, id_column, updated_at_column


class Workspace(Base):
    __tablename__ = "workspaces"

    id: Mapped[str] = id_column()
    name: Mapped[str] = mapped_column(String(200))
    owner_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    # Not foreign keys: these point into tables that themselves point back at the workspace.
    default_workflow_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    default_agent_profile_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    default_executor_profile_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    settings: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    created_at: Mapped[datetime] = created_at_column()
    updated_at: Mapped[datetime] = updated_at_column()


class Repository(Base):
    __tablename__ = "repositories"
    __table_args__ = (UniqueConstraint("workspace_id", "name"),)

    id: Mapped[str] = id_column()
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    path: Mapped[str] = mapped_column(String(1000))
    default_branch: Mapped[str] = mapped_column(String(200), default="main")
    # The `origin` remote, when it has one: it tells which code host (provider) the repository is on.
    remote_url: Mapped[str | None] = mapped_column(String(1000), nullable=True)
    created_at: Mapped[datetime] = created_at_column()


class TaskChoice(Base):
    """Where a person last had a task work (repositories with base branches, executor and agent profiles), per
    workspace: the new-task form starts from it. Written when that person creates a task."""

    __tablename__ = "task_choices"

    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"), primary_key=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    # [{"repository_id": ..., "base_branch": ...}] in the order chosen.
    repositories: Mapped[list[dict[str, Any]]] = mapped_column(JSONType, default=list)
    executor_profile_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    agent_profile_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    updated_at: Mapped[datetime] = updated_at_column()
