"""What the domain needs from GitHub's REST API, named here and implemented by kandev.adapters.github.client
(registered at composition): the calls, the values they answer and the errors they raise. No error text ever
carries a token."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from types import TracebackType
from typing import Any, Protocol

from kandev.domain.host_api_errors import (
    HostApiError,
    HostAuthError,
    HostNotFoundError,
    HostRateLimitedError,
    HostRefusedError,
    HostTimeoutError,
    HostUnreachableError,
)

_REPOSITORY = re.compile(r"[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}")


class GitHubError(HostApiError):
    """A GitHub call that did not succeed; the message is safe to show (no token, no response body)."""


class GitHubAuthError(GitHubError, HostAuthError):
    """The token was refused (401) or lacks the rights for this call (403 without a rate limit)."""


class GitHubNotFoundError(GitHubError, HostNotFoundError):
    """404: unknown, or invisible to this token (GitHub answers both alike)."""


class GitHubRateLimitedError(GitHubError, HostRateLimitedError):
    """The token's rate limit is spent; `reset_at` says when it refills, when GitHub said so."""


class GitHubUnreachableError(GitHubError, HostUnreachableError):
    """No usable answer: connection refused, timeout, TLS failure, or a 5xx."""


class GitHubTimeoutError(GitHubUnreachableError, HostTimeoutError):
    """No answer in time: the call may or may not have taken effect on GitHub."""


class GitHubRefusedError(GitHubError, HostRefusedError):
    """GitHub understood the call and refused it (405, 409, 422): `detail` is GitHub's own short reason (its
    `message` and error codes, bounded), never a token."""


@dataclass(frozen=True)
class GitHubUser:
    login: str
    id: int | None = None


@dataclass(frozen=True)
class PullRequest:
    """The parts of a pull request the triggers and links read."""

    repository: str
    number: int
    title: str
    body: str
    url: str
    author: str
    draft: bool
    state: str  # open | closed (GitHub's); merged is `merged_at` set on a closed PR
    labels: tuple[str, ...]
    head_branch: str
    head_sha: str
    base_branch: str
    updated_at: datetime | None
    merged_at: datetime | None
    # Where the head and base live (clone URLs; the head's is "" when its repository is gone), and whether
    # the token may push to them: `can_push` is the base repository's push permission for this token.
    head_repository: str = ""
    head_clone_url: str = ""
    base_clone_url: str = ""
    maintainer_can_modify: bool = False
    can_push: bool = False
    # True, False, or None while GitHub computes it; `mergeable_state` is GitHub's word (clean, dirty, blocked,
    # behind, unstable, draft, unknown).
    mergeable: bool | None = None
    mergeable_state: str = ""
    review_comments: int = 0

    @property
    def status(self) -> str:
        """open, closed or merged."""
        return "merged" if self.merged_at is not None else self.state


@dataclass(frozen=True)
class CheckRun:
    id: int
    name: str
    status: str
    conclusion: str | None
    head_sha: str
    url: str = ""
    # The app that ran it (github-actions: its log is the Actions job's), and its own text output.
    app: str = ""
    output: str = ""


@dataclass(frozen=True)
class ReviewComment:
    """A review comment on a line of a pull request's diff."""

    id: int
    author: str
    body: str
    path: str
    line: int | None
    side: str  # LEFT (the base) or RIGHT
    url: str
    created_at: datetime | None


def check_repository(full_name: str) -> str:
    """`owner/name`, or ValueError: it becomes part of a URL path."""
    if not _REPOSITORY.fullmatch(full_name) or ".." in full_name:
        raise ValueError("a repository is owner/name")
    return full_name


class GitHubApi(Protocol):
    """One token against one API base URL; an async context manager."""

    async def __aenter__(self) -> GitHubApi: ...

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None: ...

    async def aclose(self) -> None: ...

    async def user(self) -> GitHubUser: ...

    async def open_pull_requests(self, repository: str) -> list[PullRequest]: ...

    async def clone_url(self, repository: str) -> str: ...

    async def pull_request(self, repository: str, number: int) -> PullRequest: ...

    async def pull_requests_by_head(self, repository: str, branch: str, state: str = "all") -> list[PullRequest]: ...

    async def check_runs(self, repository: str, ref: str) -> list[CheckRun]: ...

    async def update_pull_request(self, repository: str, number: int, changes: Mapping[str, Any]) -> PullRequest: ...

    async def set_labels(self, repository: str, number: int, labels: list[str]) -> None: ...

    async def request_reviewers(self, repository: str, number: int, reviewers: list[str]) -> None: ...

    async def requested_reviewers(self, repository: str, number: int) -> list[str]: ...

    async def review_decision(self, repository: str, number: int, requested: list[str] | None = None) -> str: ...

    async def set_draft(self, repository: str, number: int, draft: bool) -> None: ...

    async def create_pull_request(
        self, repository: str, head: str, base: str, title: str, body: str, draft: bool
    ) -> PullRequest: ...

    async def merge_pull_request(self, repository: str, number: int, method: str, sha: str) -> None: ...

    async def review_comments(self, repository: str, number: int) -> list[ReviewComment]: ...

    async def branch_protected(self, repository: str, branch: str) -> bool: ...

    async def job_log(self, repository: str, job_id: int, limit: int) -> tuple[str, bool]: ...


_connect: list[Callable[[str, str], GitHubApi]] = []


def use_github_api(connect: Callable[[str, str], GitHubApi]) -> None:
    """Register how to reach GitHub (the composition root does, at start-up)."""
    _connect[:] = [connect]


def github_api(base_url: str, token: str) -> GitHubApi:
    """A client of the API at `base_url` with `token`, through the registered adapter."""
    if not _connect:
        raise RuntimeError("no GitHub API adapter is registered: kandev.wiring registers one at start-up")
    return _connect[0](base_url, token)
