"""Task queries and mutations."""

from __future__ import annotations

from typing import Annotated, Any

import strawberry

from kandev.domain.records import TaskRecord
from kandev.domain.tasks.activity import NO_ACTIVITY
from kandev.domain.tasks.activity import TaskActivity as TaskActivityRecord
from kandev.domain.tasks.service import CreatedTask, TaskFilter
from kandev.domain.usage.service import UsageTotals
from kandev.graphql.resolvers.common import attempt, optional_id
from kandev.graphql.schema.context import Info, Loaders
from kandev.graphql.schema.declare import argument
from kandev.graphql.schema.enums import TaskState
from kandev.graphql.schema.file_preview_types import FilePreviewResult, file_preview_of
from kandev.graphql.schema.inputs import CreateTaskInput, MoveTaskInput, TaskIdArgument, UpdateTaskInput
from kandev.graphql.schema.payloads import (
    ArchiveTaskPayload,
    ArchiveTaskResult,
    CreateTaskPayload,
    CreateTaskResult,
    DeleteTaskResult,
    MoveTaskResult,
    TaskPayload,
    UpdateTaskResult,
)
from kandev.graphql.schema.selection import selects
from kandev.graphql.schema.types import PageInfo, Task, TaskConnection, TaskEdge
from kandev.models.enums import PendingAction
from kandev.models.enums import TaskState as StoredTaskState


async def task(info: Info, id: strawberry.ID) -> Task:
    return Task.of(await info.context.services.tasks.get(str(id)))


async def file_preview(
    info: Info,
    task_id: Annotated[strawberry.ID, argument("The task whose files to read; the same visibility as the task.")],
    path: Annotated[
        str,
        argument(
            "A path relative to the repository's folder in the task, as a rich-output file block names it (no "
            "absolute path, '..', NUL byte, or link leading outside)."
        ),
    ],
    repository: Annotated[
        str | None,
        argument(
            "One of the task's repositories, by name (a file block's repo) or id; null: its first repository (or "
            "its scratch directory when it has none)."
        ),
    ] = None,
) -> FilePreviewResult:
    call = info.context.services.file_previews.preview(str(task_id), path, repository)
    return await attempt(call, file_preview_of)


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
    services = info.context.services
    page = await services.tasks.list(
        str(workspace_id), filters, first=first, after=after, count=selects(info, "totalCount")
    )
    # One read for the whole page instead of a loader call per task.
    pending: list[PendingAction | None] = [None] * len(page.records)
    if page.records and (selects(info, "nodes", "pendingAction") or selects(info, "edges", "node", "pendingAction")):
        pending = list(await services.lookups.pending_actions([r.id for r in page.records]))
    activity: list[TaskActivityRecord | None] = [None] * len(page.records)
    if page.records and (selects(info, "nodes", "activity") or selects(info, "edges", "node", "activity")):
        activity = list(await services.lookups.task_activity([r.id for r in page.records]))
    edges = [
        TaskEdge(cursor=c, node=Task.of(r, pending=p, activity=a))
        for r, c, p, a in zip(page.records, page.cursors, pending, activity, strict=True)
    ]
    return TaskConnection(
        edges=edges,
        page_info=PageInfo(has_next_page=page.has_next_page, end_cursor=page.cursors[-1] if page.cursors else None),
        count=page.total_count,
    )


def _created(value: CreatedTask, loaders: Loaders) -> CreateTaskPayload:
    if value.blocked_by is not None:
        # What the create just wrote and read answers the payload's usual questions without reading again.
        loaders.blockers_by_task.prime(value.task.id, value.blocked_by)
        loaders.pending_action.prime(value.task.id, PendingAction.NONE)
        loaders.task_activity.prime(value.task.id, NO_ACTIVITY)  # no session yet: nothing to read
        loaders.task_usage.prime(value.task.id, UsageTotals.none(value.task.id))  # no turn yet: nothing spent
        loaders.ship_requests.prime(value.task.id, [])  # nothing shipped yet: no pull request
    return CreateTaskPayload(
        task=Task.of(value.task),
        deduplicated=value.deduplicated,
        creation_complete=value.creation_complete,
    )


def _task_payload(record: TaskRecord) -> TaskPayload:
    return TaskPayload(task=Task.of(record))


async def create_task(info: Info, input: CreateTaskInput) -> CreateTaskResult:
    return await attempt(
        info.context.services.tasks.create(input.to_command()), lambda v: _created(v, info.context.loaders)
    )


async def update_task(info: Info, input: UpdateTaskInput) -> UpdateTaskResult:
    state = StoredTaskState(input.state.value) if input.state else None
    services = info.context.services
    fix = input.fix_failing_checks

    async def update() -> Any:
        if input.budget is not None:
            await services.usage.set_task_budget(str(input.task_id), input.budget.limit_tokens, input.budget.limit_usd)
        if fix is not None or input.auto_merge is not None:
            await services.ship.configure(
                str(input.task_id),
                fix_enabled=fix.enabled if fix else None,
                max_rounds=fix.max_rounds if fix else None,
                auto_merge=input.auto_merge,
            )
        return await services.tasks.update(
            str(input.task_id), title=input.title, state=state, deferred_launch_prompt=input.deferred_launch_prompt
        )

    return await attempt(update(), _task_payload)


async def move_task(info: Info, input: MoveTaskInput) -> MoveTaskResult:
    call = info.context.services.tasks.move(str(input.task_id), str(input.workflow_step_id))
    return await attempt(call, _task_payload)


async def archive_task(info: Info, task_id: TaskIdArgument) -> ArchiveTaskResult:
    return await attempt(
        info.context.services.tasks.archive(str(task_id)),
        lambda archived: ArchiveTaskPayload(task=Task.of(archived.task), already_archived=archived.already_archived),
    )


async def delete_task(info: Info, task_id: TaskIdArgument) -> DeleteTaskResult:
    return await attempt(info.context.services.tasks.delete(str(task_id)), _task_payload)
