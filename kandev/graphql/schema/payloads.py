"""Mutation payloads and their result unions (payload or an expected error)."""

from __future__ import annotations

from typing import Annotated, TypeAlias

import strawberry

from kandev.graphql.schema.config_types import AgentProfile, ExecutorProfile, PermissionRequest, Repository, Secret
from kandev.graphql.schema.errors import ExpectedError
from kandev.graphql.schema.executor_types import ExecutorTestPayload
from kandev.graphql.schema.session_types import Session
from kandev.graphql.schema.types import Task


@strawberry.type
class CreateTaskPayload:
    task: Task
    deduplicated: bool = strawberry.field(description="True when an existing task with the externalId answered.")
    creation_complete: bool = strawberry.field(description="True once the task and its setup are fully stored.")


@strawberry.type
class TaskPayload:
    task: Task


@strawberry.type
class ArchiveTaskPayload:
    task: Task
    already_archived: bool = strawberry.field(
        description="True when the task was archived already: the call changed nothing."
    )


CreateTaskResult: TypeAlias = Annotated[CreateTaskPayload | ExpectedError, strawberry.union("CreateTaskResult")]
UpdateTaskResult: TypeAlias = Annotated[TaskPayload | ExpectedError, strawberry.union("UpdateTaskResult")]
MoveTaskResult: TypeAlias = Annotated[TaskPayload | ExpectedError, strawberry.union("MoveTaskResult")]
ArchiveTaskResult: TypeAlias = Annotated[ArchiveTaskPayload | ExpectedError, strawberry.union("ArchiveTaskResult")]
DeleteTaskResult: TypeAlias = Annotated[TaskPayload | ExpectedError, strawberry.union("DeleteTaskResult")]


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


StartTaskResult: TypeAlias = Annotated[StartTaskPayload | ExpectedError, strawberry.union("StartTaskResult")]
SendMessageResult: TypeAlias = Annotated[SendMessagePayload | ExpectedError, strawberry.union("SendMessageResult")]
StopTaskResult: TypeAlias = Annotated[StopTaskPayload | ExpectedError, strawberry.union("StopTaskResult")]
CreateAgentProfileResult: TypeAlias = Annotated[
    CreateAgentProfilePayload | ExpectedError, strawberry.union("CreateAgentProfileResult")
]
UpdateAgentProfileResult: TypeAlias = Annotated[
    AgentProfilePayload | ExpectedError, strawberry.union("UpdateAgentProfileResult")
]
DeleteAgentProfileResult: TypeAlias = Annotated[
    AgentProfilePayload | ExpectedError, strawberry.union("DeleteAgentProfileResult")
]
ExecutorTestResult: TypeAlias = Annotated[ExecutorTestPayload | ExpectedError, strawberry.union("ExecutorTestResult")]
ExecutorProfileResult: TypeAlias = Annotated[
    ExecutorProfilePayload | ExpectedError, strawberry.union("ExecutorProfileResult")
]
CreateSecretResult: TypeAlias = Annotated[SecretPayload | ExpectedError, strawberry.union("CreateSecretResult")]
ReplaceSecretResult: TypeAlias = Annotated[SecretPayload | ExpectedError, strawberry.union("ReplaceSecretResult")]
DeleteSecretResult: TypeAlias = Annotated[SecretPayload | ExpectedError, strawberry.union("DeleteSecretResult")]
ResolvePermissionResult: TypeAlias = Annotated[
    ResolvePermissionPayload | ExpectedError, strawberry.union("ResolvePermissionResult")
]


@strawberry.type
class RepositoryPayload:
    repository: Repository


CreateRepositoryResult: TypeAlias = Annotated[
    RepositoryPayload | ExpectedError, strawberry.union("CreateRepositoryResult")
]


@strawberry.type
class SpawnSessionPayload:
    task: Task
    session: Session
    queued_prompt_id: strawberry.ID | None


SpawnSessionResult: TypeAlias = Annotated[SpawnSessionPayload | ExpectedError, strawberry.union("SpawnSessionResult")]
