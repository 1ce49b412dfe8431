"""A small async GitLab REST (v4) client over httpx: token auth (PRIVATE-TOKEN header), bounded timeouts and
typed errors. No error text ever carries the token (it only travels in a header), redirects are not followed,
so the token is never sent anywhere but the configured instance."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from types import TracebackType
from typing import Any
from urllib.parse import quote, urlsplit

import httpx

from kandev.adapters.code_host_api import api_time

DEFAULT_TIMEOUT = httpx.Timeout(10.0, connect=5.0)
PER_PAGE = 100
# A project's full path: group[/subgroup...]/name (GitLab's path characters).
_PROJECT = re.compile(r"[A-Za-z0-9_.-]{1,255}(/[A-Za-z0-9_.-]{1,255}){1,20}")
DRAFT_PREFIX = "Draft: "
_DRAFT = re.compile(r"^\s*(\[draft\]|\(draft\)|draft:|draft\s*-|wip:|\[wip\])\s*", re.IGNORECASE)


class GitLabError(Exception):
    """A GitLab call that did not succeed; the message is safe to show (no token, no response body)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


class GitLabAuthError(GitLabError):
    """The token was refused (401) or lacks the rights for this call (403)."""


class GitLabNotFoundError(GitLabError):
    """404: unknown, or invisible to this token (GitLab answers both alike)."""


class GitLabUnreachableError(GitLabError):
    """No usable answer: connection refused, timeout, TLS failure, a redirect, or a 5xx."""


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


def _project_ref(project: str | int) -> str:
    if isinstance(project, int) and not isinstance(project, bool):
        return str(project)
    return quote(check_project(str(project)), safe="")


def is_draft_title(title: str) -> bool:
    return bool(_DRAFT.match(title))


def undrafted_title(title: str) -> str:
    """The title without GitLab's draft prefix (Draft:, [Draft], (Draft), WIP: ...)."""
    return _DRAFT.sub("", title, count=1)


def _int(value: object) -> int | None:
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
            r["id"] for r in item.get("reviewers") or () if isinstance(r, dict) and _int(r.get("id")) is not None
        ),
        source_branch=str(item.get("source_branch") or ""),
        target_branch=str(item.get("target_branch") or ""),
        sha=str(item.get("sha") or ""),
        source_project_id=_int(item.get("source_project_id")),
        target_project_id=_int(item.get("target_project_id")),
        allow_collaboration=bool(item.get("allow_collaboration")),
        pipeline_status=str(pipeline["status"]) if isinstance(pipeline, dict) and pipeline.get("status") else None,
        updated_at=api_time(item.get("updated_at")),
        merged_at=api_time(item.get("merged_at")),
        source_clone_url=source_clone_url,
    )


def api_url(base_url: str) -> str:
    """The REST API of a GitLab instance: https://gitlab.example -> https://gitlab.example/api/v4."""
    base = base_url.rstrip("/")
    return base if base.endswith("/api/v4") else base + "/api/v4"


class GitLabClient:
    """One token against one GitLab instance (its base URL, e.g. https://gitlab.com); use as an async context
    manager (or call aclose)."""

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._api = api_url(base_url)
        split = urlsplit(self._api)
        if split.scheme not in ("http", "https") or not split.hostname or split.username or split.password:
            raise ValueError("a GitLab base URL is an http(s) URL without credentials")
        self._http = httpx.AsyncClient(
            base_url=self._api + "/",
            timeout=timeout,
            transport=transport,
            follow_redirects=False,
            headers={"PRIVATE-TOKEN": token, "Accept": "application/json", "User-Agent": "kandev"},
        )

    async def __aenter__(self) -> GitLabClient:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def user(self) -> GitLabUser:
        """The token's own user (how a token is verified)."""
        data = (await self._call("GET", "user")).json()
        return GitLabUser(username=str(data.get("username") or ""), id=_int(data.get("id")))

    async def user_id(self, username: str) -> int | None:
        """The id of the user with exactly this username, or None."""
        found = (await self._call("GET", "users", params={"username": username})).json()
        for item in found if isinstance(found, list) else ():
            if isinstance(item, dict) and str(item.get("username", "")).lower() == username.lower():
                return _int(item.get("id"))
        return None

    async def project_clone_url(self, project: str | int) -> str:
        """A project's HTTPS clone URL (http_url_to_repo)."""
        data = (await self._call("GET", f"projects/{_project_ref(project)}")).json()
        return str(data.get("http_url_to_repo") or "")

    async def project(self, project: str | int) -> Project:
        """A project with the token's access level on it."""
        data = (await self._call("GET", f"projects/{_project_ref(project)}")).json()
        permissions = data.get("permissions") if isinstance(data.get("permissions"), dict) else {}
        levels = [
            _int((permissions.get(kind) or {}).get("access_level")) or 0
            for kind in ("project_access", "group_access")
            if isinstance(permissions.get(kind) or {}, dict)
        ]
        return Project(
            id=_int(data.get("id")),
            path=str(data.get("path_with_namespace") or ""),
            clone_url=str(data.get("http_url_to_repo") or ""),
            access_level=max(levels, default=0),
        )

    async def merge_request(self, project: str, iid: int, *, with_source: bool = True) -> MergeRequest:
        """One merge request of the target project, with (by default) its source project's clone URL — what a
        task opened from a merge request URL needs: source branch, sha, state, allow_collaboration."""
        response = await self._call("GET", f"projects/{_project_ref(project)}/merge_requests/{int(iid)}")
        item = response.json()
        clone = ""
        if with_source and (source := _int(item.get("source_project_id"))) is not None:
            clone = await self.project_clone_url(source)
        return merge_request_of(project, item, clone)

    async def merge_requests_by_source_branch(
        self, project: str, branch: str, state: str = "all"
    ) -> list[MergeRequest]:
        """The target project's merge requests from `branch` (opened, closed, locked and merged), newest first."""
        params = {"source_branch": branch, "state": state, "per_page": str(PER_PAGE)}
        found = (await self._call("GET", f"projects/{_project_ref(project)}/merge_requests", params=params)).json()
        items = [item for item in found if isinstance(item, dict)] if isinstance(found, list) else []
        return [merge_request_of(project, item) for item in items if item.get("source_branch") == branch]

    async def update_merge_request(self, project: str, iid: int, changes: Mapping[str, Any]) -> MergeRequest:
        """PUT the given fields (title, description, labels as a comma-separated string, reviewer_ids ...)."""
        path = f"projects/{_project_ref(project)}/merge_requests/{int(iid)}"
        return merge_request_of(project, (await self._call("PUT", path, json=dict(changes))).json())

    async def approvals(self, project: str, iid: int) -> Approvals:
        path = f"projects/{_project_ref(project)}/merge_requests/{int(iid)}/approvals"
        data = (await self._call("GET", path)).json()
        by = tuple(
            str((entry.get("user") or {}).get("username"))
            for entry in data.get("approved_by") or ()
            if isinstance(entry, dict) and (entry.get("user") or {}).get("username")
        )
        return Approvals(
            approved=bool(data.get("approved")),
            approvals_required=_int(data.get("approvals_required")) or 0,
            approvals_left=_int(data.get("approvals_left")) or 0,
            approved_by=by,
        )

    async def pipelines(self, project: str, iid: int) -> list[Pipeline]:
        """The merge request's pipelines, newest first."""
        path = f"projects/{_project_ref(project)}/merge_requests/{int(iid)}/pipelines"
        found = (await self._call("GET", path, params={"per_page": str(PER_PAGE)})).json()
        return [
            Pipeline(
                id=int(item["id"]),
                status=str(item.get("status") or ""),
                ref=str(item.get("ref") or ""),
                sha=str(item.get("sha") or ""),
                url=str(item.get("web_url") or ""),
            )
            for item in (found if isinstance(found, list) else ())
            if isinstance(item, dict) and _int(item.get("id")) is not None
        ]

    async def _call(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        json: Mapping[str, Any] | None = None,
    ) -> httpx.Response:
        try:
            response = await self._http.request(method, path, params=params, json=json)
        except httpx.TimeoutException:
            raise GitLabUnreachableError("GitLab did not answer in time") from None
        except httpx.HTTPError:
            raise GitLabUnreachableError("GitLab could not be reached") from None
        status = response.status_code
        if status < 300:
            return response
        if status == 401:
            raise GitLabAuthError("GitLab refused the token", status)
        if status == 403:
            raise GitLabAuthError("the token may not do this on GitLab", status)
        if status == 404:
            raise GitLabNotFoundError("not found on GitLab (or not visible to this token)", status)
        if status < 400 or status >= 500:
            raise GitLabUnreachableError(f"GitLab answered {status}", status)
        raise GitLabError(f"GitLab answered {status}", status)
