"""Row counts of the tables bad input could touch: equal before and after means it changed nothing."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from kandev.models import AgentProfile, QueuedPrompt, Session, Task, TaskRepository, Workflow, WorkflowStep, Workspace

TABLES = (Workspace, Workflow, WorkflowStep, Task, TaskRepository, Session, QueuedPrompt, AgentProfile)


async def row_counts(db: Any) -> dict[str, int]:
    async with db.read() as session:
        return {
            table.__tablename__: (await session.scalar(select(func.count()).select_from(table))) or 0
            for table in TABLES
        }
