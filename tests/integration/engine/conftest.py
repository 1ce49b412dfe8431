"""Fixtures for workflow-engine tests: a worker running scripted agents, and agent-side services."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from kandev.models import Message, StepTransition
from kandev.platform.event_bus import session_channel
from kandev.platform.settings import Settings
from tests.support.factories import settings_for
from tests.support.workflows import gate_in_progress


@pytest.fixture
def settings(database_url: str, redis_url: str, tmp_path: Path) -> Settings:
    return settings_for(database_url, redis_url, tmp_path, turn_lease_seconds=5, clarification_timeout_s=1.0)


async def next_event(events: Any, predicate: Any, timeout: float = 30) -> dict[str, Any]:
    async with asyncio.timeout(timeout):
        async for event in events:
            if predicate(event):
                return event
    raise AssertionError("event stream ended")


def turn_ended(event: dict[str, Any]) -> bool:
    return event["kind"] == "TURN_ENDED"


async def history(db: Any, task_id: str) -> list[StepTransition]:
    async with db.read() as s:
        rows = await s.scalars(
            select(StepTransition).where(StepTransition.task_id == task_id).order_by(StepTransition.created_at)
        )
        return list(rows)


async def messages(db: Any, session_id: str, kind: str | None = None) -> list[Message]:
    async with db.read() as s:
        query = select(Message).where(Message.session_id == session_id).order_by(Message.seq)
        if kind:
            query = query.where(Message.kind == kind)
        return list(await s.scalars(query))


__all__ = ["gate_in_progress", "history", "messages", "next_event", "session_channel", "turn_ended"]
