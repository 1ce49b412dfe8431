"""A small async GitLab REST (v4) client over httpx: token auth (PRIVATE-TOKEN header), bounded timeouts and
typed errors. No error text ever carries the token (it only travels in a header), redirects are not followed,
so the token is never sent anywhere but the configured instance."""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType
from typing import Any
from urllib.parse import quote, urlsplit

import httpx

from kandev.domain.gitlab.api import (
    Approvals,
    GitLabAuthError,
    GitLabError,
    GitLabNotFoundError,
    GitLabUnreachableError,
    GitLabUser,
    MergeRequest,
    Pipeline,
    Project,
    api_url,
    check_project,
    int_or_none,
    merge_request_of,
)

DEFAULT_TIMEOUT = httpx.Timeout(10.0, connect=5.0)
PER_PAGE = 100


def _project_ref(project: str | int) -> str:
    if isinstance(project, int) and not isinstance(project, bool):
        return str(project)
    return quote(check_project(str(project)), safe="")


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
        return GitLabUser(username=str(data.get("username") or ""), id=int_or_none(data.get("id")))

    async def user_id(self, username: str) -> int | None:
        """The id of the user with exactly this username, or None."""
        found = (await self._call("GET", "users", params={"username": username})).json()
        for item in found if isinstance(found, list) else ():
            if isinstance(item, dict) and str(item.get("username", "")).lower() == username.lower():
                return int_or_none(item.get("id"))
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
            int_or_none((permissions.get(kind) or {}).get("access_level")) or 0
            for kind in ("project_access", "group_access")
            if isinstance(permissions.get(kind) or {}, dict)
        ]
        return Project(
            id=int_or_none(data.get("id")),
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
        if with_source and (source := int_or_none(item.get("source_project_id"))) is not None:
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
            approvals_required=int_or_none(data.get("approvals_required")) or 0,
            approvals_left=int_or_none(data.get("approvals_left")) or 0,
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
            if isinstance(item, dict) and int_or_none(item.get("id")) is not None
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
