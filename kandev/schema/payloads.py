"""Mutation payloads and their result unions (payload or an expected error)."""

from __future__ import annotations

from typing import Annotated

import strawberry

from kandev.schema.errors import ConflictError, NotFoundError, PermissionDeniedError, ValidationError
from kandev.schema.types import Task


@strawberry.type
class CreateTaskPayload:
    task: Task
    deduplicated: bool = strawberry.field(description="True when an existing task with the externalId answered.")
    creation_complete: bool = strawberry.field(description="True once the task and its setup are fully stored.")


@strawberry.type
class TaskPayload:
    task: Task


def result(name: str, payload: type) -> object:
    return Annotated[
        payload | NotFoundError | ValidationError | ConflictError | PermissionDeniedError,
        strawberry.union(name),
    ]


CreateTaskResult = result("CreateTaskResult", CreateTaskPayload)
UpdateTaskResult = result("UpdateTaskResult", TaskPayload)
MoveTaskResult = result("MoveTaskResult", TaskPayload)
ArchiveTaskResult = result("ArchiveTaskResult", TaskPayload)
DeleteTaskResult = result("DeleteTaskResult", TaskPayload)
