"""Workspace sources: thin adapters over WorkspaceSourceService."""

from __future__ import annotations

import strawberry

from kandev.domain.workspace.sources import AdoptedSource, SourceRequest, SourcesResult
from kandev.graphql.resolvers.common import attempt, optional_id
from kandev.graphql.schema.context import Info
from kandev.graphql.schema.types import Task
from kandev.graphql.schema.workspace_source_types import (
    AddBranchToTaskInput,
    AddBranchToTaskPayload,
    AddBranchToTaskResult,
    AddWorkspaceSourcesInput,
    AddWorkspaceSourcesPayload,
    AddWorkspaceSourcesResult,
    UpdateRepositoryBaseBranchInput,
    UpdateRepositoryBaseBranchPayload,
    UpdateRepositoryBaseBranchResult,
    WorkspaceSource,
    WorkspaceSourceInput,
    WorkspaceSourceType,
)


def _request(source: WorkspaceSourceInput | AddBranchToTaskInput, kind: str) -> SourceRequest:
    """Both inputs name their fields as SourceRequest does; a branch input has no folder fields."""
    fields = ("repository_id", "local_path", "remote_url", "base_branch", "branch", "path", "name")
    return SourceRequest(type=kind, **{name: getattr(source, name, None) for name in fields})


def _source(value: AdoptedSource) -> WorkspaceSource:
    return WorkspaceSource(
        type=WorkspaceSourceType(value.kind),
        id=strawberry.ID(value.id),
        name=value.name,
        added=value.added,
        path=value.path,
        base_branch=value.base_branch,
        branch=value.branch,
    )


def _sources_payload(value: SourcesResult) -> AddWorkspaceSourcesPayload:
    return AddWorkspaceSourcesPayload(
        task=Task.of(value.task),
        sources=[_source(s) for s in value.sources],
        changed=value.changed,
        task_workspace_path=value.task_workspace_path,
    )


async def add_workspace_sources(info: Info, input: AddWorkspaceSourcesInput) -> AddWorkspaceSourcesResult:
    call = info.context.services.workspace_sources.add(
        optional_id(input.task_id), [_request(source, source.type.value) for source in input.sources]
    )
    return await attempt(call, _sources_payload)


async def add_branch_to_task(info: Info, input: AddBranchToTaskInput) -> AddBranchToTaskResult:
    call = info.context.services.workspace_sources.add_branch(optional_id(input.task_id), _request(input, "repository"))
    return await attempt(
        call,
        lambda v: AddBranchToTaskPayload(
            task=Task.of(v.task),
            source=_source(v.source),
            worktree_path=v.worktree_path,
            task_workspace_path=v.task_workspace_path,
            agent_cwd_changed=False,
        ),
    )


async def update_repository_base_branch(
    info: Info, input: UpdateRepositoryBaseBranchInput
) -> UpdateRepositoryBaseBranchResult:
    call = info.context.services.workspace_sources.update_base_branch(
        optional_id(input.task_id), optional_id(input.repository_id), input.base_branch
    )
    return await attempt(
        call,
        lambda v: UpdateRepositoryBaseBranchPayload(
            task=Task.of(v.task),
            repository_id=strawberry.ID(v.repository_id),
            base_branch=v.base_branch,
            previous_base_branch=v.previous_base_branch,
        ),
    )
