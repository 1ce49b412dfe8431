"""Shipping a task's changes: commit, suggest a message, push, open, update, merge; the caller's commit identity."""

from __future__ import annotations

from typing import Annotated

import strawberry

from kandev.graphql.resolvers.common import attempt, optional_id
from kandev.graphql.schema.context import Info
from kandev.graphql.schema.declare import argument
from kandev.graphql.schema.inputs import TaskIdArgument
from kandev.graphql.schema.review_types import TaskPullRequestView
from kandev.graphql.schema.ship_types import (
    Account,
    AccountPayload,
    AccountResult,
    CommitResult,
    CommitTaskChangesInput,
    GitIdentityView,
    MergeBranchResult,
    MergePullRequestInput,
    MergeTaskBranchInput,
    MergeTaskBranchPayload,
    OpenPullRequestInput,
    PullRequestPayload,
    PullRequestResult,
    PushResult,
    PushTaskBranchInput,
    SuggestedMessagePayload,
    SuggestResult,
    UpdateAccountInput,
    UpdateBranchResult,
    UpdateTaskBranchInput,
    UpdateTaskBranchPayload,
    commit_payload,
    push_payload,
)

RepositoryArgument = Annotated[
    strawberry.ID | None, argument("The task's repository; may be left out when the task has exactly one.")
]


async def account(info: Info) -> Account:
    who = await info.context.services.ship.identity()
    return Account(login=info.context.services.principal.login, git_identity=GitIdentityView.of(who) if who else None)


async def update_account(info: Info, input: UpdateAccountInput) -> AccountResult:
    principal = info.context.services.principal
    return await attempt(
        info.context.services.ship.set_identity(input.git_name, input.git_email),
        lambda who: AccountPayload(account=Account(login=principal.login, git_identity=GitIdentityView.of(who))),
    )


async def commit_task_changes(info: Info, input: CommitTaskChangesInput) -> CommitResult:
    call = info.context.services.ship.commit(
        str(input.task_id), optional_id(input.repository_id), input.message, input.paths, input.amend
    )
    return await attempt(call, commit_payload)


async def suggest_commit_message(
    info: Info, task_id: TaskIdArgument, repository_id: RepositoryArgument = None
) -> SuggestResult:
    call = info.context.services.ship.suggest_message(str(task_id), optional_id(repository_id))
    return await attempt(call, lambda message: SuggestedMessagePayload(message=message))


async def push_task_branch(info: Info, input: PushTaskBranchInput) -> PushResult:
    call = info.context.services.ship.push(str(input.task_id), optional_id(input.repository_id), input.force_with_lease)
    return await attempt(call, push_payload)


async def open_pull_request(info: Info, input: OpenPullRequestInput) -> PullRequestResult:
    call = info.context.services.ship.open_request(
        str(input.task_id), optional_id(input.repository_id), input.title, input.body, input.draft, input.base
    )
    return await attempt(call, lambda record: PullRequestPayload(pull_request=TaskPullRequestView.of_request(record)))


async def update_task_branch(info: Info, input: UpdateTaskBranchInput) -> UpdateBranchResult:
    call = info.context.services.ship.update_branch(
        str(input.task_id), optional_id(input.repository_id), input.strategy.value
    )
    return await attempt(call, UpdateTaskBranchPayload.of)


async def merge_pull_request(info: Info, input: MergePullRequestInput) -> PullRequestResult:
    call = info.context.services.ship.merge_request(str(input.task_id), optional_id(input.repository_id), input.method)
    return await attempt(call, lambda record: PullRequestPayload(pull_request=TaskPullRequestView.of_request(record)))


async def merge_task_branch(info: Info, input: MergeTaskBranchInput) -> MergeBranchResult:
    call = info.context.services.ship.merge_branch(str(input.task_id), optional_id(input.repository_id))
    return await attempt(call, lambda sha: MergeTaskBranchPayload(sha=sha))
