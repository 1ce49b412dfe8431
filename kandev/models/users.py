"""Users and their personal access tokens (stored hashed)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, ForeignKey, Integer, String, text
from sqlalchemy.orm import Mapped, mapped_column

from kandev.models.base import Base, UTCDateTime, created_at_column, id_column


class User(Base):
    __tablename__ = "users"

    id: Mapped[str] = id_column()
    login: Mapped[str] = mapped_column(String(100), unique=True)
    name: Mapped[str] = mapped_column(String(200), default="")
    # Admins decide what the machine runs: agent commands and env, executors, local MCP servers.
    admin: Mapped[bool] = mapped_column(Boolean, default=False, server_default=text("false"))
    # Who their commits are by (account settings, asked for at their first commit from Kandev).
    git_name: Mapped[str | None] = mapped_column(String(200), nullable=True)
    git_email: Mapped[str | None] = mapped_column(String(320), nullable=True)
    created_at: Mapped[datetime] = created_at_column()
    # Removed (`kandev user remove`): none of the user's tokens, nor their agents' session tokens, works any more;
    # the login stays taken and their workspaces stay for an admin to look at.
    removed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class AccessToken(Base):
    __tablename__ = "access_tokens"

    id: Mapped[str] = id_column()
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    token_hash: Mapped[str] = mapped_column(String(128), unique=True)
    created_at: Mapped[datetime] = created_at_column()
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class AgentIdentity(Base):
    """The OS id (from KANDEV_AGENT_UIDS) a user's agents run as. An id is never given to anyone else, even
    after its user is removed: files its agents left behind must not become a new user's."""

    __tablename__ = "agent_identities"

    uid: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    user_id: Mapped[str | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"), unique=True, nullable=True)
    created_at: Mapped[datetime] = created_at_column()
