"""A local fake of the GitHub REST API (the parts Kandev's client uses), served by uvicorn on a free port.

Repositories, pull requests and check runs live in memory; tests add and change them through the object.
Every call needs one of the known tokens; listings page with Link headers like GitHub's."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.support.server import free_port, serving


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


@dataclass
class FakePullRequest:
    number: int
    title: str = "A change"
    body: str = ""
    author: str = "octocat"
    head: str = "feature"
    head_sha: str = "a" * 40
    base: str = "main"
    draft: bool = False
    labels: list[str] = field(default_factory=list)
    state: str = "open"
    merged_at: str | None = None
    updated_at: str = field(default_factory=_now)
    requested_reviewers: list[str] = field(default_factory=list)
    # (login, state) in submission order: APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED.
    reviews: list[tuple[str, str]] = field(default_factory=list)
    # Where head and base live: the head's repository (default: the PR's own; a fork's name otherwise, None
    # when the fork is gone), clone URLs (default: on the fake's origin), and what the token may do.
    head_repository: str | None = ""
    head_clone_url: str = ""
    base_clone_url: str = ""
    maintainer_can_modify: bool = False
    can_push: bool = True

    def json(self, repository: str, origin: str) -> dict[str, Any]:
        head_repository = repository if self.head_repository == "" else self.head_repository
        head_repo = (
            None
            if head_repository is None
            else {"full_name": head_repository, "clone_url": self.head_clone_url or f"{origin}/{head_repository}.git"}
        )
        base_repo = {
            "full_name": repository,
            "clone_url": self.base_clone_url or f"{origin}/{repository}.git",
            "permissions": {"admin": False, "push": self.can_push, "pull": True},
        }
        return {
            "number": self.number,
            "node_id": f"PR_{repository}#{self.number}",
            "title": self.title,
            "body": self.body,
            "html_url": f"{origin}/{repository}/pull/{self.number}",
            "user": {"login": self.author},
            "draft": self.draft,
            "state": self.state,
            "labels": [{"name": name} for name in self.labels],
            "head": {"ref": self.head, "sha": self.head_sha, "repo": head_repo},
            "base": {"ref": self.base, "repo": base_repo},
            "maintainer_can_modify": self.maintainer_can_modify,
            "updated_at": self.updated_at,
            "merged_at": self.merged_at,
            "requested_reviewers": [{"login": login} for login in self.requested_reviewers],
        }


@dataclass
class FakeGitHub:
    """The fake's state; `tokens` maps each accepted token to its user's login."""

    tokens: dict[str, str] = field(default_factory=lambda: {"good-token": "octocat"})
    pulls: dict[str, dict[int, FakePullRequest]] = field(default_factory=dict)
    check_runs: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    # owner/name -> clone URL, for GET /repos/{owner}/{name} (default: on the fake's origin)
    clone_urls: dict[str, str] = field(default_factory=dict)
    page_size: int = 100
    rate_limited_until: int | None = None  # epoch seconds: every call answers 403 rate-limited
    requests: list[str] = field(default_factory=list)
    # Every write as (method, path, JSON body), so tests see exactly what changed.
    writes: list[tuple[str, str, Any]] = field(default_factory=list)
    # Logins a review may be requested from (others answer 422 like GitHub).
    collaborators: set[str] = field(default_factory=lambda: {"octocat", "hubot", "monalisa"})
    url: str = ""

    def add_pr(self, repository: str, number: int | None = None, **fields: Any) -> FakePullRequest:
        prs = self.pulls.setdefault(repository, {})
        number = number or (max(prs, default=0) + 1)
        pr = FakePullRequest(number=number, **fields)
        prs[number] = pr
        return pr

    def update_pr(self, repository: str, number: int, **fields: Any) -> FakePullRequest:
        pr = self.pulls[repository][number]
        for name, value in fields.items():
            setattr(pr, name, value)
        pr.updated_at = _now()
        return pr

    def merge_pr(self, repository: str, number: int) -> FakePullRequest:
        return self.update_pr(repository, number, state="closed", merged_at=_now())

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/user", self._user),
                Route("/repos/{owner}/{name}", self._repository),
                Route("/repos/{owner}/{name}/pulls", self._list_pulls),
                Route("/repos/{owner}/{name}/pulls/{number:int}", self._get_pull, methods=["GET", "PATCH"]),
                Route(
                    "/repos/{owner}/{name}/pulls/{number:int}/requested_reviewers",
                    self._reviewers,
                    methods=["GET", "POST"],
                ),
                Route("/repos/{owner}/{name}/pulls/{number:int}/reviews", self._reviews),
                Route("/repos/{owner}/{name}/issues/{number:int}/labels", self._labels, methods=["PUT"]),
                Route("/graphql", self._graphql, methods=["POST"]),
                Route("/repos/{owner}/{name}/commits/{ref:path}/check-runs", self._check_runs),
            ]
        )

    def _refused(self, request: Request) -> JSONResponse | None:
        self.requests.append(request.url.path)
        if self.rate_limited_until is not None:
            headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(self.rate_limited_until)}
            return JSONResponse({"message": "API rate limit exceeded"}, 403, headers=headers)
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() not in ("bearer", "token") or token not in self.tokens:
            return JSONResponse({"message": "Bad credentials"}, 401)
        return None

    def _page(self, request: Request, items: list[Any], key: str | None = None) -> JSONResponse:
        per_page = min(int(request.query_params.get("per_page", "30")), self.page_size)
        page = int(request.query_params.get("page", "1"))
        chunk = items[(page - 1) * per_page : page * per_page]
        headers = {}
        if page * per_page < len(items):
            nxt = request.url.include_query_params(page=str(page + 1))
            headers["link"] = f'<{nxt}>; rel="next"'
        body: Any = {"total_count": len(items), key: chunk} if key else chunk
        return JSONResponse(body, headers=headers)

    async def _user(self, request: Request) -> JSONResponse:
        if refused := self._refused(request):
            return refused
        token = request.headers["authorization"].partition(" ")[2]
        return JSONResponse({"login": self.tokens[token], "id": 1})

    async def _repository(self, request: Request) -> JSONResponse:
        if refused := self._refused(request):
            return refused
        repository = f"{request.path_params['owner']}/{request.path_params['name']}"
        clone_url = self.clone_urls.get(repository, f"{self.url}/{repository}.git")
        return JSONResponse({"full_name": repository, "clone_url": clone_url})

    async def _list_pulls(self, request: Request) -> JSONResponse:
        if refused := self._refused(request):
            return refused
        repository = f"{request.path_params['owner']}/{request.path_params['name']}"
        if repository not in self.pulls:
            return JSONResponse({"message": "Not Found"}, 404)
        state = request.query_params.get("state", "open")
        head = request.query_params.get("head")
        found = []
        for pr in sorted(self.pulls[repository].values(), key=lambda p: p.number):
            if state != "all" and pr.state != state:
                continue
            if head and head != f"{repository.split('/')[0]}:{pr.head}":
                continue
            found.append(pr.json(repository, self.url))
        return self._page(request, found)

    async def _get_pull(self, request: Request) -> JSONResponse:
        if refused := self._refused(request):
            return refused
        repository = f"{request.path_params['owner']}/{request.path_params['name']}"
        pr = self.pulls.get(repository, {}).get(request.path_params["number"])
        if pr is None:
            return JSONResponse({"message": "Not Found"}, 404)
        if request.method == "PATCH":
            body = await request.json()
            self.writes.append(("PATCH", request.url.path, body))
            for name in ("title", "body", "state", "base"):
                if name in body:
                    setattr(pr, name, body[name])
            pr.updated_at = _now()
        return JSONResponse(pr.json(repository, self.url))

    def _pr(self, request: Request) -> tuple[str, FakePullRequest | None]:
        repository = f"{request.path_params['owner']}/{request.path_params['name']}"
        return repository, self.pulls.get(repository, {}).get(request.path_params["number"])

    async def _reviewers(self, request: Request) -> JSONResponse:
        if refused := self._refused(request):
            return refused
        repository, pr = self._pr(request)
        if pr is None:
            return JSONResponse({"message": "Not Found"}, 404)
        if request.method == "POST":
            body = await request.json()
            self.writes.append(("POST", request.url.path, body))
            unknown = [login for login in body.get("reviewers", []) if login not in self.collaborators]
            if unknown:
                return JSONResponse({"message": "Reviews may only be requested from collaborators."}, 422)
            pr.requested_reviewers += [r for r in body.get("reviewers", []) if r not in pr.requested_reviewers]
            return JSONResponse(pr.json(repository, self.url), 201)
        return JSONResponse({"users": [{"login": login} for login in pr.requested_reviewers], "teams": []})

    async def _reviews(self, request: Request) -> JSONResponse:
        if refused := self._refused(request):
            return refused
        _, pr = self._pr(request)
        if pr is None:
            return JSONResponse({"message": "Not Found"}, 404)
        reviews = [{"id": i + 1, "user": {"login": who}, "state": state} for i, (who, state) in enumerate(pr.reviews)]
        return self._page(request, reviews)

    async def _labels(self, request: Request) -> JSONResponse:
        if refused := self._refused(request):
            return refused
        _, pr = self._pr(request)
        if pr is None:
            return JSONResponse({"message": "Not Found"}, 404)
        body = await request.json()
        self.writes.append(("PUT", request.url.path, body))
        pr.labels = list(body.get("labels", []))
        return JSONResponse([{"name": name} for name in pr.labels])

    async def _graphql(self, request: Request) -> JSONResponse:
        """Only the two draft mutations, by the PR's node id (as GitHub's GraphQL API offers them)."""
        if refused := self._refused(request):
            return refused
        body = await request.json()
        self.writes.append(("POST", request.url.path, body))
        query, node = str(body.get("query", "")), str((body.get("variables") or {}).get("id", ""))
        for repository, prs in self.pulls.items():
            for pr in prs.values():
                if f"PR_{repository}#{pr.number}" == node:
                    if "convertPullRequestToDraft" in query:
                        pr.draft = True
                    elif "markPullRequestReadyForReview" in query:
                        pr.draft = False
                    else:
                        return JSONResponse({"errors": [{"message": "unsupported by the fake"}]})
                    return JSONResponse({"data": {"x": {"pullRequest": {"isDraft": pr.draft}}}})
        return JSONResponse({"errors": [{"type": "NOT_FOUND", "message": "Could not resolve to a node"}]})

    async def _check_runs(self, request: Request) -> JSONResponse:
        if refused := self._refused(request):
            return refused
        repository = f"{request.path_params['owner']}/{request.path_params['name']}"
        return self._page(request, self.check_runs.get((repository, request.path_params["ref"]), []), "check_runs")


@asynccontextmanager
async def fake_github(fake: FakeGitHub | None = None) -> AsyncIterator[FakeGitHub]:
    """The fake served on a free loopback port; `fake.url` is its base URL, valid inside the block."""
    fake = fake or FakeGitHub()
    port = free_port()
    fake.url = f"http://127.0.0.1:{port}"
    async with serving(fake.app(), port):
        yield fake
