"""Workspace MCP server definitions (what Kandev hands an agent beside `kandev`) and where they are selected."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from kandev.models.base import Base, JSONType, created_at_column, id_column, updated_at_column


class McpServer(Base):
    """A definition: a remote endpoint, an exact npm package version, or an executable. Header and env values
    hold ${secret:NAME} references only, resolved in the session's workspace at launch. No workspace: server-wide
    (an admin's, usable in every workspace)."""

    __tablename__ = "mcp_servers"
    __table_args__ = (UniqueConstraint("workspace_id", "name"),)

    id: Mapped[str] = id_column()
    workspace_id: Mapped[str | None] = mapped_column(
        ForeignKey("workspaces.id", ondelete="CASCADE"), index=True, nullable=True
    )
    name: Mapped[str] = mapped_column(String(64))
    kind: Mapped[str] = mapped_column(String(20))
    url: Mapped[str | None] = mapped_column(String(2000), nullable=True)
    headers: Mapped[dict[str, str]] = mapped_column(JSONType, default=dict)
    package: Mapped[str | None] = mapped_column(String(214), nullable=True)
    version: Mapped[str | None] = mapped_column(String(100), nullable=True)
    command: Mapped[str | None] = mapped_column(String(1000), nullable=True)
    args: Mapped[list[str]] = mapped_column(JSONType, default=list)
    env: Mapped[dict[str, str]] = mapped_column(JSONType, default=dict)
    created_at: Mapped[datetime] = created_at_column()
    updated_at: Mapped[datetime] = updated_at_column()

    def snapshot(self) -> dict[str, Any]:
        """What a session's revision keeps of the definition (references, never secret values)."""
        return {
            "id": self.id,
            "name": self.name,
            "kind": self.kind,
            "url": self.url,
            "headers": dict(self.headers or {}),
            "package": self.package,
            "version": self.version,
            "command": self.command,
            "args": list(self.args or []),
            "env": dict(self.env or {}),
        }


class McpServerSelection(Base):
    """A definition selected at one scope: an agent profile, a repository, a task or a session."""

    __tablename__ = "mcp_server_selections"
    __table_args__ = (
        UniqueConstraint("mcp_server_id", "scope", "target_id"),
        Index("ix_mcp_server_selections_scope_target", "scope", "target_id"),
    )

    id: Mapped[str] = id_column()
    mcp_server_id: Mapped[str] = mapped_column(ForeignKey("mcp_servers.id", ondelete="CASCADE"), index=True)
    scope: Mapped[str] = mapped_column(String(20))
    target_id: Mapped[str] = mapped_column(String(36))
    created_at: Mapped[datetime] = created_at_column()
