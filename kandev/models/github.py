"""GitHub: a workspace's connection (its token is a workspace secret), the server's GitHub App, the pull
requests linked to tasks, and what the PR trigger last saw of each pull request."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Boolean, ForeignKey, Integer, LargeBinary, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from kandev.models.base import Base, JSONType, UTCDateTime, created_at_column, id_column, updated_at_column


class GithubConnection(Base):
    """One per workspace; the token lives in `secrets` (encrypted) and dies with it."""

    __tablename__ = "github_connections"

    id: Mapped[str] = id_column()
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"), unique=True)
    secret_id: Mapped[str] = mapped_column(ForeignKey("secrets.id", ondelete="CASCADE"), index=True)
    login: Mapped[str] = mapped_column(String(200))
    # The code host the API URL serves (github.com for api.github.com): "all repositories" are those on it.
    host: Mapped[str] = mapped_column(String(255))
    created_at: Mapped[datetime] = created_at_column()
    updated_at: Mapped[datetime] = updated_at_column()


class GithubApp(Base):
    """The server-wide GitHub App (one row, id `server`), set by an admin; key and secret encrypted with the
    server key."""

    __tablename__ = "github_apps"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default="server")
    app_id: Mapped[str] = mapped_column(String(50))
    private_key_ciphertext: Mapped[bytes] = mapped_column(LargeBinary)
    webhook_secret_ciphertext: Mapped[bytes] = mapped_column(LargeBinary)
    updated_by: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = created_at_column()
    updated_at: Mapped[datetime] = updated_at_column()


class TaskPullRequest(Base):
    """A pull request linked to a task (its head is a branch Kandev made for the task); state open, closed or
    merged."""

    __tablename__ = "task_pull_requests"

    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"), primary_key=True)
    repository: Mapped[str] = mapped_column(String(201), primary_key=True)
    number: Mapped[int] = mapped_column(Integer, primary_key=True)
    state: Mapped[str] = mapped_column(String(10))
    merged_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    head_branch: Mapped[str] = mapped_column(String(255))
    head_sha: Mapped[str] = mapped_column(String(64), default="")
    base_branch: Mapped[str] = mapped_column(String(255), default="")
    url: Mapped[str] = mapped_column(String(1000), default="")
    created_at: Mapped[datetime] = created_at_column()
    updated_at: Mapped[datetime] = updated_at_column()


class GithubPrPollState(Base):
    """What a PR trigger last saw of one pull request, so each event of it is reported once."""

    __tablename__ = "github_pr_poll_states"

    trigger_id: Mapped[str] = mapped_column(ForeignKey("automation_triggers.id", ondelete="CASCADE"), primary_key=True)
    repository: Mapped[str] = mapped_column(String(201), primary_key=True)
    number: Mapped[int] = mapped_column(Integer, primary_key=True)
    automation_id: Mapped[str] = mapped_column(ForeignKey("automations.id", ondelete="CASCADE"), index=True)
    state: Mapped[str] = mapped_column(String(10))
    head_sha: Mapped[str] = mapped_column(String(64), default="")
    draft: Mapped[bool] = mapped_column(Boolean, default=False)
    labels: Mapped[list[str]] = mapped_column(JSONType, default=list)
    # A digest of title, body and base branch: a change is an `edited` event.
    content_digest: Mapped[str] = mapped_column(String(64), default="")
    pr_updated_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # Whether the PR has qualified (matched the filters) for this trigger: its first qualification is `opened`.
    qualified: Mapped[bool] = mapped_column(Boolean, default=False)
    updated_at: Mapped[datetime] = updated_at_column()


class GithubPendingFiring(Base):
    """A GitHub firing decided but not yet admitted: written in the transaction that decides it (the PR
    poll state, a merged task-PR link, a verified webhook delivery) and deleted once `fire` answered, so a
    crash or a failed attempt between the decision and the firing loses nothing; a failed attempt is tried
    again at `next_attempt_at` (exponential backoff)."""

    __tablename__ = "github_pending_firings"
    __table_args__ = (UniqueConstraint("automation_id", "dedup_key"),)

    id: Mapped[str] = id_column()
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"), index=True)
    automation_id: Mapped[str] = mapped_column(ForeignKey("automations.id", ondelete="CASCADE"))
    trigger_id: Mapped[str] = mapped_column(ForeignKey("automation_triggers.id", ondelete="CASCADE"), index=True)
    trigger_type: Mapped[str] = mapped_column(String(30))
    dedup_key: Mapped[str] = mapped_column(String(300))
    data: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)
    last_error: Mapped[str | None] = mapped_column(String(500), nullable=True)
    created_at: Mapped[datetime] = created_at_column()


class GithubInstallation(Base):
    """A GitHub App installation routed to a workspace: a verified webhook delivery names `installation.id`,
    and only the workspaces listed here for it are evaluated. Set by an admin."""

    __tablename__ = "github_installations"

    installation_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"), primary_key=True)
    created_by: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = created_at_column()


class GithubWebhookDelivery(Base):
    """A webhook delivery already handled: GitHub's redelivery of it (its `X-GitHub-Delivery`) does nothing, and
    neither does its signed body sent again under another delivery id (`body_digest`, SHA-256 of the body)."""

    __tablename__ = "github_webhook_deliveries"

    # The X-GitHub-Delivery id, or `sha256:<body digest>` for a delivery without one.
    delivery_id: Mapped[str] = mapped_column(String(100), primary_key=True)
    event: Mapped[str] = mapped_column(String(50))
    body_digest: Mapped[str | None] = mapped_column(String(64), nullable=True, unique=True)
    created_at: Mapped[datetime] = created_at_column()


class TaskContribution(Base):
    """A task made from an existing pull request / merge request URL (any provider): its repository keeps
    the target as origin, and the task's local branch pushes to the contributor's source branch through a
    remote of its own. Read by the write preflight and to give the agent its git credentials."""

    __tablename__ = "task_contributions"

    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"), primary_key=True)
    repository_id: Mapped[str] = mapped_column(ForeignKey("repositories.id", ondelete="CASCADE"), primary_key=True)
    provider: Mapped[str] = mapped_column(String(20))
    host: Mapped[str] = mapped_column(String(255))
    target: Mapped[str] = mapped_column(String(300))  # owner/name (GitLab: the project path)
    number: Mapped[int] = mapped_column(Integer)
    url: Mapped[str] = mapped_column(String(1000))
    remote_name: Mapped[str] = mapped_column(String(100))
    source_clone_url: Mapped[str] = mapped_column(String(1000))
    source_branch: Mapped[str] = mapped_column(String(255))
    local_branch: Mapped[str] = mapped_column(String(255))
    head_sha: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = created_at_column()
