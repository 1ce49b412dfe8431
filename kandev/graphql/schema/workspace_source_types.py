"""Inputs and payloads of workspace sources: repositories and folders added to an existing task."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, TypeAlias

import strawberry

from kandev.domain.workspace.sources import MAX_FOLDER_NAME_LENGTH, MAX_SOURCES
from kandev.graphql.schema.declare import arg
from kandev.graphql.schema.errors import ExpectedError
from kandev.graphql.schema.types import Task


@strawberry.enum(description="A git repository (worktree or in place) or a plain folder.")
class WorkspaceSourceType(Enum):
    REPOSITORY = "repository"
    FOLDER = "folder"


_TASK_ID = "The task. Default: your own task; you may also name your direct child in the same workspace."
_REPOSITORY_ID = "A repository saved in the task's workspace."
_LOCAL_PATH = "Absolute path of a git checkout on this machine, under the server's source roots."
_REMOTE_URL = (
    "A repository URL to clone (https, ssh, git@host:path, or file:// or an absolute path under the server's "
    "source roots)."
)
_BASE_BRANCH = "Branch Kandev diffs against. Default: the repository's default branch."
_BRANCH = "An existing branch to work on. Default: a new Kandev branch for the task."


@strawberry.input(
    description=(
        "One source. A repository names exactly one of repositoryId (saved in the workspace), localPath (a git "
        "checkout on this machine) or remoteUrl (cloned), plus optional baseBranch (diff base; default the "
        "repository's default branch) and branch (an existing branch to work on; default a new Kandev branch). "
        "A folder takes an absolute path and an optional display name."
    )
)
class WorkspaceSourceInput:
    type: WorkspaceSourceType = arg("What the source is.", lowercase=True)
    repository_id: strawberry.ID | None = arg(_REPOSITORY_ID, default=None, min_length=1)
    local_path: str | None = arg(_LOCAL_PATH, default=None, min_length=1)
    remote_url: str | None = arg(_REMOTE_URL, default=None, min_length=1)
    base_branch: str | None = arg(_BASE_BRANCH, default=None, min_length=1)
    branch: str | None = arg(_BRANCH, default=None, min_length=1)
    path: str | None = arg(
        "Folder sources: absolute path of the folder, under the server's source roots.", default=None, min_length=1
    )
    name: str | None = arg(
        "Folder sources: display name (default: the folder's name).",
        default=None,
        min_length=1,
        max_length=MAX_FOLDER_NAME_LENGTH,
    )


@strawberry.input(description="An atomic batch of sources for an idle task.")
class AddWorkspaceSourcesInput:
    sources: list[WorkspaceSourceInput] = arg(min_items=1, max_items=MAX_SOURCES)
    task_id: strawberry.ID | None = arg(
        "Default (and in a task session: your own task or your direct child).",
        default=None,
        agent=_TASK_ID,
        min_length=1,
    )


@strawberry.input(description="One repository on a sibling worktree, while the agent keeps working.")
class AddBranchToTaskInput:
    task_id: strawberry.ID | None = arg("Default: your own task.", default=None, agent=_TASK_ID, min_length=1)
    repository_id: strawberry.ID | None = arg(_REPOSITORY_ID, default=None, min_length=1)
    local_path: str | None = arg(_LOCAL_PATH, default=None, min_length=1)
    remote_url: str | None = arg(_REMOTE_URL, default=None, min_length=1)
    branch: str | None = arg("Existing branch to check out, or a new one.", default=None, agent=_BRANCH, min_length=1)
    base_branch: str | None = arg(_BASE_BRANCH, default=None, min_length=1)


@strawberry.input(description="The base branch Kandev diffs a task's repository against.")
class UpdateRepositoryBaseBranchInput:
    base_branch: str = arg("An existing branch (or ref) of the repository.", min_length=1)
    task_id: strawberry.ID | None = arg("Default: your own task.", default=None, agent=_TASK_ID, min_length=1)
    repository_id: strawberry.ID | None = arg(
        "Needed when the task has more than one repository.",
        default=None,
        agent="The task's repository; optional when it has only one.",
        min_length=1,
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
