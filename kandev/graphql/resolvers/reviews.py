"""The provider review tools' operations (github-pr, gitlab-mr): the calling agent's task's pull request or
merge request, read and changed."""

from __future__ import annotations

from kandev.domain.github.task_review import PullRequestChanges
from kandev.domain.gitlab.merge_requests import MergeRequestChanges
from kandev.graphql.resolvers.common import attempt
from kandev.graphql.schema.context import Info
from kandev.graphql.schema.review_types import (
    TaskMergeRequestInput,
    TaskMergeRequestResult,
    TaskMergeRequestView,
    TaskPullRequestInput,
    TaskPullRequestResult,
    TaskPullRequestView,
    UpdateTaskMergeRequestInput,
    UpdateTaskPullRequestInput,
)


async def task_pull_request(info: Info, input: TaskPullRequestInput) -> TaskPullRequestResult:
    call = info.context.services.task_pull_requests.get(input.repository, input.number)
    return await attempt(call, TaskPullRequestView.of)


async def update_task_pull_request(info: Info, input: UpdateTaskPullRequestInput) -> TaskPullRequestResult:
    changes = PullRequestChanges(
        title=input.title, body=input.body, draft=input.draft, reviewers=input.reviewers, labels=input.labels
    )
    call = info.context.services.task_pull_requests.update(changes, input.repository, input.number)
    return await attempt(call, TaskPullRequestView.of)


async def task_merge_request(info: Info, input: TaskMergeRequestInput) -> TaskMergeRequestResult:
    call = info.context.services.task_merge_requests.get(input.project, input.iid)
    return await attempt(call, TaskMergeRequestView.of)


async def update_task_merge_request(info: Info, input: UpdateTaskMergeRequestInput) -> TaskMergeRequestResult:
    changes = MergeRequestChanges(
        title=input.title,
        description=input.description,
        draft=input.draft,
        reviewers=input.reviewers,
        labels=input.labels,
    )
    call = info.context.services.task_merge_requests.update(changes, input.project, input.iid)
    return await attempt(call, TaskMergeRequestView.of)
