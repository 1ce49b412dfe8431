"""The github-pr tool group's domain: read and change the pull request linked to the calling agent's task.

Only an agent in a task session may call it, and only about its own task's pull requests: a stored link
(task_pull_requests, kept by the poller) or, when none is stored yet, a pull request whose head is one of the
task's branches on the connected GitHub host. Any other pull request is out of reach whatever the arguments
say. Provider-authored text (title, body, labels, logins) comes back as data for the agent to treat as
untrusted; it never enters trusted task context."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.context import ServiceContext
from kandev.domain.errors import (
    NoLinkedPullRequestError,
    PermissionDeniedError,
    ProviderNotConnectedError,
    ProviderRefusedError,
    ValidationError,
)
from kandev.domain.github.api import CheckRun, GitHubApi, GitHubError, PullRequest, github_api
from kandev.domain.github.connections import workspace_token
from kandev.domain.github.remotes import parse_remote
from kandev.domain.linked_reviews import HostWords, choose_linked
from kandev.models import Repository, TaskPullRequest, TaskRepository

_WORDS = HostWords(
    request="pull request",
    place="repository",
    number="number",
    open_state="open",
    mark="#",
    missing=lambda message: NoLinkedPullRequestError(message, provider="github"),
)

MAX_TITLE = 256
MAX_BODY = 65_536
MAX_PEOPLE = 15
MAX_LABELS = 100
MAX_LABEL_LENGTH = 100
_LOGIN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})")
_REPOSITORY = re.compile(r"[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}")


@dataclass(frozen=True)
class CheckView:
    name: str
    status: str
    conclusion: str | None


@dataclass(frozen=True)
class PullRequestView:
    repository: str
    number: int
    url: str
    state: str  # open, closed or merged
    draft: bool
    title: str
    body: str
    author: str
    head_branch: str
    head_sha: str
    base_branch: str
    labels: tuple[str, ...]
    requested_reviewers: tuple[str, ...]
    review_decision: str
    checks: tuple[CheckView, ...]


@dataclass(frozen=True)
class PullRequestChanges:
    """Only the fields given change; None leaves a field as it is."""

    title: str | None = None
    body: str | None = None
    draft: bool | None = None
    reviewers: list[str] | None = None
    labels: list[str] | None = None


def clean_text(value: str | None, field: str, limit: int, *, empty_ok: bool) -> str | None:
    if value is None:
        return None
    if "\x00" in value or len(value) > limit:
        raise ValidationError(f"{field} must be text of at most {limit} characters", field=field)
    if not empty_ok and not value.strip():
        raise ValidationError(f"{field} must not be empty", field=field)
    return value.strip() if not empty_ok else value


def clean_names(values: list[str] | None, field: str, pattern: re.Pattern[str] | None, limit: int) -> list[str] | None:
    """Distinct names in the given order; each matches `pattern` (when given) or is plain printable text."""
    if values is None:
        return None
    if len(values) > limit:
        raise ValidationError(f"{field} takes at most {limit} names", field=field)
    names: list[str] = []
    for value in values:
        name = value.strip() if isinstance(value, str) else ""
        if pattern is not None and not pattern.fullmatch(name):
            raise ValidationError(f"each of {field} must be a user name", field=field)
        if not name or len(name) > MAX_LABEL_LENGTH or any(ord(c) < 32 for c in name) or "," in name:
            raise ValidationError(
                f"each of {field} must be 1-{MAX_LABEL_LENGTH} printable characters without commas", field=field
            )
        if name not in names:
            names.append(name)
    return names


def agent_task(ctx: ServiceContext, tool: str) -> tuple[str, str]:
    """(task id, workspace id) of the calling agent's task session, or PermissionDenied."""
    caller = ctx.principal
    if caller.session_id is None or caller.task_id is None or caller.workspace_id is None:
        raise PermissionDeniedError(f"only an agent in a task session can use {tool}")
    return caller.task_id, caller.workspace_id


async def _task_repositories(db: AsyncSession, task_id: str, host: str) -> dict[str, set[str]]:
    """owner/name (as the remote spells it) -> the task's branches of it, for the task's repositories on `host`."""
    rows = await db.execute(
        select(Repository.remote_url, TaskRepository.branch)
        .join(TaskRepository, TaskRepository.repository_id == Repository.id)
        .where(TaskRepository.task_id == task_id)
    )
    found: dict[str, set[str]] = {}
    for remote, branch in rows:
        parsed = parse_remote(remote)
        if parsed is not None and parsed[0] == host:
            branches = found.setdefault(parsed[1], set())
            if branch:
                branches.add(branch)
    return found


class TaskPullRequestService:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    async def get(self, repository: str | None = None, number: int | None = None) -> PullRequestView:
        _, workspace_id = agent_task(self.ctx, "get_task_pr_automation_kandev")
        async with await self._client(workspace_id) as (client, candidates):
            pr = await self._resolve(client, candidates, repository, number)
            return await _view(client, pr)

    async def update(
        self, changes: PullRequestChanges, repository: str | None = None, number: int | None = None
    ) -> PullRequestView:
        _, workspace_id = agent_task(self.ctx, "update_task_pr_automation_kandev")
        title = clean_text(changes.title, "title", MAX_TITLE, empty_ok=False)
        body = clean_text(changes.body, "body", MAX_BODY, empty_ok=True)
        reviewers = clean_names(changes.reviewers, "reviewers", _LOGIN, MAX_PEOPLE)
        labels = clean_names(changes.labels, "labels", None, MAX_LABELS)
        if title is None and body is None and changes.draft is None and reviewers is None and labels is None:
            raise ValidationError("give at least one of title, body, draft, reviewers or labels to change")
        async with await self._client(workspace_id) as (client, candidates):
            pr = await self._resolve(client, candidates, repository, number)
            applied: list[str] = []
            step = "title and body"
            try:
                patch = {k: v for k, v in (("title", title), ("body", body)) if v is not None}
                if patch:
                    await client.update_pull_request(pr.repository, pr.number, patch)
                    applied += list(patch)
                if labels is not None:
                    step = "labels"
                    await client.set_labels(pr.repository, pr.number, labels)
                    applied.append("labels")
                if reviewers:
                    step = "reviewers"
                    await client.request_reviewers(pr.repository, pr.number, reviewers)
                    applied.append("reviewers")
                if changes.draft is not None and changes.draft != pr.draft:
                    step = "draft"
                    await client.set_draft(pr.repository, pr.number, changes.draft)
                    applied.append("draft")
                fresh = await client.pull_request(pr.repository, pr.number)
                return await _view(client, fresh)
            except GitHubError as error:
                raise ProviderRefusedError(
                    f"GitHub refused the {step} change: {error.message}", failed=step, applied=applied
                ) from None

    async def _client(self, workspace_id: str) -> _Connected:
        async with self.ctx.read() as db:
            found = await workspace_token(db, self.ctx.settings, workspace_id)
            if found is None:
                raise ProviderNotConnectedError(
                    "this workspace has no GitHub connection: a person connects GitHub in the workspace settings",
                    provider="github",
                )
            connection, token = found
            task_id = self.ctx.principal.task_id
            assert task_id is not None
            repositories = await _task_repositories(db, task_id, connection.host)
            links = list(
                await db.scalars(
                    select(TaskPullRequest)
                    .where(TaskPullRequest.task_id == task_id)
                    .order_by(TaskPullRequest.updated_at.desc())
                )
            )
        names = {name.lower() for name in repositories}
        candidates = _Candidates(repositories, [link for link in links if link.repository.lower() in names])
        return _Connected(github_api(self.ctx.settings.github_api_url, token), candidates)

    async def _resolve(
        self,
        client: GitHubApi,
        candidates: _Candidates,
        repository: str | None,
        number: int | None,
    ) -> PullRequest:
        if repository is not None and not _REPOSITORY.fullmatch(repository.strip()):
            raise ValidationError("repository is owner/name", field="repository")
        if number is not None and not 0 < number < 2**31:
            raise ValidationError("number is a pull request number", field="number")
        wanted_repository = repository.strip().lower() if repository else None
        try:
            keys = [(link.repository, link.number, link.state) for link in candidates.links]
            if not keys:
                # Nothing stored yet (the poller links them): the pull requests of the task's own branches.
                for name, branches in candidates.repositories.items():
                    for branch in sorted(branches):
                        for pr in await client.pull_requests_by_head(name, branch):
                            keys.append((pr.repository, pr.number, pr.status))
            name, found_number, _ = choose_linked(keys, wanted_repository, number, _WORDS)
            return await client.pull_request(name, found_number)
        except GitHubError as error:
            raise ProviderRefusedError(f"GitHub could not be asked: {error.message}") from None


@dataclass(frozen=True)
class _Candidates:
    repositories: dict[str, set[str]]
    links: list[TaskPullRequest]


class _Connected:
    """The client and the task's candidates as one async context (the client is closed on exit)."""

    def __init__(self, client: GitHubApi, candidates: _Candidates) -> None:
        self.client, self.candidates = client, candidates

    async def __aenter__(self) -> tuple[GitHubApi, _Candidates]:
        return self.client, self.candidates

    async def __aexit__(self, *exc: Any) -> None:
        await self.client.aclose()


async def _view(client: GitHubApi, pr: PullRequest) -> PullRequestView:
    try:
        runs: list[CheckRun] = await client.check_runs(pr.repository, pr.head_sha) if pr.head_sha else []
        requested = await client.requested_reviewers(pr.repository, pr.number)
        decision = await client.review_decision(pr.repository, pr.number, requested)
    except GitHubError as error:
        raise ProviderRefusedError(f"GitHub could not be asked: {error.message}") from None
    return PullRequestView(
        repository=pr.repository,
        number=pr.number,
        url=pr.url,
        state=pr.status,
        draft=pr.draft,
        title=pr.title,
        body=pr.body,
        author=pr.author,
        head_branch=pr.head_branch,
        head_sha=pr.head_sha,
        base_branch=pr.base_branch,
        labels=pr.labels,
        requested_reviewers=tuple(requested),
        review_decision=decision,
        checks=tuple(CheckView(run.name, run.status, run.conclusion) for run in runs),
    )
