"""Agent profiles (what to run) and executor profiles (where it runs), per workspace or server-wide
(no workspace: defined by an admin, listed in every workspace)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from kandev.models.base import Base, JSONType, created_at_column, id_column, updated_at_column


class AgentProfile(Base):
    __tablename__ = "agent_profiles"
    __table_args__ = (UniqueConstraint("workspace_id", "name"),)

    id: Mapped[str] = id_column()
    workspace_id: Mapped[str | None] = mapped_column(
        ForeignKey("workspaces.id", ondelete="CASCADE"), index=True, nullable=True
    )
    name: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(20))
    command: Mapped[list[str]] = mapped_column(JSONType, default=list)
    env: Mapped[dict[str, str]] = mapped_column(JSONType, default=dict)
    supports_mcp: Mapped[bool] = mapped_column(Boolean, default=True)
    permission_policy: Mapped[str] = mapped_column(String(10), default="ASK")
    builtin: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = created_at_column()
    updated_at: Mapped[datetime] = updated_at_column()


class ExecutorProfile(Base):
    __tablename__ = "executor_profiles"
    __table_args__ = (UniqueConstraint("workspace_id", "name"),)

    id: Mapped[str] = id_column()
    workspace_id: Mapped[str | None] = mapped_column(
        ForeignKey("workspaces.id", ondelete="CASCADE"), index=True, nullable=True
    )
    name: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(20))
    config: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    builtin: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = created_at_column()
