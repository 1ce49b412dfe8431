"""Live subscriptions, fed by the Redis event bus."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from functools import partial

import strawberry

from kandev.domain.records import MessageRecord, SessionRecord, TaskRecord, TurnRecord
from kandev.domain.services import Services
from kandev.domain.workspace.settings_events import heard_by
from kandev.graphql.schema.context import Info, Loaders
from kandev.graphql.schema.enums import SessionEventKind, TaskEventKind, WorkspaceEventKind
from kandev.graphql.schema.fanout import sent_shared, shared_event
from kandev.graphql.schema.session_types import Message, Session, SessionEvent, Turn
from kandev.graphql.schema.types import Task, TaskEvent, WorkspaceEvent
from kandev.platform.event_bus import (
    SessionEventPayload,
    TaskEventPayload,
    server_settings_channel,
    session_channel,
    settings_channel,
    task_channel,
)


async def task_events(info: Info, workspace_id: strawberry.ID) -> AsyncGenerator[TaskEvent, None]:
    services = info.context.services
    await services.workspaces.get(str(workspace_id))  # authorize before listening
    async with services.ctx.bus.subscribe(task_channel(str(workspace_id))) as events:
        yield TaskEvent(kind=TaskEventKind.SUBSCRIBED, task=None)
        async for payload in events:
            # Fresh loaders per event (the connection's context lives for hours), shared by every subscriber
            # of this process who sees what this one sees.
            event = shared_event(events.memo, services.principal, partial(task_event, payload, services))
            if not await sent_shared(event, info):
                yield event


async def session_events(info: Info, session_id: strawberry.ID) -> AsyncGenerator[SessionEvent, None]:
    services = info.context.services
    await services.sessions.get(str(session_id))  # authorize before listening
    async with services.ctx.bus.subscribe(session_channel(str(session_id))) as events:
        # Read again once listening: no change can fall between this state and the first event.
        current = await services.sessions.get(str(session_id))
        yield SessionEvent(kind=SessionEventKind.SUBSCRIBED, session=Session.of(SessionRecord.of(current)))
        async for payload in events:
            event = shared_event(events.memo, services.principal, partial(session_event, payload, services))
            if not await sent_shared(event, info):
                yield event


async def workspace_events(info: Info, workspace_id: strawberry.ID) -> AsyncGenerator[WorkspaceEvent, None]:
    services = info.context.services
    principal = services.principal
    await services.workspaces.get(str(workspace_id))  # authorize before listening: a stranger gets nothing
    channels = (settings_channel(str(workspace_id)), server_settings_channel())
    async with services.ctx.bus.subscribe_all(*channels) as events:
        yield WorkspaceEvent(kind=WorkspaceEventKind.SUBSCRIBED)
        async for payload in events:
            if heard_by(payload, principal):
                yield WorkspaceEvent(kind=WorkspaceEventKind(payload["kind"]), id=strawberry.ID(payload["id"]))


def task_event(payload: TaskEventPayload, services: Services) -> TaskEvent:
    task = Task.of(TaskRecord.from_json(payload["task"]), loaders=Loaders(services))
    return TaskEvent.of(
        TaskEventKind(payload["kind"]), task, payload.get("changed_files"), payload.get("review_thread")
    )


def session_event(payload: SessionEventPayload, services: Services) -> SessionEvent:
    message = payload.get("message")
    turn = payload.get("turn")
    return SessionEvent(
        kind=SessionEventKind(payload["kind"]),
        session=Session.of(SessionRecord.from_json(payload["session"]), loaders=Loaders(services)),
        message=Message.of(MessageRecord.from_json(message)) if message else None,
        turn=Turn.of(TurnRecord.from_json(turn)) if turn else None,
    )
