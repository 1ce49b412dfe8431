"""A small async GitHub REST client over httpx: token auth, bounded timeouts, Link pagination and typed
errors. No error text ever carries the token (it only travels in the Authorization header), and a `next`
link is followed only on the API's own origin, so the token is never sent anywhere else."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Mapping
from datetime import UTC, datetime, timedelta
from types import TracebackType
from typing import Any, NoReturn
from urllib.parse import quote, urlsplit

import httpx

from kandev.domain.api_times import api_time
from kandev.domain.github.api import (
    CheckRun,
    GitHubAuthError,
    GitHubError,
    GitHubNotFoundError,
    GitHubRateLimitedError,
    GitHubRefusedError,
    GitHubTimeoutError,
    GitHubUnreachableError,
    GitHubUser,
    PullRequest,
    ReviewComment,
    check_repository,
)
from kandev.platform.tls import client_tls

DEFAULT_TIMEOUT = httpx.Timeout(10.0, connect=5.0)
PER_PAGE = 100
MAX_PAGES = 50  # 5,000 items: a bound on one listing, whatever the server's links say
_NEXT = re.compile(r'<([^>]+)>\s*;\s*rel="?next"?')
MAX_DETAIL = 300
_METHODS = {"MERGE": "merge", "SQUASH": "squash", "REBASE": "rebase"}


def pull_request_of(repository: str, item: Mapping[str, Any]) -> PullRequest:
    head, base, user = item.get("head") or {}, item.get("base") or {}, item.get("user") or {}
    head_repo, base_repo = head.get("repo") or {}, base.get("repo") or {}
    return PullRequest(
        repository=repository,
        number=int(item["number"]),
        title=str(item.get("title") or ""),
        body=str(item.get("body") or ""),
        url=str(item.get("html_url") or ""),
        author=str(user.get("login") or ""),
        draft=bool(item.get("draft")),
        state=str(item.get("state") or "open"),
        labels=tuple(str(label.get("name")) for label in item.get("labels") or () if label.get("name")),
        head_branch=str(head.get("ref") or ""),
        head_sha=str(head.get("sha") or ""),
        base_branch=str(base.get("ref") or ""),
        updated_at=api_time(item.get("updated_at")),
        merged_at=api_time(item.get("merged_at")),
        head_repository=str(head_repo.get("full_name") or ""),
        head_clone_url=str(head_repo.get("clone_url") or ""),
        base_clone_url=str(base_repo.get("clone_url") or ""),
        maintainer_can_modify=item.get("maintainer_can_modify") is True,
        can_push=(base_repo.get("permissions") or {}).get("push") is True,
        mergeable=item.get("mergeable") if isinstance(item.get("mergeable"), bool) else None,
        mergeable_state=str(item.get("mergeable_state") or ""),
        review_comments=int(item.get("review_comments") or 0),
    )


def check_run_of(item: Mapping[str, Any]) -> CheckRun:
    output = item.get("output") or {}
    text = "\n".join(str(output.get(k) or "") for k in ("title", "summary", "text") if output.get(k))
    return CheckRun(
        id=int(item["id"]),
        name=str(item.get("name") or ""),
        status=str(item.get("status") or ""),
        conclusion=item.get("conclusion"),
        head_sha=str(item.get("head_sha") or ""),
        url=str(item.get("html_url") or item.get("details_url") or ""),
        app=str((item.get("app") or {}).get("slug") or ""),
        output=text,
    )


def refusal_detail(response: httpx.Response) -> str:
    """GitHub's own short reason for a refusal: its message and each error's message or code, bounded."""
    try:
        data = response.json()
    except ValueError:
        return ""
    if not isinstance(data, dict):
        return ""
    parts = [str(data.get("message") or "")]
    for error in data.get("errors") or ():
        if isinstance(error, dict):
            said = error.get("message") or " ".join(str(error[k]) for k in ("field", "code") if error.get(k))
            parts.append(str(said or ""))
        elif isinstance(error, str):
            parts.append(error)
    text = "; ".join(p for p in parts if p)
    return "".join(c for c in text if c.isprintable())[:MAX_DETAIL]


def _rate_limit(response: httpx.Response) -> GitHubRateLimitedError | None:
    headers = response.headers
    if response.status_code not in (403, 429):
        return None
    if response.status_code == 403 and headers.get("x-ratelimit-remaining") != "0" and "retry-after" not in headers:
        return None
    reset_at = None
    if (reset := headers.get("x-ratelimit-reset", "")).isdigit():
        reset_at = datetime.fromtimestamp(int(reset), UTC)
    elif (after := headers.get("retry-after", "")).isdigit():
        reset_at = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=int(after))
    return GitHubRateLimitedError("GitHub's rate limit for this token is spent", response.status_code, reset_at)


class GitHubClient:
    """One token against one API base URL (kandev.domain.github.api.GitHubApi); use as an async context manager
    (or call aclose)."""

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._base = base_url.rstrip("/")
        split = urlsplit(self._base)
        self._origin = (split.scheme, split.netloc)
        self._http = httpx.AsyncClient(
            verify=client_tls(),
            base_url=self._base + "/",
            timeout=timeout,
            transport=transport,
            follow_redirects=False,
            headers={
                "Authorization": f"Bearer {token}",
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": "2022-11-28",
                "User-Agent": "kandev",
            },
        )

    async def __aenter__(self) -> GitHubClient:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def user(self) -> GitHubUser:
        """The token's own user (how a token is verified)."""
        data = (await self._get("user")).json()
        return GitHubUser(login=str(data.get("login") or ""), id=data.get("id"))

    async def open_pull_requests(self, repository: str) -> list[PullRequest]:
        """Every open pull request of `owner/name`, oldest first."""
        path = f"repos/{check_repository(repository)}/pulls"
        params = {"state": "open", "sort": "created", "direction": "asc", "per_page": str(PER_PAGE)}
        return [pull_request_of(repository, item) async for item in self._pages(path, params)]

    async def clone_url(self, repository: str) -> str:
        """The https clone URL of `owner/name` (GitHub's own answer, not one a payload offered)."""
        response = await self._get(f"repos/{check_repository(repository)}")
        return str(response.json().get("clone_url") or "")

    async def pull_request(self, repository: str, number: int) -> PullRequest:
        response = await self._get(f"repos/{check_repository(repository)}/pulls/{int(number)}")
        return pull_request_of(repository, response.json())

    async def pull_requests_by_head(self, repository: str, branch: str, state: str = "all") -> list[PullRequest]:
        """Pull requests whose head is `branch` of the repository's own owner (open, closed and merged)."""
        owner = check_repository(repository).split("/")[0]
        params = {"state": state, "head": f"{owner}:{branch}", "per_page": str(PER_PAGE)}
        found = [pull_request_of(repository, item) async for item in self._pages(f"repos/{repository}/pulls", params)]
        return [pr for pr in found if pr.head_branch == branch]

    async def check_runs(self, repository: str, ref: str) -> list[CheckRun]:
        """The check runs of a commit, branch or tag."""
        path = f"repos/{check_repository(repository)}/commits/{quote(ref, safe='')}/check-runs"
        return [check_run_of(item) async for item in self._pages(path, {"per_page": str(PER_PAGE)}, key="check_runs")]

    async def _pages(
        self, path: str, params: Mapping[str, str], key: str | None = None
    ) -> AsyncIterator[Mapping[str, Any]]:
        """The items of every page, following `Link: <...>; rel="next"` on the API's own origin only."""
        response = await self._get(path, params)
        for _ in range(MAX_PAGES):
            data = response.json()
            items = data.get(key, []) if key and isinstance(data, dict) else data
            for item in items if isinstance(items, list) else ():
                if isinstance(item, dict):
                    yield item
            found = _NEXT.search(response.headers.get("link", ""))
            if found is None:
                return
            next_url = found[1]
            split = urlsplit(next_url)
            if (split.scheme, split.netloc) != self._origin:
                raise GitHubUnreachableError("GitHub sent a next page on another origin; not followed")
            response = await self._get(next_url)

    async def update_pull_request(self, repository: str, number: int, changes: Mapping[str, Any]) -> PullRequest:
        """PATCH title and/or body (GitHub's REST API can not change `draft`: see set_draft)."""
        path = f"repos/{check_repository(repository)}/pulls/{int(number)}"
        return pull_request_of(repository, (await self._send("PATCH", path, dict(changes))).json())

    async def set_labels(self, repository: str, number: int, labels: list[str]) -> None:
        """Replace the pull request's labels with exactly these."""
        path = f"repos/{check_repository(repository)}/issues/{int(number)}/labels"
        await self._send("PUT", path, {"labels": list(labels)})

    async def request_reviewers(self, repository: str, number: int, reviewers: list[str]) -> None:
        """Ask these users for a review (added to those already asked)."""
        path = f"repos/{check_repository(repository)}/pulls/{int(number)}/requested_reviewers"
        await self._send("POST", path, {"reviewers": list(reviewers)})

    async def requested_reviewers(self, repository: str, number: int) -> list[str]:
        path = f"repos/{check_repository(repository)}/pulls/{int(number)}/requested_reviewers"
        data = (await self._get(path)).json()
        return [str(u.get("login")) for u in data.get("users") or () if isinstance(u, dict) and u.get("login")]

    async def review_decision(self, repository: str, number: int, requested: list[str] | None = None) -> str:
        """approved, changes_requested, review_required (someone is asked and none decided) or none: from each
        reviewer's latest approving or change-requesting review (GitHub's REST API has no reviewDecision)."""
        path = f"repos/{check_repository(repository)}/pulls/{int(number)}/reviews"
        latest: dict[str, str] = {}
        async for review in self._pages(path, {"per_page": str(PER_PAGE)}):
            state = str(review.get("state") or "")
            login = str((review.get("user") or {}).get("login") or "")
            if login and state in ("APPROVED", "CHANGES_REQUESTED", "DISMISSED"):
                latest[login] = state
        if "CHANGES_REQUESTED" in latest.values():
            return "changes_requested"
        if "APPROVED" in latest.values():
            return "approved"
        if requested is None:
            requested = await self.requested_reviewers(repository, number)
        return "review_required" if requested else "none"

    async def set_draft(self, repository: str, number: int, draft: bool) -> None:
        """Mark the pull request draft or ready for review: GitHub offers this only in its GraphQL API
        (convertPullRequestToDraft / markPullRequestReadyForReview), at <api>/graphql (GHE: /api/graphql)."""
        response = await self._get(f"repos/{check_repository(repository)}/pulls/{int(number)}")
        node_id = str(response.json().get("node_id") or "")
        if not node_id:
            raise GitHubError("GitHub did not give the pull request's node id")
        mutation = "convertPullRequestToDraft" if draft else "markPullRequestReadyForReview"
        document = f"mutation($id: ID!) {{ {mutation}(input: {{pullRequestId: $id}}) {{ pullRequest {{ isDraft }} }} }}"
        request = {"query": document, "variables": {"id": node_id}}
        answer = (await self._send("POST", self._graphql_url(), request)).json()
        if not isinstance(answer, dict) or answer.get("errors"):
            raise GitHubError("GitHub refused to change the pull request's draft state")

    async def create_pull_request(
        self, repository: str, head: str, base: str, title: str, body: str, draft: bool
    ) -> PullRequest:
        """Open a pull request from `head` (a branch of the repository itself) into `base`."""
        path = f"repos/{check_repository(repository)}/pulls"
        request = {"title": title, "head": head, "base": base, "body": body, "draft": draft}
        return pull_request_of(repository, (await self._send("POST", path, request)).json())

    async def merge_pull_request(self, repository: str, number: int, method: str, sha: str) -> None:
        """Merge it (merge, squash or rebase) if its head is still `sha`; GitHubRefusedError 405 (not mergeable)
        or 409 (the head moved) otherwise."""
        path = f"repos/{check_repository(repository)}/pulls/{int(number)}/merge"
        await self._send("PUT", path, {"merge_method": _METHODS[method], "sha": sha})

    async def review_comments(self, repository: str, number: int) -> list[ReviewComment]:
        path = f"repos/{check_repository(repository)}/pulls/{int(number)}/comments"
        found = []
        async for item in self._pages(path, {"per_page": str(PER_PAGE)}):
            line = item.get("line")
            found.append(
                ReviewComment(
                    id=int(item["id"]),
                    author=str((item.get("user") or {}).get("login") or ""),
                    body=str(item.get("body") or ""),
                    path=str(item.get("path") or ""),
                    line=line if isinstance(line, int) and not isinstance(line, bool) else None,
                    side=str(item.get("side") or "RIGHT"),
                    url=str(item.get("html_url") or ""),
                    created_at=api_time(item.get("created_at")),
                )
            )
        return found

    async def branch_protected(self, repository: str, branch: str) -> bool:
        """Whether the branch is protected (an unknown branch is not)."""
        try:
            response = await self._get(f"repos/{check_repository(repository)}/branches/{quote(branch, safe='')}")
        except GitHubNotFoundError:
            return False
        return response.json().get("protected") is True

    async def job_log(self, repository: str, job_id: int, limit: int) -> tuple[str, bool]:
        """The last `limit` bytes of an Actions job's log and whether it was cut. GitHub answers with a redirect
        to a short-lived storage URL: followed once, without the token (it never leaves for another origin)."""
        path = f"repos/{check_repository(repository)}/actions/jobs/{int(job_id)}/logs"
        try:
            response = await self._http.get(path)
        except httpx.TimeoutException:
            raise GitHubTimeoutError("GitHub did not answer in time") from None
        except httpx.HTTPError:
            raise GitHubUnreachableError("GitHub could not be reached") from None
        if response.status_code in (301, 302, 303, 307, 308) and response.headers.get("location"):
            return await _tail(response.headers["location"], limit)
        if response.status_code >= 300:
            self._raise(response)
        data = response.content
        return data[-limit:].decode("utf-8", "replace"), len(data) > limit

    def _graphql_url(self) -> str:
        base = self._base
        return base[: -len("/v3")] + "/graphql" if base.endswith("/api/v3") else base + "/graphql"

    async def _get(self, path: str, params: Mapping[str, str] | None = None) -> httpx.Response:
        return await self._request("GET", path, params=params)

    async def _send(self, method: str, path: str, body: Mapping[str, Any]) -> httpx.Response:
        return await self._request(method, path, json=body)

    async def _request(
        self, method: str, path: str, *, params: Mapping[str, str] | None = None, json: Any = None
    ) -> httpx.Response:
        try:
            response = await self._http.request(method, path, params=params, json=json)
        except httpx.TimeoutException:
            raise GitHubTimeoutError("GitHub did not answer in time") from None
        except httpx.HTTPError:
            raise GitHubUnreachableError("GitHub could not be reached") from None
        if response.status_code < 300:
            return response
        self._raise(response)

    def _raise(self, response: httpx.Response) -> NoReturn:
        status = response.status_code
        if (limited := _rate_limit(response)) is not None:
            raise limited
        if status == 401:
            raise GitHubAuthError("GitHub refused the token", status)
        if status == 403:
            raise GitHubAuthError("the token may not do this on GitHub", status)
        if status == 404:
            raise GitHubNotFoundError("not found on GitHub (or not visible to this token)", status)
        if status == 422:
            raise GitHubRefusedError(
                "GitHub refused the change (422: e.g. an unknown reviewer or a closed PR)",
                status,
                refusal_detail(response),
            )
        if status in (405, 409):
            raise GitHubRefusedError(f"GitHub refused this ({status})", status, refusal_detail(response))
        if status >= 500:
            raise GitHubUnreachableError(f"GitHub answered {status}", status)
        raise GitHubError(f"GitHub answered {status}", status)


async def _tail(url: str, limit: int) -> tuple[str, bool]:
    """The last `limit` bytes of what `url` serves (no credential sent), read as a stream: never more than
    twice `limit` held at once."""
    kept = b""
    cut = False
    try:
        async with httpx.AsyncClient(timeout=DEFAULT_TIMEOUT, follow_redirects=False, verify=client_tls()) as plain:
            async with plain.stream("GET", url) as response:
                if response.status_code >= 300:
                    raise GitHubUnreachableError(f"the log's storage answered {response.status_code}")
                async for chunk in response.aiter_bytes():
                    kept += chunk
                    if len(kept) > 2 * limit:
                        kept, cut = kept[-limit:], True
    except httpx.TimeoutException:
        raise GitHubTimeoutError("the log's storage did not answer in time") from None
    except httpx.HTTPError:
        raise GitHubUnreachableError("the log's storage could not be reached") from None
    if len(kept) > limit:
        kept, cut = kept[-limit:], True
    return kept.decode("utf-8", "replace"), cut
