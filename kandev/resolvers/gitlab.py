"""GitLab connection (one query, two mutations) and the provider review tools' operations."""

from __future__ import annotations

import strawberry

from kandev.domain.github.task_review import PullRequestChanges, TaskPullRequestService
from kandev.domain.gitlab.merge_requests import MergeRequestChanges, TaskMergeRequestService
from kandev.resolvers.common import attempt
from kandev.schema.context import Info
from kandev.schema.gitlab_types import (
    ConnectGitlabInput,
    ConnectGitlabPayload,
    ConnectGitlabResult,
    DisconnectGitlabInput,
    DisconnectGitlabPayload,
    DisconnectGitlabResult,
    GitlabConnection,
)
from kandev.schema.review_types import (
    TaskMergeRequestInput,
    TaskMergeRequestResult,
    TaskMergeRequestView,
    TaskPullRequestInput,
    TaskPullRequestResult,
    TaskPullRequestView,
    UpdateTaskMergeRequestInput,
    UpdateTaskPullRequestInput,
)


async def gitlab_connection(info: Info, workspace_id: strawberry.ID) -> GitlabConnection | None:
    record = await info.context.services.gitlab.connection(str(workspace_id))
    return GitlabConnection.of(record) if record else None


async def connect_gitlab(info: Info, input: ConnectGitlabInput) -> ConnectGitlabResult:
    call = info.context.services.gitlab.connect(str(input.workspace_id), input.token, input.base_url)
    return await attempt(call, lambda r: ConnectGitlabPayload(connection=GitlabConnection.of(r)))


async def disconnect_gitlab(info: Info, input: DisconnectGitlabInput) -> DisconnectGitlabResult:
    call = info.context.services.gitlab.disconnect(str(input.workspace_id))
    return await attempt(call, lambda d: DisconnectGitlabPayload(workspace_id=input.workspace_id, disconnected=d))


async def task_pull_request(info: Info, input: TaskPullRequestInput) -> TaskPullRequestResult:
    call = TaskPullRequestService(info.context.services.ctx).get(input.repository, input.number)
    return await attempt(call, TaskPullRequestView.of)


async def update_task_pull_request(info: Info, input: UpdateTaskPullRequestInput) -> TaskPullRequestResult:
    changes = PullRequestChanges(
        title=input.title, body=input.body, draft=input.draft, reviewers=input.reviewers, labels=input.labels
    )
    call = TaskPullRequestService(info.context.services.ctx).update(changes, input.repository, input.number)
    return await attempt(call, TaskPullRequestView.of)


async def task_merge_request(info: Info, input: TaskMergeRequestInput) -> TaskMergeRequestResult:
    call = TaskMergeRequestService(info.context.services.ctx).get(input.project, input.iid)
    return await attempt(call, TaskMergeRequestView.of)


async def update_task_merge_request(info: Info, input: UpdateTaskMergeRequestInput) -> TaskMergeRequestResult:
    changes = MergeRequestChanges(
        title=input.title,
        description=input.description,
        draft=input.draft,
        reviewers=input.reviewers,
        labels=input.labels,
    )
    call = TaskMergeRequestService(info.context.services.ctx).update(changes, input.project, input.iid)
    return await attempt(call, TaskMergeRequestView.of)
