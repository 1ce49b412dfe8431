"""Waiting on a session without racing it: the database is the truth, events only wake the check.

A test that subscribes after starting a turn could miss a fast turn's events; this re-reads the
database on every event (and at least twice a second), so nothing that already happened is missed.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy import func, select

from kandev.models import Message, Turn
from kandev.platform.event_bus import EventBus, session_channel


class SessionWatch:
    def __init__(self, db: Any, session_id: str, events: AsyncIterator[dict[str, Any]]) -> None:
        self.db = db
        self.session_id = session_id
        self._events = events
        self._turns_seen = 0

    async def until(self, check: Callable[[], Awaitable[bool]], timeout: float = 30) -> None:
        async with asyncio.timeout(timeout):
            while not await check():
                # Not wait_for: on Python 3.11 it can swallow the outer timeout's cancel, and this loop never ends.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(0.5):
                        await anext(self._events)

    async def turns_ended(self, count: int = 1, timeout: float = 30) -> list[Turn]:
        """Until at least `count` turns of the session have ended; returns its turns in order."""

        async def enough() -> bool:
            async with self.db.read() as s:
                ended = await s.scalar(
                    select(func.count())
                    .select_from(Turn)
                    .where(Turn.session_id == self.session_id, Turn.ended_at.is_not(None))
                )
            return (ended or 0) >= count

        await self.until(enough, timeout)
        async with self.db.read() as s:
            return list(await s.scalars(select(Turn).where(Turn.session_id == self.session_id).order_by(Turn.seq)))

    async def next_turn_end(self, timeout: float = 30) -> Turn:
        """The session's next ended turn, counting from its first (each call advances by one)."""
        self._turns_seen += 1
        turns = await self.turns_ended(self._turns_seen, timeout)
        return [t for t in turns if t.ended_at is not None][self._turns_seen - 1]

    async def message(self, kind: str | None, text: str, timeout: float = 30) -> None:
        """Until the transcript holds a `kind` message with exactly `text`."""

        async def present() -> bool:
            async with self.db.read() as s:
                query = select(Message.id).where(Message.session_id == self.session_id, Message.text == text)
                if kind is not None:
                    query = query.where(Message.kind == kind)
                found = await s.scalar(query.limit(1))
            return found is not None

        await self.until(present, timeout)


@asynccontextmanager
async def watching(bus: EventBus, db: Any, session_id: str) -> AsyncIterator[SessionWatch]:
    async with bus.subscribe(session_channel(session_id)) as events:
        yield SessionWatch(db, session_id, events)
