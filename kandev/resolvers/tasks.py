"""Task queries and mutations."""

from __future__ import annotations

from typing import Annotated

import strawberry

from kandev.domain.records import TaskRecord
from kandev.domain.repositories import RepositoryChoice
from kandev.domain.tasks import CreatedTask, CreateTask, TaskFilter
from kandev.models.enums import TaskState as StoredTaskState
from kandev.resolvers.common import attempt, optional_id
from kandev.schema.context import Info
from kandev.schema.enums import TaskState
from kandev.schema.inputs import CreateTaskInput, MoveTaskInput, UpdateTaskInput
from kandev.schema.payloads import (
    ArchiveTaskResult,
    CreateTaskPayload,
    CreateTaskResult,
    DeleteTaskResult,
    MoveTaskResult,
    TaskPayload,
    UpdateTaskResult,
)
from kandev.schema.types import PageInfo, Task, TaskConnection, TaskEdge


async def task(info: Info, id: strawberry.ID) -> Task:
    return Task(record=await info.context.services.tasks.get(str(id)))


async def tasks(
    info: Info,
    workspace_id: strawberry.ID,
    first: int = 50,
    after: str | None = None,
    workflow_step_id: strawberry.ID | None = None,
    state: TaskState | None = None,
    parent_id: strawberry.ID | None = None,
    archived: Annotated[
        bool | None, strawberry.argument(description="false: live tasks; true: archived ones; null: both")
    ] = False,
) -> TaskConnection:
    filters = TaskFilter(
        workflow_step_id=optional_id(workflow_step_id),
        state=StoredTaskState(state.value) if state else None,
        parent_id=optional_id(parent_id),
        archived=archived,
    )
    page = await info.context.services.tasks.list(str(workspace_id), filters, first=first, after=after)
    edges = [TaskEdge(cursor=c, node=Task(record=r)) for r, c in zip(page.records, page.cursors, strict=True)]
    return TaskConnection(
        edges=edges,
        page_info=PageInfo(has_next_page=page.has_next_page, end_cursor=page.cursors[-1] if page.cursors else None),
        total_count=page.total_count,
    )


def _created(value: CreatedTask) -> CreateTaskPayload:
    return CreateTaskPayload(
        task=Task(record=value.task),
        deduplicated=value.deduplicated,
        creation_complete=value.creation_complete,
    )


def _task_payload(record: TaskRecord) -> TaskPayload:
    return TaskPayload(task=Task(record=record))


async def create_task(info: Info, input: CreateTaskInput) -> CreateTaskResult:
    command = CreateTask(
        workspace_id=str(input.workspace_id),
        title=input.title,
        prompt=input.prompt or "",
        parent_id=optional_id(input.parent_id),
        autopilot=bool(input.autopilot),
        external_id=input.external_id,
        workflow_id=optional_id(input.workflow_id),
        workflow_step_id=optional_id(input.workflow_step_id),
        agent_profile_id=optional_id(input.agent_profile_id),
        executor_profile_id=optional_id(input.executor_profile_id),
        start_agent=input.start_agent,
        blocked_by=[str(i) for i in input.blocked_by or []],
        start_when_unblocked=input.start_when_unblocked,
        repositories=[
            RepositoryChoice(repository_id=str(r.repository_id), base_branch=r.base_branch)
            for r in input.repositories or []
        ],
    )
    return await attempt(info.context.services.tasks.create(command), _created)


async def update_task(info: Info, input: UpdateTaskInput) -> UpdateTaskResult:
    state = StoredTaskState(input.state.value) if input.state else None
    call = info.context.services.tasks.update(
        str(input.task_id),
        title=input.title,
        state=state,
        deferred_launch_prompt=input.deferred_launch_prompt,
    )
    return await attempt(call, _task_payload)


async def move_task(info: Info, input: MoveTaskInput) -> MoveTaskResult:
    call = info.context.services.tasks.move(str(input.task_id), str(input.workflow_step_id))
    return await attempt(call, _task_payload)


async def archive_task(info: Info, task_id: strawberry.ID) -> ArchiveTaskResult:
    return await attempt(info.context.services.tasks.archive(str(task_id)), _task_payload)


async def delete_task(info: Info, task_id: strawberry.ID) -> DeleteTaskResult:
    return await attempt(info.context.services.tasks.delete(str(task_id)), _task_payload)
