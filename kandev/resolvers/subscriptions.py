"""Live subscriptions, fed by the Redis event bus."""

from __future__ import annotations

from collections.abc import AsyncGenerator

import strawberry

from kandev.domain.records import MessageRecord, SessionRecord, TaskRecord, TurnRecord
from kandev.events import session_channel, task_channel
from kandev.schema.context import Info, Loaders
from kandev.schema.enums import SessionEventKind, TaskEventKind
from kandev.schema.session_types import Message, Session, SessionEvent, Turn
from kandev.schema.types import Task, TaskEvent


async def task_events(info: Info, workspace_id: strawberry.ID) -> AsyncGenerator[TaskEvent, None]:
    services = info.context.services
    await services.workspaces.get(str(workspace_id))  # authorize before listening
    async with services.ctx.bus.subscribe(task_channel(str(workspace_id))) as events:
        yield TaskEvent(kind=TaskEventKind.SUBSCRIBED, task=None)
        async for payload in events:
            # A fresh set of loaders per event: the connection's context lives for hours.
            task = Task.of(TaskRecord.from_json(payload["task"]), loaders=Loaders(services))
            yield TaskEvent(kind=TaskEventKind(payload["kind"]), task=task)


async def session_events(info: Info, session_id: strawberry.ID) -> AsyncGenerator[SessionEvent, None]:
    services = info.context.services
    await services.sessions.get(str(session_id))  # authorize before listening
    async with services.ctx.bus.subscribe(session_channel(str(session_id))) as events:
        # Read again once listening: no change can fall between this state and the first event.
        current = await services.sessions.get(str(session_id))
        yield SessionEvent(kind=SessionEventKind.SUBSCRIBED, session=Session.of(SessionRecord.of(current)))
        async for payload in events:
            message = payload.get("message")
            turn = payload.get("turn")
            yield SessionEvent(
                kind=SessionEventKind(payload["kind"]),
                session=Session.of(SessionRecord.from_json(payload["session"]), loaders=Loaders(services)),
                message=Message.of(MessageRecord.from_json(message)) if message else None,
                turn=Turn.of(TurnRecord.from_json(turn)) if turn else None,
            )
