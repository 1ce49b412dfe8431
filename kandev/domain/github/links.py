"""Task pull-request links: a pull request whose head is a branch Kandev made for one of a task's
repositories is linked to that task (task_pull_requests); a new link or a change of its state (open,
closed, merged) is published on the workspace's github.task_pr.updated channel, which the merged-PR trigger
consumes."""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from kandev.domain.context import ServiceContext
from kandev.domain.github.connections import workspace_token
from kandev.events import TaskPullRequestPayload, task_pull_request_channel
from kandev.github.client import GitHubClient, GitHubNotFoundError, PullRequest
from kandev.github.remotes import parse_remote
from kandev.models import Repository, Task, TaskPullRequest, TaskRepository
from kandev.models.base import utcnow

log = logging.getLogger("kandev.github.links")


@dataclass(frozen=True)
class TaskPullRequestChange:
    """A link found (`previous_state` None) or whose state changed."""

    workspace_id: str
    task_id: str
    repository: str
    number: int
    state: str
    previous_state: str | None
    merged_at: datetime | None
    head_branch: str
    base_branch: str
    url: str

    @property
    def merged(self) -> bool:
        return self.state == "merged"

    def payload(self) -> TaskPullRequestPayload:
        return TaskPullRequestPayload(
            kind="linked" if self.previous_state is None else "updated",
            workspace_id=self.workspace_id,
            task_id=self.task_id,
            repository=self.repository,
            number=self.number,
            state=self.state,
            previous_state=self.previous_state,
            merged_at=self.merged_at.isoformat() if self.merged_at else None,
            head_branch=self.head_branch,
            base_branch=self.base_branch,
            url=self.url,
        )


async def sync_task_pull_requests(ctx: ServiceContext, workspace_id: str) -> list[TaskPullRequestChange]:
    """Find and refresh the pull requests of the workspace's task branches; the links that are new or
    changed state, in the order found (`merged` ones are what the merged-PR trigger fires on)."""
    async with ctx.read() as db:
        found = await workspace_token(db, ctx.settings, workspace_id)
        if found is None:
            return []
        connection, token = found
        rows = await db.execute(
            select(TaskRepository.task_id, TaskRepository.branch, Repository.remote_url)
            .join(Task, Task.id == TaskRepository.task_id)
            .join(Repository, Repository.id == TaskRepository.repository_id)
            .where(Task.workspace_id == workspace_id, Task.deleted_at.is_(None), TaskRepository.branch.is_not(None))
        )
        branches: dict[tuple[str, str], set[str]] = defaultdict(set)  # (owner/name, branch) -> task ids
        for task_id, branch, remote in rows:
            parsed = parse_remote(remote)
            if parsed is not None and parsed[0] == connection.host and branch:
                branches[(parsed[1], branch)].add(task_id)
        if not branches:
            return []
        known = {
            (link.task_id, link.repository.lower(), link.number): link
            for link in await db.scalars(
                select(TaskPullRequest).where(
                    TaskPullRequest.task_id.in_({t for ids in branches.values() for t in ids})
                )
            )
        }
    settled = {(t, r, link.head_branch) for (t, r, _), link in known.items() if link.state == "merged"}
    pulls: dict[tuple[str, str], list[PullRequest]] = {}
    async with GitHubClient(ctx.settings.github_api_url, token) as client:
        for (repository, branch), task_ids in branches.items():
            if all((t, repository.lower(), branch) in settled for t in task_ids):
                continue  # merged is final: no need to ask again
            try:
                pulls[(repository, branch)] = await client.pull_requests_by_head(repository, branch)
            except GitHubNotFoundError:
                log.warning("GitHub does not know repository %s (or the token can not see it)", repository)
    try:
        return await _record(ctx, workspace_id, branches, pulls)
    except IntegrityError:
        # A concurrent sync of this workspace linked these pull requests first and published the changes.
        log.info("a concurrent GitHub link sync of workspace %s got there first", workspace_id)
        return []


async def _record(
    ctx: ServiceContext,
    workspace_id: str,
    branches: dict[tuple[str, str], set[str]],
    pulls: dict[tuple[str, str], list[PullRequest]],
) -> list[TaskPullRequestChange]:
    """Upsert the links; a new link or a state change is returned and published once committed."""
    changes: list[TaskPullRequestChange] = []
    async with ctx.unit_of_work() as uow:
        for (repository, branch), prs in pulls.items():
            for task_id in sorted(branches[(repository, branch)]):
                for pr in prs:
                    link = await uow.db.get(TaskPullRequest, (task_id, repository, pr.number))
                    previous = link.state if link is not None else None
                    if link is None:
                        link = TaskPullRequest(task_id=task_id, repository=repository, number=pr.number)
                        uow.db.add(link)
                    link.state, link.merged_at, link.head_branch = pr.status, pr.merged_at, pr.head_branch
                    link.head_sha, link.base_branch, link.url = pr.head_sha, pr.base_branch, pr.url
                    link.updated_at = utcnow()
                    if previous == pr.status:
                        continue
                    change = TaskPullRequestChange(
                        workspace_id=workspace_id,
                        task_id=task_id,
                        repository=repository,
                        number=pr.number,
                        state=pr.status,
                        previous_state=previous,
                        merged_at=pr.merged_at,
                        head_branch=pr.head_branch,
                        base_branch=pr.base_branch,
                        url=pr.url,
                    )
                    changes.append(change)
                    uow.emit(task_pull_request_channel(workspace_id), change.payload())
    return changes
