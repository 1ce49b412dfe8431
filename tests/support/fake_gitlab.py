"""A local fake of the GitLab REST API v4 (the parts Kandev's client uses), served by uvicorn on a free port.

Projects, merge requests, approvals and pipelines live in memory; tests add and change them through the object.
Every call needs one of the known tokens in PRIVATE-TOKEN (or a Bearer header), like GitLab. A project may be backed
by a real bare repository (`git_roots`): its open merge requests then follow their source branch as pushed there."""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from tests.support.server import free_port, served_in_thread, serving


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


@dataclass
class FakeMergeRequest:
    iid: int
    title: str = "A change"
    description: str = ""
    author: str = "tanuki"
    source_branch: str = "feature"
    target_branch: str = "main"
    sha: str = "b" * 40
    state: str = "opened"
    labels: list[str] = field(default_factory=list)
    reviewer_ids: list[int] = field(default_factory=list)
    source_project_id: int | None = None  # None: the target project itself
    allow_collaboration: bool = False
    pipeline_status: str | None = None
    approved_by: list[str] = field(default_factory=list)
    approvals_required: int = 0
    merged_at: str | None = None
    updated_at: str = field(default_factory=_now)
    # The head pipeline's jobs: {"id", "name", "status", "log"}; and people's comments: {"id", "author", "body",
    # "path", "line"}.
    jobs: list[dict[str, Any]] = field(default_factory=list)
    notes: list[dict[str, Any]] = field(default_factory=list)
    merge_status: str = "mergeable"


@dataclass
class FakeGitLab:
    """The fake's state; `tokens` maps each accepted token to its user's username; `users` names ids."""

    tokens: dict[str, str] = field(default_factory=lambda: {"glpat-fake-good-7c1e": "tanuki"})
    users: dict[str, int] = field(default_factory=lambda: {"tanuki": 1, "reviewer-ann": 2, "reviewer-bo": 3})
    projects: dict[str, int] = field(default_factory=dict)  # path -> id
    merge_requests: dict[str, dict[int, FakeMergeRequest]] = field(default_factory=dict)
    # path -> http_url_to_repo (default: under the fake's own URL), and the tokens' access level on it
    clone_urls: dict[str, str] = field(default_factory=dict)
    access_levels: dict[str, int] = field(default_factory=dict)  # default 40 (Maintainer)
    requests: list[str] = field(default_factory=list)
    writes: list[tuple[str, str, Any]] = field(default_factory=list)
    url: str = ""
    # project path -> branches that exist (None: any), and those GitLab protects.
    branches: dict[str, set[str]] = field(default_factory=dict)
    protected: dict[str, set[str]] = field(default_factory=dict)
    # project path -> a bare repository whose branches its merge requests follow.
    git_roots: dict[str, Path] = field(default_factory=dict)

    def add_project(self, path: str) -> int:
        return self.projects.setdefault(path, len(self.projects) + 100)

    def add_mr(self, project: str, iid: int | None = None, **fields: Any) -> FakeMergeRequest:
        self.add_project(project)
        mrs = self.merge_requests.setdefault(project, {})
        iid = iid or (max(mrs, default=0) + 1)
        mr = FakeMergeRequest(iid=iid, **fields)
        mrs[iid] = mr
        return mr

    def _path_of(self, project_id: int) -> str | None:
        return next((path for path, pid in self.projects.items() if pid == project_id), None)

    def _username(self, user_id: int) -> str:
        return next((name for name, uid in self.users.items() if uid == user_id), f"user{user_id}")

    def _follow(self, project: str, mr: FakeMergeRequest) -> None:
        """An open merge request follows its source branch as pushed to the project's bare repository."""
        bare = self.git_roots.get(project)
        if bare is None or mr.state != "opened":
            return
        done = subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", f"refs/heads/{mr.source_branch}"],
            cwd=bare,
            capture_output=True,
            text=True,
            check=False,
        )
        if (head := done.stdout.strip()) and head != mr.sha:
            mr.sha, mr.updated_at = head, _now()

    def mr_json(self, project: str, mr: FakeMergeRequest) -> dict[str, Any]:
        self._follow(project, mr)
        target = self.projects[project]
        pipeline = {"id": 1000 + mr.iid, "status": mr.pipeline_status} if mr.pipeline_status or mr.jobs else None
        return {
            "iid": mr.iid,
            "project_id": target,
            "title": mr.title,
            "description": mr.description,
            "web_url": f"{self.url}/{project}/-/merge_requests/{mr.iid}",
            "author": {"username": mr.author},
            "draft": mr.title.lower().startswith(("draft:", "[draft]", "(draft)")),
            "state": mr.state,
            "labels": list(mr.labels),
            "reviewers": [{"id": uid, "username": self._username(uid)} for uid in mr.reviewer_ids],
            "source_branch": mr.source_branch,
            "target_branch": mr.target_branch,
            "sha": mr.sha,
            "source_project_id": mr.source_project_id if mr.source_project_id is not None else target,
            "target_project_id": target,
            "allow_collaboration": mr.allow_collaboration,
            "head_pipeline": pipeline,
            "updated_at": mr.updated_at,
            "merged_at": mr.merged_at,
            "detailed_merge_status": mr.merge_status,
            "has_conflicts": mr.merge_status == "conflict",
            "user_notes_count": len(mr.notes),
        }

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/api/v4/user", self._user),
                Route("/api/v4/users", self._users),
                Route("/api/v4/projects/{project:path}/merge_requests", self._list_mrs, methods=["GET", "POST"]),
                Route("/api/v4/projects/{project:path}/merge_requests/{iid:int}", self._mr, methods=["GET", "PUT"]),
                Route("/api/v4/projects/{project:path}/merge_requests/{iid:int}/merge", self._merge, methods=["PUT"]),
                Route("/api/v4/projects/{project:path}/merge_requests/{iid:int}/discussions", self._discussions),
                Route("/api/v4/projects/{project:path}/pipelines/{pipeline:int}/jobs", self._jobs),
                Route("/api/v4/projects/{project:path}/jobs/{job:int}/trace", self._trace),
                Route("/api/v4/projects/{project:path}/protected_branches/{branch:path}", self._protected),
                Route("/api/v4/projects/{project:path}/merge_requests/{iid:int}/approvals", self._approvals),
                Route("/api/v4/projects/{project:path}/merge_requests/{iid:int}/pipelines", self._pipelines),
                Route("/api/v4/projects/{project:path}", self._project),
            ]
        )

    def _refused(self, request: Request) -> JSONResponse | None:
        self.requests.append(request.url.path)
        token = request.headers.get("private-token") or request.headers.get("authorization", "").partition(" ")[2]
        if token not in self.tokens:
            return JSONResponse({"message": "401 Unauthorized"}, 401)
        return None

    def _project_path(self, request: Request) -> str | None:
        ref = unquote(request.path_params["project"])
        if ref.isdigit():
            return self._path_of(int(ref))
        return ref if ref in self.projects else None

    def _find(self, request: Request) -> tuple[str, FakeMergeRequest] | None:
        project = self._project_path(request)
        mr = self.merge_requests.get(project or "", {}).get(request.path_params["iid"])
        return (project, mr) if project and mr else None

    async def _user(self, request: Request) -> JSONResponse:
        if refused := self._refused(request):
            return refused
        token = request.headers.get("private-token") or request.headers["authorization"].partition(" ")[2]
        name = self.tokens[token]
        return JSONResponse({"username": name, "id": self.users.get(name, 99)})

    async def _users(self, request: Request) -> JSONResponse:
        if refused := self._refused(request):
            return refused
        wanted = request.query_params.get("username", "")
        return JSONResponse([{"id": uid, "username": name} for name, uid in self.users.items() if name == wanted])

    async def _project(self, request: Request) -> JSONResponse:
        if refused := self._refused(request):
            return refused
        path = self._project_path(request)
        if path is None:
            return JSONResponse({"message": "404 Project Not Found"}, 404)
        return JSONResponse(
            {
                "id": self.projects[path],
                "path_with_namespace": path,
                "http_url_to_repo": self.clone_urls.get(path, f"{self.url}/{path}.git"),
                "permissions": {
                    "project_access": {"access_level": self.access_levels.get(path, 40)},
                    "group_access": None,
                },
            }
        )

    async def _list_mrs(self, request: Request) -> JSONResponse:
        if refused := self._refused(request):
            return refused
        project = self._project_path(request)
        if project is None:
            return JSONResponse({"message": "404 Project Not Found"}, 404)
        if request.method == "POST":
            return await self._create(request, project)
        state = request.query_params.get("state", "all")
        branch = request.query_params.get("source_branch")
        found = [
            self.mr_json(project, mr)
            for mr in sorted(self.merge_requests.get(project, {}).values(), key=lambda m: -m.iid)
            if (state == "all" or mr.state == state) and (branch is None or mr.source_branch == branch)
        ]
        return JSONResponse(found)

    async def _mr(self, request: Request) -> JSONResponse:
        if refused := self._refused(request):
            return refused
        found = self._find(request)
        if found is None:
            return JSONResponse({"message": "404 Not found"}, 404)
        project, mr = found
        if request.method == "PUT":
            body = await request.json()
            self.writes.append(("PUT", request.url.path, body))
            if "reviewer_ids" in body and any(uid not in self.users.values() for uid in body["reviewer_ids"]):
                return JSONResponse({"message": "reviewer not found"}, 400)
            if "title" in body:
                mr.title = body["title"]
            if "description" in body:
                mr.description = body["description"]
            if "labels" in body:
                mr.labels = [label for label in str(body["labels"]).split(",") if label]
            if "reviewer_ids" in body:
                mr.reviewer_ids = list(body["reviewer_ids"])
            mr.updated_at = _now()
        return JSONResponse(self.mr_json(project, mr))

    async def _create(self, request: Request, project: str) -> JSONResponse:
        body = await request.json()
        self.writes.append(("POST", request.url.path, body))
        source, target = str(body.get("source_branch") or ""), str(body.get("target_branch") or "")
        if any(
            m.source_branch == source and m.state == "opened" for m in self.merge_requests.get(project, {}).values()
        ):
            message = [f"Another open merge request already exists for this source branch: !{source}"]
            return JSONResponse({"message": message}, 409)
        known = self.branches.get(project)
        if known is not None and target not in known:
            return JSONResponse({"message": ["Target branch is invalid"]}, 422)
        mr = self.add_mr(
            project,
            title=str(body.get("title") or ""),
            description=str(body.get("description") or ""),
            source_branch=source,
            target_branch=target,
            author=next(iter(self.tokens.values()), "tanuki"),
        )
        return JSONResponse(self.mr_json(project, mr), 201)

    async def _merge(self, request: Request) -> JSONResponse:
        if refused := self._refused(request):
            return refused
        found = self._find(request)
        if found is None:
            return JSONResponse({"message": "404 Not found"}, 404)
        project, mr = found
        body = await request.json()
        self.writes.append(("PUT", request.url.path, body))
        self._follow(project, mr)
        if mr.state != "opened" or mr.merge_status not in ("mergeable", "can_be_merged"):
            return JSONResponse({"message": "405 Method Not Allowed"}, 405)
        if body.get("sha") and body["sha"] != mr.sha:
            return JSONResponse({"message": "SHA does not match HEAD of source branch"}, 409)
        mr.state, mr.merged_at, mr.updated_at = "merged", _now(), _now()
        return JSONResponse(self.mr_json(project, mr))

    async def _discussions(self, request: Request) -> JSONResponse:
        if refused := self._refused(request):
            return refused
        found = self._find(request)
        if found is None:
            return JSONResponse({"message": "404 Not found"}, 404)
        _, mr = found
        discussions = []
        for note in mr.notes:
            position = {"new_path": note["path"], "new_line": note.get("line")} if note.get("path") else None
            item = {
                "id": note["id"],
                "body": note["body"],
                "author": {"username": note.get("author", "reviewer-ann")},
                "system": False,
                "position": position,
                "created_at": _now(),
            }
            discussions.append({"id": f"d{note['id']}", "notes": [item]})
        return JSONResponse(discussions)

    def _jobs_of(self, request: Request) -> list[dict[str, Any]]:
        project = self._project_path(request) or ""
        return [job for mr in self.merge_requests.get(project, {}).values() for job in mr.jobs]

    async def _jobs(self, request: Request) -> JSONResponse:
        if refused := self._refused(request):
            return refused
        project = self._project_path(request) or ""
        pipeline = request.path_params["pipeline"]
        mrs = [mr for mr in self.merge_requests.get(project, {}).values() if 1000 + mr.iid == pipeline]
        if not mrs:
            return JSONResponse({"message": "404 Not found"}, 404)
        jobs = [
            {
                "id": j["id"],
                "name": j["name"],
                "status": j["status"],
                "web_url": f"{self.url}/{project}/-/jobs/{j['id']}",
            }
            for j in mrs[0].jobs
        ]
        return JSONResponse(jobs)

    async def _trace(self, request: Request) -> Response:
        if refused := self._refused(request):
            return refused
        job = next((j for j in self._jobs_of(request) if j["id"] == request.path_params["job"]), None)
        if job is None:
            return JSONResponse({"message": "404 Not found"}, 404)
        return PlainTextResponse(job.get("log", ""))

    async def _protected(self, request: Request) -> JSONResponse:
        if refused := self._refused(request):
            return refused
        project = self._project_path(request) or ""
        branch = request.path_params["branch"]
        if branch not in self.protected.get(project, set()):
            return JSONResponse({"message": "404 Not found"}, 404)
        return JSONResponse({"name": branch})

    async def _approvals(self, request: Request) -> JSONResponse:
        if refused := self._refused(request):
            return refused
        found = self._find(request)
        if found is None:
            return JSONResponse({"message": "404 Not found"}, 404)
        _, mr = found
        left = max(mr.approvals_required - len(mr.approved_by), 0)
        return JSONResponse(
            {
                "approved": left == 0 and (bool(mr.approved_by) or mr.approvals_required == 0),
                "approvals_required": mr.approvals_required,
                "approvals_left": left,
                "approved_by": [{"user": {"username": name}} for name in mr.approved_by],
            }
        )

    async def _pipelines(self, request: Request) -> JSONResponse:
        if refused := self._refused(request):
            return refused
        found = self._find(request)
        if found is None:
            return JSONResponse({"message": "404 Not found"}, 404)
        project, mr = found
        if not mr.pipeline_status:
            return JSONResponse([])
        return JSONResponse(
            [
                {
                    "id": 1,
                    "status": mr.pipeline_status,
                    "ref": mr.source_branch,
                    "sha": mr.sha,
                    "web_url": f"{self.url}/{project}/-/pipelines/1",
                }
            ]
        )


@asynccontextmanager
async def fake_gitlab(fake: FakeGitLab | None = None) -> AsyncIterator[FakeGitLab]:
    """The fake served on a free loopback port; `fake.url` is its base URL, valid inside the block."""
    fake = fake or FakeGitLab()
    port = free_port()
    fake.url = f"http://127.0.0.1:{port}"
    async with serving(fake.app(), port):
        yield fake


@contextmanager
def fake_gitlab_in_thread(fake: FakeGitLab | None = None, wait: float = 15.0) -> Iterator[FakeGitLab]:
    """The fake served from a thread of its own (for synchronous tests, e.g. the browser's)."""
    with served_in_thread(lambda: fake_gitlab(fake), "fake-gitlab", wait) as served:
        yield served
