"""Transcript messages and session events: every change is stored, then published after commit."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from kandev.domain.context import UnitOfWork
from kandev.domain.feeds import emit_session_event
from kandev.domain.session_rows import lock_session
from kandev.models import Message, Session
from kandev.models.base import new_id, utcnow


async def next_message_seq(uow: UnitOfWork, session_id: str) -> int:
    current = await uow.db.scalar(select(func.max(Message.seq)).where(Message.session_id == session_id))
    return (current or 0) + 1


async def append_message(
    uow: UnitOfWork,
    session: Session,
    kind: str,
    text: str,
    *,
    turn_id: str | None = None,
    data: dict[str, Any] | None = None,
) -> Message:
    """Append to the transcript; the session row lock orders `seq` between concurrent writers."""
    await lock_session(uow.db, session.id)
    now = utcnow()
    message = Message(
        id=new_id(),
        session_id=session.id,
        turn_id=turn_id,
        seq=await next_message_seq(uow, session.id),
        kind=kind,
        text=text,
        data=data or {},
        created_at=now,
        updated_at=now,
    )
    uow.db.add(message)
    await uow.db.flush()
    emit_session_event(uow, "MESSAGE_APPENDED", session, message=message)
    return message


def update_message(
    uow: UnitOfWork,
    session: Session,
    message: Message,
    *,
    text: str | None = None,
    data: dict[str, Any] | None = None,
) -> None:
    if text is not None:
        message.text = text
    if data is not None:
        message.data = data
    message.updated_at = utcnow()
    emit_session_event(uow, "MESSAGE_UPDATED", session, message=message)
