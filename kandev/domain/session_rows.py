"""A task's sessions as rows: whether one has ended, the task's sessions in the order people see them, and
one session locked for a transaction. Every aggregate that starts, stops or cleans up after agents reads them
this way (only the sessions aggregate writes them)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.models import Session
from kandev.models.enums import TERMINAL_SESSION_STATES, SessionState


def is_terminal(session: Session) -> bool:
    return SessionState(session.state) in TERMINAL_SESSION_STATES


async def lock_session(db: AsyncSession, session_id: str) -> Session | None:
    """The session row, locked for this transaction (SQLite's BEGIN IMMEDIATE already serializes)."""
    return await db.scalar(
        select(Session).where(Session.id == session_id).with_for_update().execution_options(populate_existing=True)
    )


async def task_sessions(db: AsyncSession, task_id: str) -> list[Session]:
    """Primary first, then newest first."""
    rows = await db.scalars(
        select(Session)
        .where(Session.task_id == task_id)
        .order_by(Session.is_primary.desc(), Session.created_at.desc(), Session.id.desc())
    )
    return list(rows)
