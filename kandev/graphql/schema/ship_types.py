"""Shipping a task's changes over GraphQL: the commit, push, pull-request, update and merge mutations' inputs and
payloads, the task's fix-failing-checks settings and rounds, and the caller's commit identity."""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Annotated, TypeAlias

import strawberry

from kandev.domain.changes.diffs import MAX_PATH_LENGTH
from kandev.domain.code_requests import MergeMethod as DomainMergeMethod
from kandev.domain.shipping.fix_rounds import RoundRecord
from kandev.domain.shipping.git_ship import MAX_MESSAGE, GitIdentity
from kandev.domain.shipping.service import MAX_BODY, MAX_TITLE, Committed, FixSettings, Pushed, Updated
from kandev.graphql.schema.declare import arg
from kandev.graphql.schema.errors import ExpectedError
from kandev.graphql.schema.inputs import TASK_ID_FOR_AGENTS
from kandev.graphql.schema.review_types import TaskPullRequestView

strawberry.enum(DomainMergeMethod, name="MergeMethod", description="How a pull request is merged on its code host.")
MergeMethod = DomainMergeMethod
_REPOSITORY = "The task's repository; may be left out when the task has exactly one."
_REPOSITORY_FOR_AGENTS = "The repository id (from your task's repositories); leave it out when the task has one."


@strawberry.enum(description="How updateTaskBranch brings the base's new commits into the task's branch.")
class UpdateStrategy(Enum):
    MERGE = "MERGE"
    REBASE = "REBASE"


@strawberry.type(description="Who your commits from Kandev are by (your account settings).")
class GitIdentityView:
    name: str
    email: str

    @classmethod
    def of(cls, who: GitIdentity) -> GitIdentityView:
        return cls(name=who.name, email=who.email)


@strawberry.type(description="The caller's own account.")
class Account:
    login: str
    git_identity: GitIdentityView | None = strawberry.field(
        description="Name and email commits from Kandev carry; null until set (commitTaskChanges asks for them once)."
    )


@strawberry.input(description="Set the name and email your commits from Kandev are authored by.")
class UpdateAccountInput:
    git_name: str = arg("Your name as commits show it (1-200 characters).", min_length=1, max_length=200)
    git_email: str = arg("Your email as commits show it.", min_length=3, max_length=320)


@strawberry.type
class AccountPayload:
    account: Account


@strawberry.input(description="Commit the task's changes on its branch, as you, with the agent named in a trailer.")
class CommitTaskChangesInput:
    task_id: strawberry.ID = arg("The task.", agent=TASK_ID_FOR_AGENTS, min_length=1)
    repository_id: strawberry.ID | None = arg(_REPOSITORY, agent=_REPOSITORY_FOR_AGENTS, default=None)
    message: str | None = arg(
        "The commit message; empty or null: the task's agent suggests one (suggestCommitMessage).",
        agent="The commit message: a summary line, then optionally a blank line and a body.",
        default=None,
        max_length=MAX_MESSAGE,
    )
    paths: list[str] | None = arg(
        "Only these files (relative to the repository); null: every uncommitted change.",
        default=None,
        min_items=1,
        max_items=100,
        max_length=MAX_PATH_LENGTH,
    )
    amend: bool = arg("Amend the branch's last commit instead of adding one.", default=False)


@strawberry.type(description="A commit made on the task's branch.")
class CommitView:
    repository_id: strawberry.ID
    sha: str
    message: str


@strawberry.type
class CommitPayload:
    commit: CommitView


@strawberry.type
class SuggestedMessagePayload:
    message: str = strawberry.field(description="Written by the task's agent for the uncommitted changes: edit freely.")


@strawberry.input(description="Push the task's branch to the repository's remote.")
class PushTaskBranchInput:
    task_id: strawberry.ID = arg("The task.", agent=TASK_ID_FOR_AGENTS, min_length=1)
    repository_id: strawberry.ID | None = arg(_REPOSITORY, agent=_REPOSITORY_FOR_AGENTS, default=None)
    force_with_lease: bool = arg(
        "Replace the remote branch (after a rebase or an amend), only if it is still what Kandev last pushed.",
        default=False,
    )


@strawberry.type(description="What a push did.")
class PushView:
    repository_id: strawberry.ID
    branch: str = strawberry.field(description="The remote branch pushed to.")
    sha: str
    changed: bool = strawberry.field(description="False when the remote already had exactly this commit.")


@strawberry.type
class PushPayload:
    push: PushView


@strawberry.input(description="Open the repository's pull request (GitHub) or merge request (GitLab) from the task.")
class OpenPullRequestInput:
    task_id: strawberry.ID = arg("The task.", agent=TASK_ID_FOR_AGENTS, min_length=1)
    repository_id: strawberry.ID | None = arg(_REPOSITORY, agent=_REPOSITORY_FOR_AGENTS, default=None)
    title: str | None = arg("Default: the task's title.", default=None, max_length=MAX_TITLE)
    body: str | None = arg("Markdown; default: the agent's last summary.", default=None, max_length=MAX_BODY)
    draft: bool = arg("Open it as a draft.", default=False)
    base: str | None = arg("The branch to merge into; default: the task's base branch.", default=None, max_length=255)


@strawberry.type
class PullRequestPayload:
    pull_request: TaskPullRequestView


@strawberry.input(description="Bring the base branch's new commits into the task's branch.")
class UpdateTaskBranchInput:
    task_id: strawberry.ID = arg("The task.", min_length=1)
    repository_id: strawberry.ID | None = arg(_REPOSITORY, default=None)
    strategy: UpdateStrategy = arg("MERGE (a merge commit) or REBASE (the task's commits replayed).")


@strawberry.type(
    description="UP_TO_DATE, UPDATED, or CONFLICTS: `conflicts` are left UNMERGED in the worktree (Task.changes) "
    "for someone (the agent) to resolve; the branch moves only once they are."
)
class UpdateTaskBranchPayload:
    repository_id: strawberry.ID
    status: str
    head: str | None
    conflicts: list[str]

    @classmethod
    def of(cls, updated: Updated) -> UpdateTaskBranchPayload:
        return cls(
            repository_id=strawberry.ID(updated.repository_id),
            status=updated.status,
            head=updated.head,
            conflicts=updated.conflicts,
        )


@strawberry.input(description="Merge the task's pull request on its code host.")
class MergePullRequestInput:
    task_id: strawberry.ID = arg("The task.", min_length=1)
    repository_id: strawberry.ID | None = arg(_REPOSITORY, default=None)
    method: MergeMethod = arg("MERGE, SQUASH or REBASE (GitLab: MERGE or SQUASH).", default=MergeMethod.MERGE)


@strawberry.input(description="For a repository on no code host: merge the task's branch into its base locally.")
class MergeTaskBranchInput:
    task_id: strawberry.ID = arg("The task.", min_length=1)
    repository_id: strawberry.ID | None = arg(_REPOSITORY, default=None)


@strawberry.type
class MergeTaskBranchPayload:
    sha: str = strawberry.field(description="The base branch's new commit.")


@strawberry.type(description="The task's fix-failing-checks setting and whether rounds are still made.")
class FixFailingChecks:
    enabled: bool
    max_rounds: int
    stopped: str | None = strawberry.field(
        description="Why no more rounds are made now: off, rounds_out, person_intervened; null: they are."
    )

    @classmethod
    def of(cls, found: FixSettings) -> FixFailingChecks:
        return cls(enabled=found.enabled, max_rounds=found.max_rounds, stopped=found.stopped)


@strawberry.type(description="A round of fixing failing checks: one prompt to the agent for one failing commit.")
class CheckFixRound:
    id: strawberry.ID
    repository_id: strawberry.ID
    round: int
    check_name: str = strawberry.field(description="The failing checks, by name, comma-separated.")
    check_names: list[str]
    head_sha: str
    state: str = strawberry.field(description="PENDING (its prompt is being prepared), PROMPTED or FAILED.")
    prompt_id: strawberry.ID | None
    created_at: datetime
    prompted_at: datetime | None

    @classmethod
    def of(cls, record: RoundRecord) -> CheckFixRound:
        return cls(
            id=strawberry.ID(record.id),
            repository_id=strawberry.ID(record.repository_id),
            round=record.round,
            check_name=", ".join(record.check_names),
            check_names=record.check_names,
            head_sha=record.head_sha,
            state=record.state,
            prompt_id=strawberry.ID(record.prompt_id) if record.prompt_id else None,
            created_at=record.created_at,
            prompted_at=record.prompted_at,
        )


def commit_payload(found: Committed) -> CommitPayload:
    return CommitPayload(
        commit=CommitView(repository_id=strawberry.ID(found.repository_id), sha=found.sha, message=found.message)
    )


def push_payload(found: Pushed) -> PushPayload:
    view = PushView(
        repository_id=strawberry.ID(found.repository_id), branch=found.branch, sha=found.sha, changed=found.changed
    )
    return PushPayload(push=view)


AccountResult: TypeAlias = Annotated[AccountPayload | ExpectedError, strawberry.union("AccountResult")]
CommitResult: TypeAlias = Annotated[CommitPayload | ExpectedError, strawberry.union("CommitTaskChangesResult")]
SuggestResult: TypeAlias = Annotated[
    SuggestedMessagePayload | ExpectedError, strawberry.union("SuggestCommitMessageResult")
]
PushResult: TypeAlias = Annotated[PushPayload | ExpectedError, strawberry.union("PushTaskBranchResult")]
PullRequestResult: TypeAlias = Annotated[PullRequestPayload | ExpectedError, strawberry.union("PullRequestResult")]
UpdateBranchResult: TypeAlias = Annotated[
    UpdateTaskBranchPayload | ExpectedError, strawberry.union("UpdateTaskBranchResult")
]
MergeBranchResult: TypeAlias = Annotated[
    MergeTaskBranchPayload | ExpectedError, strawberry.union("MergeTaskBranchResult")
]
