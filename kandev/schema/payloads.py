"""Mutation payloads and their result unions (payload or an expected error)."""

from __future__ import annotations

from typing import Annotated

import strawberry

from kandev.schema.config_types import AgentProfile, ExecutorProfile, PermissionRequest, Repository, Secret
from kandev.schema.errors import ConflictError, NotFoundError, PermissionDeniedError, ValidationError
from kandev.schema.session_types import Session
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


@strawberry.type
class StartTaskPayload:
    task: Task
    session: Session


@strawberry.type
class SendMessagePayload:
    task: Task
    session: Session
    queued_prompt_id: strawberry.ID


@strawberry.type
class StopTaskPayload:
    task: Task
    status: str = strawberry.field(description="stopped, or not_running when nothing was live.")
    stopped_sessions: list[Session]


@strawberry.type
class CreateAgentProfilePayload:
    agent_profile: AgentProfile


@strawberry.type
class AgentProfilePayload:
    agent_profile: AgentProfile


@strawberry.type
class ExecutorProfilePayload:
    executor_profile: ExecutorProfile


@strawberry.type
class SecretPayload:
    secret: Secret


@strawberry.type
class ResolvePermissionPayload:
    request: PermissionRequest


StartTaskResult = result("StartTaskResult", StartTaskPayload)
SendMessageResult = result("SendMessageResult", SendMessagePayload)
StopTaskResult = result("StopTaskResult", StopTaskPayload)
CreateAgentProfileResult = result("CreateAgentProfileResult", CreateAgentProfilePayload)
UpdateAgentProfileResult = result("UpdateAgentProfileResult", AgentProfilePayload)
DeleteAgentProfileResult = result("DeleteAgentProfileResult", AgentProfilePayload)
ExecutorProfileResult = result("ExecutorProfileResult", ExecutorProfilePayload)
CreateSecretResult = result("CreateSecretResult", SecretPayload)
DeleteSecretResult = result("DeleteSecretResult", SecretPayload)
ResolvePermissionResult = result("ResolvePermissionResult", ResolvePermissionPayload)


@strawberry.type
class RepositoryPayload:
    repository: Repository


CreateRepositoryResult = result("CreateRepositoryResult", RepositoryPayload)


@strawberry.type
class SpawnSessionPayload:
    task: Task
    session: Session
    queued_prompt_id: strawberry.ID | None


SpawnSessionResult = result("SpawnSessionResult", SpawnSessionPayload)
