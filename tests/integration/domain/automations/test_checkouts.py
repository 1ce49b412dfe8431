"""Provider events choose the checkout of the run they fire (the spec: "a GitHub pull-request run with
configured repository access checks out that PR's head branch and uses its base branch"): a GITHUB_PR run works
in the PR's repository, registered for the workspace on first use, on the PR's head with its base as the diff
base; a GITHUB_PUSH run on the pushed branch at the pushed commit; a GITHUB_CI run on the check's head branch.
The run's task shows which (Task.repositories), and its pushes go to that branch.

Against the fake GitHub and a local TLS git server that needs the connection's token (as the PR-URL tasks'
tests), with a real worker running the scripted agent in the checked-out worktree."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from kandev.adapters.github.deliveries import GitHubDeliveries
from kandev.domain.automations.launch import event_checkout, launch_run
from kandev.domain.automations.records import AutomationFields, TriggerFields
from kandev.domain.github.pull_requests import poll_github_now
from kandev.domain.github.webhooks import handle_delivery
from kandev.models import AutomationRun, Repository, TaskPullRequest
from kandev.models.base import new_id
from kandev.models.enums import AgentKind, TriggerType
from kandev.platform.settings import Settings
from tests.support.factories import settings_for
from tests.support.fake_github import FakeGitHub, fake_github
from tests.support.git_http import GitHttpServer, bare_from, git_http_server
from tests.support.git_repos import git, with_branch_ahead
from tests.support.watch import watching
from tests.support.workers import running_worker

pytestmark = pytest.mark.slow

TOKEN = "tok-5b8e2d1a-event-checkout"
INSTALLATION = 8181
KEY = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAsecretkeymaterial\n-----END RSA PRIVATE KEY-----"
CHECKOUTS = """query($id: ID!) { task(id: $id) { repositories {
  name baseBranch branch sourceBranch pullRequest url } } }"""


@pytest.fixture
async def github() -> AsyncIterator[FakeGitHub]:
    async with fake_github() as fake:
        yield fake


@pytest.fixture
def settings(database_url: str, redis_url: str, tmp_path: Path, github: FakeGitHub) -> Settings:
    return settings_for(database_url, redis_url, tmp_path, github_api_url=github.url, turn_lease_seconds=5)


@pytest.fixture
def git_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[GitHttpServer]:
    with git_http_server(tmp_path / "git-http", read_tokens=set(), push_tokens={TOKEN}) as server:
        monkeypatch.setenv("GIT_SSL_CAINFO", server.ca_file)
        yield server


@pytest.fixture
def app_repo(tmp_path: Path, git_server: GitHttpServer) -> dict[str, Any]:
    """acme/app on the git server: main, and `feature` one commit ahead (its head is what events name)."""
    work, head, main = with_branch_ahead(tmp_path / "app")
    return {"head": head, "main": main, "bare": bare_from(work, git_server, "acme/app")}


async def scripted(services: Any, workspace_id: str) -> str:
    return next(p.id for p in await services.agent_profiles.list(workspace_id) if p.kind == AgentKind.SCRIPTED)


async def automation(services: Any, workspace_id: str, kind: TriggerType, **config: Any) -> str:
    saved = await services.automations.create(
        workspace_id,
        AutomationFields(
            name=f"{kind} {new_id()[:6]}",
            prompt="/say on it",
            agent_profile_id=await scripted(services, workspace_id),
            triggers=[TriggerFields(type=kind, config={"repositories": ["acme/app"], **config})],
        ),
    )
    return str(saved.automation.id)


async def only_run(db: Any, automation_id: str) -> AutomationRun:
    async with db.read() as s:
        [run] = list(await s.scalars(select(AutomationRun).where(AutomationRun.automation_id == automation_id)))
        return run


async def run_in_worktree(services: Any, bus: Any, db: Any, settings: Settings, run_id: str) -> Path:
    """Launch the run here, let a real worker run its turn; the session's working directory."""
    assert await launch_run(services.ctx, run_id) == "launched"
    run = await services.automation_runs.get(run_id)
    assert run.session_id is not None
    with running_worker(settings):
        async with watching(bus, db, run.session_id) as watch:
            [turn] = await watch.turns_ended(1, timeout=60)
    assert turn.state == "COMPLETED", turn.error
    return Path((await services.sessions.get(run.session_id)).working_dir)


async def test_a_pull_request_run_works_on_the_prs_head_with_its_base_as_the_diff_base_in_its_repository(
    services, bus, db, settings, workspace_id, github, git_server, app_repo, gql
):
    github.tokens[TOKEN] = "maintainer"
    await services.github.connect(workspace_id, TOKEN)
    github.add_pr(
        "acme/app",
        7,
        head="feature",
        head_sha=app_repo["head"],
        head_clone_url=git_server.repository_url("acme/app"),
        base_clone_url=git_server.repository_url("acme/app"),
    )
    automation_id = await automation(services, workspace_id, TriggerType.GITHUB_PR)
    [fired] = await poll_github_now(services.ctx, workspace_id)
    assert fired.fired and fired.run_id
    async with db.read() as s:
        assert list(await s.scalars(select(Repository))) == []  # not registered before the run

    workdir = await run_in_worktree(services, bus, db, settings, fired.run_id)

    run = await only_run(db, automation_id)
    [checkout] = (await gql(CHECKOUTS, id=run.task_id))["task"]["repositories"]
    assert (checkout["name"], checkout["sourceBranch"], checkout["pullRequest"]) == ("app", "feature", 7)
    assert checkout["baseBranch"] == "main" and checkout["branch"] == f"pr-7-{run.task_id[:8]}"
    assert checkout["url"] == "https://127.0.0.1/acme/app/pull/7"
    assert git(workdir, "rev-parse", "HEAD") == app_repo["head"]
    assert git(workdir, "branch", "--show-current") == checkout["branch"]
    assert git(workdir, "merge-base", "HEAD", "main") == app_repo["main"]  # the PR's base is the diff base
    async with db.read() as s:
        [repository] = list(await s.scalars(select(Repository)))  # registered for the workspace on first use
        [link] = list(await s.scalars(select(TaskPullRequest).where(TaskPullRequest.task_id == run.task_id)))
    assert repository.workspace_id == workspace_id and repository.remote_url == git_server.repository_url("acme/app")
    assert (link.repository, link.number) == ("acme/app", 7)  # ship acts on the PR, never opens another


@pytest.mark.parametrize("kind", [TriggerType.GITHUB_PUSH, TriggerType.GITHUB_CI])
async def test_a_push_or_ci_run_works_on_the_events_branch_at_its_commit_and_pushes_back_to_it(
    services, bus, db, settings, workspace_id, github, git_server, app_repo, gql, kind
):
    github.tokens[TOKEN] = "maintainer"
    github.clone_urls["acme/app"] = git_server.repository_url("acme/app")
    await services.github.connect(workspace_id, TOKEN)
    await services.github.set_app("123", KEY, "app-webhook-secret")
    assert await services.github.route_installation(workspace_id, INSTALLATION)
    automation_id = await automation(services, workspace_id, kind)
    common = {"repository": {"full_name": "acme/app"}, "installation": {"id": INSTALLATION}}
    if kind == TriggerType.GITHUB_PUSH:
        event, payload = "push", {"ref": "refs/heads/feature", "after": app_repo["head"], "before": "1" * 40}
    else:
        check = {"id": 31, "name": "tests", "conclusion": "failure", "head_sha": app_repo["head"]}
        event, payload = (
            "check_run",
            {"action": "completed", "check_run": {**check, "check_suite": {"head_branch": "feature"}}},
        )
    body = {**payload, **common}
    digest = hashlib.sha256(json.dumps(body).encode()).hexdigest()
    delivered = await handle_delivery(services.ctx, GitHubDeliveries().read(event, body), event, new_id(), digest)
    [fired] = delivered.fired
    assert fired.fired and fired.run_id

    workdir = await run_in_worktree(services, bus, db, settings, fired.run_id)

    run = await only_run(db, automation_id)
    [checkout] = (await gql(CHECKOUTS, id=run.task_id))["task"]["repositories"]
    assert (checkout["sourceBranch"], checkout["pullRequest"], checkout["baseBranch"]) == ("feature", None, "main")
    assert checkout["branch"] == f"feature-{run.task_id[:8]}"
    assert git(workdir, "rev-parse", "HEAD") == app_repo["head"]
    # Its pushes go to the event's branch (a plain `git push`, the token in the agent's env only).
    (workdir / "fix.txt").write_text("fixed\n")
    git(workdir, "add", ".")
    git(workdir, "-c", "user.email=a@example.com", "-c", "user.name=A", "commit", "-q", "-m", "fix")
    mine = git(workdir, "rev-parse", "HEAD")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k == "GIT_SSL_CAINFO"}
    pushed = subprocess.run(
        ["git", "push", "-q"],
        cwd=workdir,
        capture_output=True,
        text=True,
        env={**env, "GIT_TERMINAL_PROMPT": "0", "KANDEV_GIT_TOKEN_127_0_0_1": TOKEN},
    )
    assert pushed.returncode == 0, pushed.stderr
    assert git(app_repo["bare"], "rev-parse", "refs/heads/feature") == mine


async def test_without_a_github_connection_a_provider_run_works_as_its_automation_says(
    services, db, workspace_id, app_repo
):
    """No configured repository access: no checkout is made, the run still starts (repository-free here)."""
    automation_id = await automation(services, workspace_id, TriggerType.GITHUB_PUSH)
    fired = await services.automation_runs.fire(
        automation_id,
        trigger_id=None,
        trigger_type="github_push",
        data={"repository": "acme/app", "branch": "feature", "sha": app_repo["head"]},
        dedup_key="github_push:acme/app:feature:x",
    )
    assert fired.run_id and await launch_run(services.ctx, fired.run_id) == "launched"
    run = await only_run(db, automation_id)
    assert run.status == "task_created" and await services.tasks.checkouts(run.task_id) == []


def test_what_each_trigger_names_as_its_checkout():
    pr = {"pr": {"repo": "acme/app", "number": 7, "branch": "fix", "head_sha": "a" * 40}, "repository": "acme/app"}
    assert event_checkout("github_pr", pr).key == "github:acme/app#7"  # type: ignore[union-attr]
    push = {"repository": "Acme/App", "branch": "main", "sha": "b" * 40}
    assert event_checkout("github_push", push).key == "github:acme/app@main"  # type: ignore[union-attr]
    assert event_checkout("github_ci", {**push, "branch": None}) is None  # a check run without a head branch
    assert event_checkout("webhook", push) is None and event_checkout("github_pr_merged", pr) is None
    assert event_checkout("github_pr", [1, 2]) is None
