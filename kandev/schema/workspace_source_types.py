"""Inputs and payloads of workspace sources: repositories and folders added to an existing task."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, TypeAlias

import strawberry

from kandev.schema.errors import ExpectedError
from kandev.schema.types import Task


@strawberry.enum(description="A git repository (worktree or in place) or a plain folder.")
class WorkspaceSourceType(Enum):
    REPOSITORY = "repository"
    FOLDER = "folder"


@strawberry.input(
    description=(
        "One source. A repository names exactly one of repositoryId (saved in the workspace), localPath (a git "
        "checkout on this machine) or remoteUrl (cloned), plus optional baseBranch (diff base; default the "
        "repository's default branch) and branch (an existing branch to work on; default a new Kandev branch). "
        "A folder takes an absolute path and an optional display name."
    )
)
class WorkspaceSourceInput:
    type: WorkspaceSourceType
    repository_id: strawberry.ID | None = None
    local_path: str | None = None
    remote_url: str | None = None
    base_branch: str | None = None
    branch: str | None = None
    path: str | None = None
    name: str | None = None


@strawberry.input(description="An atomic batch of sources for an idle task.")
class AddWorkspaceSourcesInput:
    sources: list[WorkspaceSourceInput]
    task_id: strawberry.ID | None = strawberry.field(
        default=None, description="Default (and in a task session: your own task or your direct child)."
    )


@strawberry.input(description="One repository on a sibling worktree, while the agent keeps working.")
class AddBranchToTaskInput:
    task_id: strawberry.ID | None = strawberry.field(default=None, description="Default: your own task.")
    repository_id: strawberry.ID | None = None
    local_path: str | None = None
    remote_url: str | None = None
    branch: str | None = strawberry.field(default=None, description="Existing branch to check out, or a new one.")
    base_branch: str | None = None


@strawberry.input(description="The base branch Kandev diffs a task's repository against.")
class UpdateRepositoryBaseBranchInput:
    base_branch: str
    task_id: strawberry.ID | None = strawberry.field(default=None, description="Default: your own task.")
    repository_id: strawberry.ID | None = strawberry.field(
        default=None, description="Needed when the task has more than one repository."
    )


@strawberry.type(description="A source of the task after the call.")
class WorkspaceSource:
    type: WorkspaceSourceType
    id: strawberry.ID = strawberry.field(description="The repository id, or the folder's path.")
    name: str
    added: bool = strawberry.field(description="False when the task already had it (an exact retry).")
    path: str | None = strawberry.field(description="Where it is on disk; null until the task's first launch.")
    base_branch: str | None
    branch: str | None


@strawberry.type
class AddWorkspaceSourcesPayload:
    task: Task
    sources: list[WorkspaceSource]
    changed: bool = strawberry.field(description="False when every source was already there.")
    task_workspace_path: str | None = strawberry.field(
        description="The task's Files root (worktree executor, once materialized)."
    )


@strawberry.type
class AddBranchToTaskPayload:
    task: Task
    source: WorkspaceSource
    worktree_path: str | None = strawberry.field(description="The new repository location; null when deferred.")
    task_workspace_path: str | None = strawberry.field(description="The Files root; null when deferred.")
    agent_cwd_changed: bool = strawberry.field(description="Always false: the agent keeps its directory.")


@strawberry.type
class UpdateRepositoryBaseBranchPayload:
    task: Task
    repository_id: strawberry.ID
    base_branch: str
    previous_base_branch: str | None


AddWorkspaceSourcesResult: TypeAlias = Annotated[
    AddWorkspaceSourcesPayload | ExpectedError, strawberry.union("AddWorkspaceSourcesResult")
]
AddBranchToTaskResult: TypeAlias = Annotated[
    AddBranchToTaskPayload | ExpectedError, strawberry.union("AddBranchToTaskResult")
]
UpdateRepositoryBaseBranchResult: TypeAlias = Annotated[
    UpdateRepositoryBaseBranchPayload | ExpectedError, strawberry.union("UpdateRepositoryBaseBranchResult")
]
