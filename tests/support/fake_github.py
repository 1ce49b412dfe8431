"""A local fake of the GitHub REST API (the parts Kandev's client uses), served by uvicorn on a free port.

Repositories, pull requests and check runs live in memory; tests add and change them through the object.
Every call needs one of the known tokens; listings page with Link headers like GitHub's.

A repository may be backed by a real bare repository (`git_roots`): then its pull requests follow their head
branch as pushed there (like GitHub's), opening one needs its base and head branches to exist, and a merge
really moves the base branch. `faults` make chosen calls answer an error or answer late (once each)."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
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
    # None: computed from the bare repository when there is one (else True); True/False: as given.
    mergeable: bool | None = None
    mergeable_state: str = ""
    # Review comments on lines: {"id", "user", "body", "path", "line", "side"}.
    comments: list[dict[str, Any]] = field(default_factory=list)

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
            "mergeable": True if self.mergeable is None else self.mergeable,
            "mergeable_state": self.mergeable_state or ("clean" if self.mergeable is not False else "dirty"),
            "review_comments": len(self.comments),
        }


@dataclass
class Fault:
    """The next call whose method is `method` and whose path contains `path` answers `status` (with `body`), after
    `delay` seconds when given; with `effect` the call itself still happens first (a write GitHub made but answered
    badly or too late)."""

    method: str
    path: str
    status: int | None = None
    body: Any = None
    delay: float = 0.0
    times: int = 1
    effect: bool = False


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
    # owner/name -> a bare repository whose branches the pull requests follow (see the module's docstring).
    git_roots: dict[str, Path] = field(default_factory=dict)
    # owner/name -> branch names GitHub protects.
    protected: dict[str, set[str]] = field(default_factory=dict)
    # Actions job id -> its log; served (without a token) behind a redirect, like GitHub's log storage.
    job_logs: dict[int, str] = field(default_factory=dict)
    # While set and not yet released, a job's log answers only once it is (a hanging log read).
    logs_gate: asyncio.Event | None = None
    # Whether each log download carried an Authorization header (it never should).
    log_downloads: list[bool] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    # Every pull request POST (the body), so tests count what reached GitHub.
    created: list[dict[str, Any]] = field(default_factory=list)
    merges: list[dict[str, Any]] = field(default_factory=list)

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

    def add_check(
        self, repository: str, sha: str, name: str, conclusion: str | None, *, log: str = "", status: str = ""
    ) -> int:
        """A check run of `sha` by GitHub Actions (its log in job_logs); completed unless conclusion is None."""
        runs = self.check_runs.setdefault((repository, sha), [])
        run_id = 1000 + sum(len(found) for found in self.check_runs.values())
        runs.append(
            {
                "id": run_id,
                "name": name,
                "status": status or ("completed" if conclusion else "in_progress"),
                "conclusion": conclusion,
                "head_sha": sha,
                "html_url": f"{self.url}/{repository}/runs/{run_id}",
                "app": {"slug": "github-actions"},
                "output": {"title": f"{name}: {conclusion}", "summary": "", "text": ""},
            }
        )
        self.job_logs[run_id] = log
        return run_id

    def head_of(self, repository: str, branch: str) -> str | None:
        """The branch's commit in the repository's bare repository (None: no such branch, or none backs it)."""
        bare = self.git_roots.get(repository)
        if bare is None:
            return None
        done = subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}"],
            cwd=bare,
            capture_output=True,
            text=True,
            check=False,
        )
        return done.stdout.strip() or None

    def _follow(self, repository: str, pr: FakePullRequest) -> None:
        """A pull request follows its head branch as pushed (GitHub's synchronize)."""
        head = self.head_of(repository, pr.head) if pr.state == "open" else None
        if head and head != pr.head_sha:
            pr.head_sha, pr.updated_at = head, _now()

    def _take_fault(self, request: Request) -> Fault | None:
        for fault in list(self.faults):
            if fault.method == request.method and fault.path in request.url.path:
                fault.times -= 1
                if fault.times <= 0:
                    self.faults.remove(fault)
                return fault
        return None

    async def _fault(self, request: Request) -> Response | None:
        """A fault without effect: answered instead of the call."""
        fault = self._take_fault(request)
        if fault is None:
            return None
        if fault.delay:
            await asyncio.sleep(fault.delay)
        if fault.status is not None:
            return JSONResponse(fault.body or {"message": f"fault {fault.status}"}, fault.status)
        return None

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/user", self._user),
                Route("/repos/{owner}/{name}", self._repository),
                Route("/repos/{owner}/{name}/pulls", self._list_pulls, methods=["GET", "POST"]),
                Route("/repos/{owner}/{name}/pulls/{number:int}", self._get_pull, methods=["GET", "PATCH"]),
                Route("/repos/{owner}/{name}/pulls/{number:int}/merge", self._merge, methods=["PUT"]),
                Route("/repos/{owner}/{name}/pulls/{number:int}/comments", self._comments),
                Route("/repos/{owner}/{name}/branches/{branch:path}", self._branch),
                Route("/repos/{owner}/{name}/actions/jobs/{job:int}/logs", self._job_log),
                Route("/_storage/logs/{job:int}", self._log_blob),
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

    async def _list_pulls(self, request: Request) -> Response:
        if refused := self._refused(request):
            return refused
        repository = f"{request.path_params['owner']}/{request.path_params['name']}"
        if request.method == "POST":
            return await self._create(request, repository)
        if repository not in self.pulls and repository not in self.git_roots:
            return JSONResponse({"message": "Not Found"}, 404)
        state = request.query_params.get("state", "open")
        head = request.query_params.get("head")
        found = []
        for pr in sorted(self.pulls.get(repository, {}).values(), key=lambda p: p.number):
            self._follow(repository, pr)
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
        if faulted := await self._fault(request):
            return faulted
        self._follow(repository, pr)
        if request.method == "PATCH":
            body = await request.json()
            self.writes.append(("PATCH", request.url.path, body))
            for name in ("title", "body", "state", "base"):
                if name in body:
                    setattr(pr, name, body[name])
            pr.updated_at = _now()
        return JSONResponse(pr.json(repository, self.url))

    async def _create(self, request: Request, repository: str) -> Response:
        body = await request.json()
        self.created.append(body)
        self.writes.append(("POST", request.url.path, body))
        fault = self._take_fault(request)
        if fault is not None and fault.delay:
            await asyncio.sleep(fault.delay)
        if fault is not None and fault.status is not None and not fault.effect:
            return JSONResponse(fault.body or {"message": f"fault {fault.status}"}, fault.status)
        head, base = str(body.get("head") or ""), str(body.get("base") or "")
        if any(p.head == head and p.state == "open" for p in self.pulls.get(repository, {}).values()):
            owner = repository.split("/")[0]
            message = f"A pull request already exists for {owner}:{head}."
            return JSONResponse({"message": "Validation Failed", "errors": [{"message": message}]}, 422)
        if repository in self.git_roots and self.head_of(repository, base) is None:
            errors = [{"resource": "PullRequest", "field": "base", "code": "invalid"}]
            return JSONResponse({"message": "Validation Failed", "errors": errors}, 422)
        head_sha = self.head_of(repository, head) if repository in self.git_roots else "c" * 40
        if head_sha is None:
            errors = [{"resource": "PullRequest", "field": "head", "code": "invalid"}]
            return JSONResponse({"message": "Validation Failed", "errors": errors}, 422)
        pr = self.add_pr(
            repository,
            title=str(body.get("title") or ""),
            body=str(body.get("body") or ""),
            head=head,
            head_sha=head_sha,
            base=base,
            draft=bool(body.get("draft")),
            author=next(iter(self.tokens.values()), "octocat"),
        )
        if fault is not None and fault.status is not None:  # made, but answered with an error: as GitHub may
            return JSONResponse(fault.body or {"message": f"fault {fault.status}"}, fault.status)
        return JSONResponse(pr.json(repository, self.url), 201)

    async def _merge(self, request: Request) -> Response:
        if refused := self._refused(request):
            return refused
        repository, pr = self._pr(request)
        if pr is None:
            return JSONResponse({"message": "Not Found"}, 404)
        body = await request.json()
        self.merges.append(body)
        self.writes.append(("PUT", request.url.path, body))
        if faulted := await self._fault(request):
            return faulted
        self._follow(repository, pr)
        if pr.state != "open" or pr.mergeable is False or pr.draft:
            return JSONResponse({"message": "Pull Request is not mergeable"}, 405)
        if body.get("sha") and body["sha"] != pr.head_sha:
            return JSONResponse({"message": "Head branch was modified. Review and try the merge again."}, 409)
        if repository in self.git_roots and not self._merge_in_git(repository, pr):
            return JSONResponse({"message": "Merge conflict"}, 405)
        self.merge_pr(repository, pr.number)
        return JSONResponse({"sha": pr.head_sha, "merged": True, "message": "Pull Request successfully merged"})

    def _merge_in_git(self, repository: str, pr: FakePullRequest) -> bool:
        """The base branch moved to the head (fast-forward) or to a merge commit of the two; False on a conflict."""
        bare = self.git_roots[repository]
        base = self.head_of(repository, pr.base)
        if base is None:
            return False

        def run(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(["git", *args], cwd=bare, capture_output=True, text=True, check=False)

        if run("merge-base", "--is-ancestor", base, pr.head_sha).returncode == 0:
            new = pr.head_sha
        else:
            tree = run("merge-tree", "--write-tree", base, pr.head_sha)
            if tree.returncode != 0:
                return False
            env_id = ["-c", "user.name=GitHub", "-c", "user.email=noreply@github.example"]
            made = run(
                *env_id,
                "commit-tree",
                "-p",
                base,
                "-p",
                pr.head_sha,
                "-m",
                f"Merge #{pr.number}",
                tree.stdout.split()[0],
            )
            new = made.stdout.strip()
        return run("update-ref", f"refs/heads/{pr.base}", new, base).returncode == 0

    async def _comments(self, request: Request) -> JSONResponse:
        if refused := self._refused(request):
            return refused
        repository, pr = self._pr(request)
        if pr is None:
            return JSONResponse({"message": "Not Found"}, 404)
        items = [
            {
                "id": c["id"],
                "user": {"login": c.get("user", "hubot")},
                "body": c["body"],
                "path": c.get("path"),
                "line": c.get("line"),
                "side": c.get("side", "RIGHT"),
                "html_url": f"{self.url}/{repository}/pull/{pr.number}#discussion_r{c['id']}",
                "created_at": c.get("created_at", _now()),
            }
            for c in pr.comments
        ]
        return self._page(request, items)

    async def _branch(self, request: Request) -> JSONResponse:
        if refused := self._refused(request):
            return refused
        repository = f"{request.path_params['owner']}/{request.path_params['name']}"
        branch = request.path_params["branch"]
        if repository in self.git_roots and self.head_of(repository, branch) is None:
            return JSONResponse({"message": "Branch not found"}, 404)
        return JSONResponse({"name": branch, "protected": branch in self.protected.get(repository, set())})

    async def _job_log(self, request: Request) -> Response:
        if refused := self._refused(request):
            return refused
        job = request.path_params["job"]
        if job not in self.job_logs:
            return JSONResponse({"message": "Not Found"}, 404)
        return RedirectResponse(f"{self.url}/_storage/logs/{job}", 302)

    async def _log_blob(self, request: Request) -> Response:
        self.log_downloads.append("authorization" in request.headers)
        if self.logs_gate is not None:
            await self.logs_gate.wait()
        return PlainTextResponse(self.job_logs.get(request.path_params["job"], ""))

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

    async def _check_runs(self, request: Request) -> Response:
        if refused := self._refused(request):
            return refused
        if faulted := await self._fault(request):
            return faulted
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
