"""A small async GitLab REST (v4) client over httpx: token auth (PRIVATE-TOKEN header), bounded timeouts and
typed errors. No error text ever carries the token (it only travels in a header), redirects are not followed,
so the token is never sent anywhere but the configured instance."""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType
from typing import Any
from urllib.parse import quote, urlsplit

import httpx

from kandev.domain.api_times import api_time
from kandev.domain.gitlab.api import (
    Approvals,
    DiffNote,
    GitLabAuthError,
    GitLabNotFoundError,
    GitLabRefusedError,
    GitLabUnreachableError,
    GitLabUser,
    Job,
    MergeRequest,
    Pipeline,
    Project,
    api_url,
    check_project,
    int_or_none,
    merge_request_of,
)
from kandev.platform.tls import client_tls

DEFAULT_TIMEOUT = httpx.Timeout(10.0, connect=5.0)
PER_PAGE = 100
MAX_DETAIL = 300


def _detail(response: httpx.Response) -> str:
    """GitLab's own short reason for a refusal (its `message`, or `error`), bounded."""
    try:
        data = response.json()
    except ValueError:
        return ""
    found = data.get("message") or data.get("error") if isinstance(data, dict) else ""
    text = "; ".join(str(m) for m in found) if isinstance(found, list) else str(found or "")
    return "".join(c for c in text if c.isprintable())[:MAX_DETAIL]


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
            verify=client_tls(),
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

    async def create_merge_request(
        self, project: str, source: str, target: str, title: str, description: str
    ) -> MergeRequest:
        """Open a merge request from `source` into `target` of the same project."""
        path = f"projects/{_project_ref(project)}/merge_requests"
        body = {"source_branch": source, "target_branch": target, "title": title, "description": description}
        return merge_request_of(project, (await self._call("POST", path, json=body)).json())

    async def accept_merge_request(self, project: str, iid: int, sha: str, squash: bool) -> MergeRequest:
        """Merge it if its head is still `sha` (GitLab's 405/406/409/422 otherwise)."""
        path = f"projects/{_project_ref(project)}/merge_requests/{int(iid)}/merge"
        return merge_request_of(project, (await self._call("PUT", path, json={"sha": sha, "squash": squash})).json())

    async def pipeline_jobs(self, project: str, pipeline_id: int) -> list[Job]:
        path = f"projects/{_project_ref(project)}/pipelines/{int(pipeline_id)}/jobs"
        found = (await self._call("GET", path, params={"per_page": str(PER_PAGE)})).json()
        return [
            Job(
                int(item["id"]),
                str(item.get("name") or ""),
                str(item.get("status") or ""),
                str(item.get("web_url") or ""),
            )
            for item in (found if isinstance(found, list) else ())
            if isinstance(item, dict) and int_or_none(item.get("id")) is not None
        ]

    async def job_trace(self, project: str, job_id: int, limit: int) -> tuple[str, bool]:
        """The last `limit` bytes of a job's log, and whether it was cut."""
        data = (await self._call("GET", f"projects/{_project_ref(project)}/jobs/{int(job_id)}/trace")).content
        return data[-limit:].decode("utf-8", "replace"), len(data) > limit

    async def diff_notes(self, project: str, iid: int) -> list[DiffNote]:
        """People's comments on the merge request (system notes left out), oldest first."""
        path = f"projects/{_project_ref(project)}/merge_requests/{int(iid)}/discussions"
        found = (await self._call("GET", path, params={"per_page": str(PER_PAGE)})).json()
        notes = []
        for discussion in found if isinstance(found, list) else ():
            for note in (discussion.get("notes") or ()) if isinstance(discussion, dict) else ():
                if not isinstance(note, dict) or note.get("system") or int_or_none(note.get("id")) is None:
                    continue
                position = note["position"] if isinstance(note.get("position"), dict) else {}
                new_line, old_line = int_or_none(position.get("new_line")), int_or_none(position.get("old_line"))
                notes.append(
                    DiffNote(
                        id=int(note["id"]),
                        author=str((note.get("author") or {}).get("username") or ""),
                        body=str(note.get("body") or ""),
                        path=(position.get("new_path") or position.get("old_path") or None) if position else None,
                        line=new_line if new_line is not None else old_line,
                        old_side=new_line is None and old_line is not None,
                        created_at=api_time(note.get("created_at")),
                    )
                )
        return notes

    async def branch_protected(self, project: str, branch: str) -> bool:
        try:
            await self._call("GET", f"projects/{_project_ref(project)}/protected_branches/{quote(branch, safe='')}")
        except GitLabNotFoundError:
            return False
        return True

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
        raise GitLabRefusedError(f"GitLab answered {status}", status, _detail(response))
