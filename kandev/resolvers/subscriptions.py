"""Live subscriptions, fed by the Redis event bus."""

from __future__ import annotations

from collections.abc import AsyncGenerator

import strawberry

from kandev.domain.records import TaskRecord
from kandev.events import task_channel
from kandev.schema.context import Info, Loaders
from kandev.schema.enums import TaskEventKind
from kandev.schema.types import Task, TaskEvent


async def task_events(info: Info, workspace_id: strawberry.ID) -> AsyncGenerator[TaskEvent, None]:
    services = info.context.services
    await services.workspaces.get(str(workspace_id))  # authorize before listening
    async with services.ctx.bus.subscribe(task_channel(str(workspace_id))) as events:
        async for payload in events:
            # A fresh set of loaders per event: the connection's context lives for hours.
            task = Task(record=TaskRecord.from_json(payload["task"]), loaders=Loaders(services))
            yield TaskEvent(kind=TaskEventKind(payload["kind"]), task=task)
