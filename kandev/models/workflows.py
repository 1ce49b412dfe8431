"""Workflows and their ordered steps, including the step events stored as JSON."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from kandev.models.base import Base, JSONType, created_at_column, id_column, updated_at_column


class Workflow(Base):
    __tablename__ = "workflows"

    id: Mapped[str] = id_column()
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = created_at_column()
    updated_at: Mapped[datetime] = updated_at_column()


class WorkflowStep(Base):
    __tablename__ = "workflow_steps"

    id: Mapped[str] = id_column()
    workflow_id: Mapped[str] = mapped_column(ForeignKey("workflows.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    position: Mapped[int] = mapped_column(Integer)
    is_start_step: Mapped[bool] = mapped_column(Boolean, default=False)
    is_final_step: Mapped[bool] = mapped_column(Boolean, default=False)
    prompt: Mapped[str] = mapped_column(Text, default="")
    # {"on_enter": [...], "on_turn_start": [...], "on_turn_complete": [...], "on_exit": [...],
    #  "on_children_completed": [...]}, each action an object with a "type".
    events: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    auto_advance_requires_signal: Mapped[bool] = mapped_column(Boolean, default=False)
    allow_manual_move: Mapped[bool] = mapped_column(Boolean, default=True)
    wip_limit: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[datetime] = created_at_column()
    updated_at: Mapped[datetime] = updated_at_column()
