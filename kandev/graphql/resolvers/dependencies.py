"""Task dependencies and rich output: thin adapters over their services."""

from __future__ import annotations

import strawberry

from kandev.domain.records import MessageRecord
from kandev.domain.tasks.dependencies import DependencyChange
from kandev.graphql.resolvers.common import attempt, optional_id
from kandev.graphql.schema.context import Info
from kandev.graphql.schema.dependency_types import (
    AddTaskDependencyResult,
    RemoveTaskDependencyResult,
    ShowRichOutputPayload,
    ShowRichOutputResult,
    TaskDependencyInput,
    TaskDependencyPayload,
)
from kandev.graphql.schema.presentation import PresentationArgument
from kandev.graphql.schema.session_types import Message
from kandev.graphql.schema.types import Task


def _changed(value: DependencyChange) -> TaskDependencyPayload:
    return TaskDependencyPayload(
        task=Task.of(value.task),
        depends_on_task_id=strawberry.ID(value.depends_on_task_id),
        changed=value.changed,
    )


async def add_task_dependency(info: Info, input: TaskDependencyInput) -> AddTaskDependencyResult:
    call = info.context.services.dependencies.add(optional_id(input.task_id), str(input.depends_on_task_id))
    return await attempt(call, _changed)


async def remove_task_dependency(info: Info, input: TaskDependencyInput) -> RemoveTaskDependencyResult:
    call = info.context.services.dependencies.remove(optional_id(input.task_id), str(input.depends_on_task_id))
    return await attempt(call, _changed)


async def show_rich_output(info: Info, presentation: PresentationArgument) -> ShowRichOutputResult:
    call = info.context.services.rich_output.show(presentation)
    return await attempt(call, lambda row: ShowRichOutputPayload(transcript_message=Message.of(MessageRecord.of(row))))
