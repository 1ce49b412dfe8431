"""GitLab: a workspace's connection (its token is a workspace secret) and the merge requests linked to tasks."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from kandev.models.base import Base, created_at_column, id_column, updated_at_column


class GitlabConnection(Base):
    """One per workspace; the token lives in `secrets` (encrypted) and dies with it."""

    __tablename__ = "gitlab_connections"

    id: Mapped[str] = id_column()
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"), unique=True)
    secret_id: Mapped[str] = mapped_column(ForeignKey("secrets.id", ondelete="CASCADE"), index=True)
    # The GitLab instance (https://gitlab.com, or a self-managed one); its API is base_url + /api/v4.
    base_url: Mapped[str] = mapped_column(String(500))
    # Its host, lower-case: the remotes on it are the workspace's GitLab repositories.
    host: Mapped[str] = mapped_column(String(255))
    username: Mapped[str] = mapped_column(String(255))
    created_at: Mapped[datetime] = created_at_column()
    updated_at: Mapped[datetime] = updated_at_column()


class TaskMergeRequest(Base):
    """A GitLab merge request linked to a task (by its source branch, or named when the task was created);
    state opened, closed, locked or merged (GitLab's)."""

    __tablename__ = "task_merge_requests"

    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"), primary_key=True)
    # The target project's full path (group/subgroup/name).
    project: Mapped[str] = mapped_column(String(500), primary_key=True)
    iid: Mapped[int] = mapped_column(Integer, primary_key=True)
    state: Mapped[str] = mapped_column(String(10))
    source_branch: Mapped[str] = mapped_column(String(255))
    target_branch: Mapped[str] = mapped_column(String(255), default="")
    sha: Mapped[str] = mapped_column(String(64), default="")
    url: Mapped[str] = mapped_column(String(1000), default="")
    created_at: Mapped[datetime] = created_at_column()
    updated_at: Mapped[datetime] = updated_at_column()
