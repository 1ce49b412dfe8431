"""What the domain needs from GitLab's REST API (v4), named here and implemented by kandev.adapters.gitlab.client
(registered at composition): the calls, the values they answer and the errors they raise. No error text ever
carries a token."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from types import TracebackType
from typing import Any, Protocol

from kandev.domain.api_times import api_time
from kandev.domain.host_api_errors import (
    HostApiError,
    HostAuthError,
    HostNotFoundError,
    HostRefusedError,
    HostUnreachableError,
)

DRAFT_PREFIX = "Draft: "
_DRAFT = re.compile(r"^\s*(\[draft\]|\(draft\)|draft:|draft\s*-|wip:|\[wip\])\s*", re.IGNORECASE)
# A project's full path: group[/subgroup...]/name (GitLab's path characters).
_PROJECT = re.compile(r"[A-Za-z0-9_.-]{1,255}(/[A-Za-z0-9_.-]{1,255}){1,20}")


class GitLabError(HostApiError):
    """A GitLab call that did not succeed; the message is safe to show (no token, no response body)."""


class GitLabAuthError(GitLabError, HostAuthError):
    """The token was refused (401) or lacks the rights for this call (403)."""


class GitLabNotFoundError(GitLabError, HostNotFoundError):
    """404: unknown, or invisible to this token (GitLab answers both alike)."""


class GitLabUnreachableError(GitLabError, HostUnreachableError):
    """No usable answer: connection refused, timeout, TLS failure, a redirect, or a 5xx."""


class GitLabRefusedError(GitLabError, HostRefusedError):
    """GitLab understood the call and refused it (400, 405, 406, 409, 422): `detail` is GitLab's own short reason
    (its `message`, bounded), never a token."""


@dataclass(frozen=True)
class GitLabUser:
    username: str
    id: int | None = None


@dataclass(frozen=True)
class MergeRequest:
    """The parts of a merge request Kandev reads. `project` is the target project's path."""

    project: str
    iid: int
    title: str
    description: str
    url: str
    author: str
    draft: bool
    state: str  # opened | closed | locked | merged (GitLab's)
    labels: tuple[str, ...]
    reviewers: tuple[str, ...]
    reviewer_ids: tuple[int, ...]
    source_branch: str
    target_branch: str
    sha: str
    source_project_id: int | None
    target_project_id: int | None
    # Whether members of the target project may push to the source branch (a fork's MR).
    allow_collaboration: bool
    pipeline_status: str | None
    updated_at: datetime | None
    merged_at: datetime | None
    # The source project's HTTPS clone URL (the fork's, for a fork's MR); "" when not asked for.
    source_clone_url: str = ""
    # GitLab's word on merging it now (mergeable, conflict, ci_must_pass, not_approved, draft_status, checking,
    # need_rebase, ...), whether it conflicts, its head pipeline and how many comments it has.
    merge_status: str = ""
    has_conflicts: bool = False
    pipeline_id: int | None = None
    notes: int = 0


@dataclass(frozen=True)
class Job:
    """A job of a pipeline (what a merge request's checks are on GitLab)."""

    id: int
    name: str
    status: str  # created, pending, running, success, failed, canceled, skipped, manual
    url: str


@dataclass(frozen=True)
class DiffNote:
    """A comment on a merge request: on a line of its diff (`path`, `line`) or on the whole request."""

    id: int
    author: str
    body: str
    path: str | None
    line: int | None
    old_side: bool
    created_at: datetime | None


@dataclass(frozen=True)
class Project:
    """A project as the token sees it: its HTTPS clone URL and the token's access level on it (GitLab's
    numbers: 30 Developer may push, 40 Maintainer, 50 Owner; the higher of project and group access)."""

    id: int | None
    path: str
    clone_url: str
    access_level: int


# The lowest access level that may push to a project's (unprotected) branches.
DEVELOPER = 30


@dataclass(frozen=True)
class Approvals:
    approved: bool
    approvals_required: int
    approvals_left: int
    approved_by: tuple[str, ...]


@dataclass(frozen=True)
class Pipeline:
    id: int
    status: str
    ref: str
    sha: str
    url: str


def check_project(path: str) -> str:
    """`group/name` (subgroups allowed), or ValueError: it becomes part of a URL path."""
    if not _PROJECT.fullmatch(path) or ".." in path:
        raise ValueError("a project is group/name")
    return path


def is_draft_title(title: str) -> bool:
    return bool(_DRAFT.match(title))


def undrafted_title(title: str) -> str:
    """The title without GitLab's draft prefix (Draft:, [Draft], (Draft), WIP: ...)."""
    return _DRAFT.sub("", title, count=1)


def int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def merge_request_of(project: str, item: Mapping[str, Any], source_clone_url: str = "") -> MergeRequest:
    pipeline = item.get("head_pipeline") or item.get("pipeline") or {}
    title = str(item.get("title") or "")
    return MergeRequest(
        project=project,
        iid=int(item["iid"]),
        title=title,
        description=str(item.get("description") or ""),
        url=str(item.get("web_url") or ""),
        author=str((item.get("author") or {}).get("username") or ""),
        draft=bool(item.get("draft", item.get("work_in_progress", is_draft_title(title)))),
        state=str(item.get("state") or "opened"),
        labels=tuple(str(label) for label in item.get("labels") or () if isinstance(label, str)),
        reviewers=tuple(
            str(r.get("username")) for r in item.get("reviewers") or () if isinstance(r, dict) and r.get("username")
        ),
        reviewer_ids=tuple(
            r["id"] for r in item.get("reviewers") or () if isinstance(r, dict) and int_or_none(r.get("id")) is not None
        ),
        source_branch=str(item.get("source_branch") or ""),
        target_branch=str(item.get("target_branch") or ""),
        sha=str(item.get("sha") or ""),
        source_project_id=int_or_none(item.get("source_project_id")),
        target_project_id=int_or_none(item.get("target_project_id")),
        allow_collaboration=bool(item.get("allow_collaboration")),
        pipeline_status=str(pipeline["status"]) if isinstance(pipeline, dict) and pipeline.get("status") else None,
        updated_at=api_time(item.get("updated_at")),
        merged_at=api_time(item.get("merged_at")),
        source_clone_url=source_clone_url,
        merge_status=str(item.get("detailed_merge_status") or item.get("merge_status") or ""),
        has_conflicts=item.get("has_conflicts") is True,
        pipeline_id=int_or_none(pipeline.get("id")) if isinstance(pipeline, dict) else None,
        notes=int_or_none(item.get("user_notes_count")) or 0,
    )


def api_url(base_url: str) -> str:
    """The REST API of a GitLab instance: https://gitlab.example -> https://gitlab.example/api/v4."""
    base = base_url.rstrip("/")
    return base if base.endswith("/api/v4") else base + "/api/v4"


class GitLabApi(Protocol):
    """One token against one GitLab instance; an async context manager."""

    async def __aenter__(self) -> GitLabApi: ...

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None: ...

    async def aclose(self) -> None: ...

    async def user(self) -> GitLabUser: ...

    async def user_id(self, username: str) -> int | None: ...

    async def project_clone_url(self, project: str | int) -> str: ...

    async def project(self, project: str | int) -> Project: ...

    async def merge_request(self, project: str, iid: int, *, with_source: bool = True) -> MergeRequest: ...

    async def merge_requests_by_source_branch(
        self, project: str, branch: str, state: str = "all"
    ) -> list[MergeRequest]: ...

    async def update_merge_request(self, project: str, iid: int, changes: Mapping[str, Any]) -> MergeRequest: ...

    async def approvals(self, project: str, iid: int) -> Approvals: ...

    async def pipelines(self, project: str, iid: int) -> list[Pipeline]: ...

    async def create_merge_request(
        self, project: str, source: str, target: str, title: str, description: str
    ) -> MergeRequest: ...

    async def accept_merge_request(self, project: str, iid: int, sha: str, squash: bool) -> MergeRequest: ...

    async def pipeline_jobs(self, project: str, pipeline_id: int) -> list[Job]: ...

    async def job_trace(self, project: str, job_id: int, limit: int) -> tuple[str, bool]: ...

    async def diff_notes(self, project: str, iid: int) -> list[DiffNote]: ...

    async def branch_protected(self, project: str, branch: str) -> bool: ...


_connect: list[Callable[[str, str], GitLabApi]] = []


def use_gitlab_api(connect: Callable[[str, str], GitLabApi]) -> None:
    """Register how to reach GitLab (the composition root does, at start-up)."""
    _connect[:] = [connect]


def gitlab_api(base_url: str, token: str) -> GitLabApi:
    """A client of the GitLab instance at `base_url` with `token`, through the registered adapter."""
    if not _connect:
        raise RuntimeError("no GitLab API adapter is registered: kandev.wiring registers one at start-up")
    return _connect[0](base_url, token)
