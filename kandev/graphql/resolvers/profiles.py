"""Agent and executor profiles, secrets and permission requests."""

from __future__ import annotations

from typing import Any

import strawberry

from kandev.domain.errors import ValidationError
from kandev.domain.workspace.agent_profiles import AgentProfileFields
from kandev.graphql.resolvers.common import attempt
from kandev.graphql.schema.config_types import AgentProfile, ExecutorProfile, PermissionRequest, Repository, Secret
from kandev.graphql.schema.context import Info
from kandev.graphql.schema.executor_types import ExecutorTestPayload
from kandev.graphql.schema.inputs import (
    CreateAgentProfileInput,
    CreateExecutorProfileInput,
    CreateRepositoryInput,
    CreateSecretInput,
    ReplaceSecretInput,
    ResolvePermissionInput,
    UpdateAgentProfileInput,
    UpdateExecutorProfileInput,
)
from kandev.graphql.schema.payloads import (
    AgentProfilePayload,
    CreateAgentProfilePayload,
    CreateAgentProfileResult,
    CreateRepositoryResult,
    CreateSecretResult,
    DeleteAgentProfileResult,
    DeleteSecretResult,
    ExecutorProfilePayload,
    ExecutorProfileResult,
    ExecutorTestResult,
    ReplaceSecretResult,
    RepositoryPayload,
    ResolvePermissionPayload,
    ResolvePermissionResult,
    SecretPayload,
    UpdateAgentProfileResult,
)
from kandev.models.enums import AgentKind as StoredKind
from kandev.models.enums import ExecutorKind as StoredExecutorKind
from kandev.models.enums import PermissionPolicy as StoredPolicy


async def agent_profiles(info: Info, workspace_id: strawberry.ID) -> list[AgentProfile]:
    return [AgentProfile(row=p) for p in await info.context.services.agent_profiles.list(str(workspace_id))]


async def repositories(info: Info, workspace_id: strawberry.ID) -> list[Repository]:
    return [Repository(row=r) for r in await info.context.services.repositories.list(str(workspace_id))]


async def create_repository(info: Info, input: CreateRepositoryInput) -> CreateRepositoryResult:
    call = info.context.services.repositories.create(
        str(input.workspace_id), input.name, input.path, input.default_branch
    )
    return await attempt(call, lambda r: RepositoryPayload(repository=Repository(row=r)))


async def secrets(info: Info, workspace_id: strawberry.ID) -> list[Secret]:
    return [Secret(row=s) for s in await info.context.services.secrets.list(str(workspace_id))]


async def pending_permissions(
    info: Info,
    workspace_id: strawberry.ID,
    task_id: strawberry.ID | None = None,
    session_id: strawberry.ID | None = None,
) -> list[PermissionRequest]:
    rows = await info.context.services.permissions.pending(
        str(workspace_id), str(task_id) if task_id else None, str(session_id) if session_id else None
    )
    return [PermissionRequest(row=r) for r in rows]


def _fields(input: CreateAgentProfileInput | UpdateAgentProfileInput) -> AgentProfileFields:
    env: Any = input.env
    return AgentProfileFields(
        name=input.name,
        kind=StoredKind(input.kind.value) if input.kind else None,
        command=input.command,
        env=env,
        supports_mcp=input.supports_mcp,
        permission_policy=StoredPolicy(input.permission_policy.value) if input.permission_policy else None,
    )


def _target_workspace(value: object) -> str | None:
    """The input's workspaceId: absent is an error, unlike an explicit null (a server-wide profile)."""
    if value is strawberry.UNSET:
        raise ValidationError("workspaceId is required (null for a server-wide profile)", field="workspace_id")
    return str(value) if value is not None else None


async def _create_profile(info: Info, input: CreateAgentProfileInput) -> Any:
    return await info.context.services.agent_profiles.create(_target_workspace(input.workspace_id), _fields(input))


async def _update_profile(info: Info, input: UpdateAgentProfileInput) -> Any:
    return await info.context.services.agent_profiles.update(str(input.agent_profile_id), _fields(input))


async def create_agent_profile(info: Info, input: CreateAgentProfileInput) -> CreateAgentProfileResult:
    return await attempt(
        _create_profile(info, input), lambda p: CreateAgentProfilePayload(agent_profile=AgentProfile(row=p))
    )


async def update_agent_profile(info: Info, input: UpdateAgentProfileInput) -> UpdateAgentProfileResult:
    return await attempt(_update_profile(info, input), lambda p: AgentProfilePayload(agent_profile=AgentProfile(row=p)))


async def delete_agent_profile(info: Info, agent_profile_id: strawberry.ID) -> DeleteAgentProfileResult:
    call = info.context.services.agent_profiles.delete(str(agent_profile_id))
    return await attempt(call, lambda p: AgentProfilePayload(agent_profile=AgentProfile(row=p)))


async def create_secret(info: Info, input: CreateSecretInput) -> CreateSecretResult:
    call = info.context.services.secrets.create(str(input.workspace_id), input.name, input.value)
    return await attempt(call, lambda s: SecretPayload(secret=Secret(row=s)))


async def replace_secret(info: Info, input: ReplaceSecretInput) -> ReplaceSecretResult:
    call = info.context.services.secrets.replace(str(input.secret_id), input.value)
    return await attempt(call, lambda s: SecretPayload(secret=Secret(row=s)))


async def delete_secret(info: Info, secret_id: strawberry.ID) -> DeleteSecretResult:
    return await attempt(
        info.context.services.secrets.delete(str(secret_id)), lambda s: SecretPayload(secret=Secret(row=s))
    )


async def resolve_permission(info: Info, input: ResolvePermissionInput) -> ResolvePermissionResult:
    call = info.context.services.permissions.resolve(
        str(input.request_id),
        input.option_id,
        task_id=str(input.task_id) if input.task_id else None,
        session_id=str(input.session_id) if input.session_id else None,
        pending_id=input.pending_id,
    )
    return await attempt(call, lambda r: ResolvePermissionPayload(request=PermissionRequest(row=r)))


async def executor_profiles(info: Info, workspace_id: strawberry.ID) -> list[ExecutorProfile]:
    return [ExecutorProfile(row=p) for p in await info.context.services.executor_profiles.list(str(workspace_id))]


def _executor(row: Any) -> ExecutorProfilePayload:
    return ExecutorProfilePayload(executor_profile=ExecutorProfile(row=row))


async def _create_executor(info: Info, input: CreateExecutorProfileInput) -> Any:
    workspace_id = _target_workspace(input.workspace_id)
    kind = StoredExecutorKind(input.kind.value)
    return await info.context.services.executor_profiles.create(workspace_id, input.name, kind, input.given())


async def create_executor_profile(info: Info, input: CreateExecutorProfileInput) -> ExecutorProfileResult:
    return await attempt(_create_executor(info, input), _executor)


async def update_executor_profile(info: Info, input: UpdateExecutorProfileInput) -> ExecutorProfileResult:
    kind = StoredExecutorKind(input.kind.value) if input.kind else None
    call = info.context.services.executor_profiles.update(
        str(input.executor_profile_id), name=input.name, kind=kind, config=input.given() or None
    )
    return await attempt(call, _executor)


async def test_executor_profile(info: Info, executor_profile_id: strawberry.ID) -> ExecutorTestResult:
    def found(report: dict[str, Any]) -> ExecutorTestPayload:
        return ExecutorTestPayload(
            ok=bool(report["ok"]), worker=report["worker"], findings=list(report["findings"]), error=report["error"]
        )

    return await attempt(info.context.services.executor_profiles.test(str(executor_profile_id)), found)


async def delete_executor_profile(info: Info, executor_profile_id: strawberry.ID) -> ExecutorProfileResult:
    return await attempt(info.context.services.executor_profiles.delete(str(executor_profile_id)), _executor)
