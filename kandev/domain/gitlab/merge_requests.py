"""The gitlab-mr tool group's domain: read and change the merge request linked to the calling agent's task,
and the task ↔ merge request links (task_merge_requests).

Only an agent in a task session may call it, and only about its own task's merge requests: a stored link or,
when none is stored, a merge request whose source branch is one of the task's branches of a project on the
workspace's GitLab host (found then, and stored as a link). Any other merge request is out of reach whatever
the arguments say. Provider-authored text (title, description, labels, usernames) comes back as data for the
agent to treat as untrusted."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.context import ServiceContext
from kandev.domain.errors import (
    NoLinkedMergeRequestError,
    ProviderNotConnectedError,
    ProviderRefusedError,
    ValidationError,
)
from kandev.domain.github.task_review import (
    MAX_BODY,
    MAX_LABELS,
    MAX_PEOPLE,
    MAX_TITLE,
    agent_task,
    clean_names,
    clean_text,
)
from kandev.domain.gitlab.api import (
    DRAFT_PREFIX,
    Approvals,
    GitLabApi,
    GitLabError,
    MergeRequest,
    check_project,
    gitlab_api,
    undrafted_title,
)
from kandev.domain.gitlab.connections import GitlabCredentials, workspace_gitlab_credentials
from kandev.domain.gitlab.remotes import parse_gitlab_remote
from kandev.domain.linked_reviews import HostWords, choose_linked
from kandev.models import Repository, TaskMergeRequest, TaskRepository
from kandev.models.base import utcnow

_WORDS = HostWords(
    request="merge request",
    place="project",
    number="iid",
    open_state="opened",
    mark="!",
    missing=lambda message: NoLinkedMergeRequestError(message, provider="gitlab"),
)

_USERNAME = re.compile(r"[A-Za-z0-9_.][A-Za-z0-9_.-]{0,254}")


@dataclass(frozen=True)
class MergeRequestView:
    project: str
    iid: int
    url: str
    state: str  # opened, closed, locked or merged
    draft: bool
    title: str
    description: str
    author: str
    source_branch: str
    target_branch: str
    sha: str
    labels: tuple[str, ...]
    reviewers: tuple[str, ...]
    pipeline_status: str | None
    approvals: Approvals


@dataclass(frozen=True)
class MergeRequestChanges:
    """Only the fields given change; None leaves a field as it is."""

    title: str | None = None
    description: str | None = None
    draft: bool | None = None
    reviewers: list[str] | None = None
    labels: list[str] | None = None


async def link_task_merge_request(db: AsyncSession, task_id: str, mr: MergeRequest) -> TaskMergeRequest:
    """Record (or refresh) the link between a task and a merge request, in the caller's transaction."""
    link = await db.get(TaskMergeRequest, (task_id, mr.project, mr.iid))
    if link is None:
        link = TaskMergeRequest(task_id=task_id, project=mr.project, iid=mr.iid)
        db.add(link)
    link.state, link.source_branch, link.target_branch = mr.state, mr.source_branch, mr.target_branch
    link.sha, link.url, link.updated_at = mr.sha, mr.url, utcnow()
    return link


async def _task_projects(db: AsyncSession, task_id: str, credentials: GitlabCredentials) -> dict[str, set[str]]:
    """project path (as the remote spells it) -> the task's branches of it, for the task's repositories on the
    GitLab host."""
    rows = await db.execute(
        select(Repository.remote_url, TaskRepository.branch)
        .join(TaskRepository, TaskRepository.repository_id == Repository.id)
        .where(TaskRepository.task_id == task_id)
    )
    base_path = urlsplit(credentials.base_url).path
    found: dict[str, set[str]] = {}
    for remote, branch in rows:
        parsed = parse_gitlab_remote(remote, base_path)
        if parsed is not None and parsed[0] == credentials.host:
            branches = found.setdefault(parsed[1], set())
            if branch:
                branches.add(branch)
    return found


class TaskMergeRequestService:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    async def get(self, project: str | None = None, iid: int | None = None) -> MergeRequestView:
        task_id, workspace_id = agent_task(self.ctx, "get_task_mr_automation_kandev")
        credentials, projects, links = await self._load(task_id, workspace_id)
        async with gitlab_api(credentials.base_url, credentials.token) as client:
            mr = await self._resolve(client, task_id, projects, links, project, iid)
            return await _view(client, mr)

    async def update(
        self, changes: MergeRequestChanges, project: str | None = None, iid: int | None = None
    ) -> MergeRequestView:
        task_id, workspace_id = agent_task(self.ctx, "update_task_mr_automation_kandev")
        title = clean_text(changes.title, "title", MAX_TITLE, empty_ok=False)
        description = clean_text(changes.description, "description", MAX_BODY, empty_ok=True)
        reviewers = clean_names(changes.reviewers, "reviewers", _USERNAME, MAX_PEOPLE)
        labels = clean_names(changes.labels, "labels", None, MAX_LABELS)
        if title is None and description is None and changes.draft is None and reviewers is None and labels is None:
            raise ValidationError("give at least one of title, description, draft, reviewers or labels to change")
        credentials, projects, links = await self._load(task_id, workspace_id)
        async with gitlab_api(credentials.base_url, credentials.token) as client:
            mr = await self._resolve(client, task_id, projects, links, project, iid)
            body: dict[str, Any] = {}
            try:
                if reviewers:
                    ids = list(mr.reviewer_ids)
                    for name in reviewers:
                        user_id = await client.user_id(name)
                        if user_id is None:
                            raise ValidationError("a reviewer is not a GitLab user", field="reviewers")
                        if user_id not in ids:
                            ids.append(user_id)
                    body["reviewer_ids"] = ids
                # GitLab's API marks a draft by the title's prefix ("Draft: "), not by a field of its own.
                draft = mr.draft if changes.draft is None else changes.draft
                if title is not None or changes.draft is not None:
                    bare = undrafted_title(title if title is not None else mr.title)
                    new_title = DRAFT_PREFIX + bare if draft else bare
                    if len(new_title) > MAX_TITLE or not bare.strip():
                        raise ValidationError(f"title must be 1-{MAX_TITLE} characters", field="title")
                    if new_title != mr.title:
                        body["title"] = new_title
                if description is not None:
                    body["description"] = description
                if labels is not None:
                    body["labels"] = ",".join(labels)
                if body:
                    await client.update_merge_request(mr.project, mr.iid, body)
                fresh = await client.merge_request(mr.project, mr.iid, with_source=False)
                view = await _view(client, fresh)
            except GitLabError as error:
                raise ProviderRefusedError(f"GitLab refused the change: {error.message}", applied=[]) from None
        async with self.ctx.unit_of_work() as uow:
            await link_task_merge_request(uow.db, task_id, fresh)
        return view

    async def _load(
        self, task_id: str, workspace_id: str
    ) -> tuple[GitlabCredentials, dict[str, set[str]], list[TaskMergeRequest]]:
        async with self.ctx.read() as db:
            credentials = await workspace_gitlab_credentials(db, self.ctx.settings, workspace_id)
            if credentials is None:
                raise ProviderNotConnectedError(
                    "this workspace has no GitLab connection: a person connects GitLab in the workspace settings",
                    provider="gitlab",
                )
            projects = await _task_projects(db, task_id, credentials)
            paths = {path.lower() for path in projects}
            links = [
                link
                for link in await db.scalars(
                    select(TaskMergeRequest)
                    .where(TaskMergeRequest.task_id == task_id)
                    .order_by(TaskMergeRequest.updated_at.desc())
                )
                if link.project.lower() in paths
            ]
        return credentials, projects, links

    async def _resolve(
        self,
        client: GitLabApi,
        task_id: str,
        projects: dict[str, set[str]],
        links: list[TaskMergeRequest],
        project: str | None,
        iid: int | None,
    ) -> MergeRequest:
        if project is not None:
            try:
                check_project(project.strip())
            except ValueError:
                raise ValidationError("project is the project's path, group/name", field="project") from None
        if iid is not None and not 0 < iid < 2**31:
            raise ValidationError("iid is a merge request's iid", field="iid")
        wanted = project.strip().lower() if project else None
        try:
            keys = [(link.project, link.iid, link.state) for link in links]
            found: list[MergeRequest] = []
            if not keys:
                for path, branches in projects.items():
                    for branch in sorted(branches):
                        found += await client.merge_requests_by_source_branch(path, branch)
                keys = [(mr.project, mr.iid, mr.state) for mr in found]
            path, found_iid, _ = choose_linked(keys, wanted, iid, _WORDS)
            mr = await client.merge_request(path, found_iid, with_source=False)
        except GitLabError as error:
            raise ProviderRefusedError(f"GitLab could not be asked: {error.message}") from None
        if found:
            async with self.ctx.unit_of_work() as uow:
                await link_task_merge_request(uow.db, task_id, mr)
        return mr


async def _view(client: GitLabApi, mr: MergeRequest) -> MergeRequestView:
    try:
        approvals = await client.approvals(mr.project, mr.iid)
        status = mr.pipeline_status
        if status is None:
            pipelines = await client.pipelines(mr.project, mr.iid)
            status = pipelines[0].status if pipelines else None
    except GitLabError as error:
        raise ProviderRefusedError(f"GitLab could not be asked: {error.message}") from None
    return MergeRequestView(
        project=mr.project,
        iid=mr.iid,
        url=mr.url,
        state=mr.state,
        draft=mr.draft,
        title=mr.title,
        description=mr.description,
        author=mr.author,
        source_branch=mr.source_branch,
        target_branch=mr.target_branch,
        sha=mr.sha,
        labels=mr.labels,
        reviewers=mr.reviewers,
        pipeline_status=status,
        approvals=approvals,
    )
