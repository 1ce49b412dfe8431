"""Task pull-request links: a pull request whose head is a branch Kandev made for one of a task's
repositories is linked to that task (task_pull_requests); a new link or a change of its state (open,
closed, merged) is published on the workspace's github.task_pr.updated channel. A merge also records, in
the same transaction, the merged-PR trigger's pending firings (kandev.domain.github.firings), so a merge is
fired even if the process dies right after the sync, and a failed firing is retried with backoff."""

from __future__ import annotations

import fnmatch
import logging
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.automations.references import live_triggers
from kandev.domain.automations.rules import evaluated_repositories
from kandev.domain.context import ServiceContext
from kandev.domain.github.api import GitHubNotFoundError, PullRequest, github_api
from kandev.domain.github.connections import workspace_token
from kandev.domain.github.firings import record_firing
from kandev.domain.github.remotes import parse_remote
from kandev.domain.github.repositories import connected_repositories
from kandev.models import (
    GithubConnection,
    Repository,
    Task,
    TaskContribution,
    TaskPullRequest,
    TaskRepository,
)
from kandev.models.base import utcnow
from kandev.models.enums import TriggerType
from kandev.platform.event_bus import TaskPullRequestPayload, task_pull_request_channel

log = logging.getLogger("kandev.adapters.github.links")


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
        # Tasks made from a PR URL: their PR is known by number (a fork's head is not a branch of the target).
        contributed: dict[tuple[str, int], set[str]] = defaultdict(set)
        for task_id, target, number in await db.execute(
            select(TaskContribution.task_id, TaskContribution.target, TaskContribution.number)
            .join(Task, Task.id == TaskContribution.task_id)
            .where(
                Task.workspace_id == workspace_id,
                Task.deleted_at.is_(None),
                TaskContribution.provider == "github",
                TaskContribution.host == connection.host,
                TaskContribution.number > 0,  # an event's branch, not a pull request
            )
        ):
            contributed[(target, number)].add(task_id)
        if not branches and not contributed:
            return []
        known = {
            (link.task_id, link.repository.lower(), link.number): link
            for link in await db.scalars(
                select(TaskPullRequest).where(
                    TaskPullRequest.task_id.in_({t for ids in [*branches.values(), *contributed.values()] for t in ids})
                )
            )
        }
    settled = {(t, r, link.head_branch) for (t, r, _), link in known.items() if link.state == "merged"}
    pulls: dict[tuple[str, str], list[PullRequest]] = {}
    async with github_api(ctx.settings.github_api_url, token) as client:
        for (repository, branch), task_ids in branches.items():
            if all((t, repository.lower(), branch) in settled for t in task_ids):
                continue  # merged is final: no need to ask again
            try:
                pulls[(repository, branch)] = await client.pull_requests_by_head(repository, branch)
            except GitHubNotFoundError:
                log.warning("GitHub does not know repository %s (or the token can not see it)", repository)
        for (target, number), task_ids in contributed.items():
            if all(
                known.get((t, target.lower(), number)) and known[(t, target.lower(), number)].state == "merged"
                for t in task_ids
            ):
                continue
            try:
                pr = await client.pull_request(target, number)
            except GitHubNotFoundError:
                log.warning("GitHub does not know pull request %s#%s (or the token can not see it)", target, number)
                continue
            key = (target, f"#{number}")  # not a branch name: one PR, known by number
            branches[key] = set(task_ids)
            pulls[key] = [pr]
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
                    if change.merged:
                        await record_merged_firings(uow.db, change)
    return changes


def merged_dedup_key(task_id: str, repository: str, number: int) -> str:
    return f"github_pr_merged:{task_id}:{repository.lower()}#{number}"


def merged_data(change: TaskPullRequestChange) -> dict[str, Any]:
    """The merged-PR run's trigger data: `{{data.task_id}}` names the task, `pr` fills `{{pr.*}}`."""
    return {
        "task_id": change.task_id,
        "repository": change.repository,
        "pr": {
            "number": change.number,
            "url": change.url,
            "repo": change.repository,
            "branch": change.head_branch,
            "base_branch": change.base_branch,
            "merged_at": change.merged_at.isoformat() if change.merged_at else None,
        },
    }


async def record_merged_firings(db: AsyncSession, change: TaskPullRequestChange) -> int:
    """In the transaction that records the merge, a pending firing for each enabled github_pr_merged trigger
    of the task's workspace whose repositories and base-branch globs match (deduplicated per automation,
    task, repository and PR number). Returns how many were recorded."""
    triggers = await db.scalars(live_triggers(TriggerType.GITHUB_PR_MERGED, change.workspace_id))
    connected: dict[str, str] | None = None
    recorded = 0
    for trigger in list(triggers):
        chosen = trigger.config.get("repositories") or []
        if chosen:
            if connected is None:
                connection = await db.scalar(
                    select(GithubConnection).where(GithubConnection.workspace_id == change.workspace_id)
                )
                connected = await connected_repositories(db, change.workspace_id, connection.host) if connection else {}
            names = {name.lower() for name in evaluated_repositories({"repositories": chosen}, connected)}
            if change.repository.lower() not in names:
                continue
        bases = trigger.config.get("base_branches") or []
        if bases and not any(fnmatch.fnmatchcase(change.base_branch, glob) for glob in bases):
            continue
        recorded += await record_firing(
            db,
            workspace_id=change.workspace_id,
            automation_id=trigger.automation_id,
            trigger_id=trigger.id,
            trigger_type=TriggerType.GITHUB_PR_MERGED.value,
            dedup_key=merged_dedup_key(change.task_id, change.repository, change.number),
            data=merged_data(change),
        )
    return recorded


# What a merged-PR automation's prompt is suggested to say (a prompt may not be empty, so the editor offers
# this one); the run may archive only `data.task_id` whatever it says (TaskService.archive).
MERGED_PR_SUGGESTED_PROMPT = (
    "Pull request {{pr.url}} of task {{data.task_id}} was merged. "
    'Archive that task: call archive_task_kandev with id "{{data.task_id}}".'
)
