"""From a task in Review to a merged pull request without a terminal, on a real worker with the scripted agent,
the fake GitHub and a TLS git server: the person commits (the agent suggests the message) and pushes, opens the
pull request; a check fails (a signed webhook delivery); one fix round prompts the agent with the redacted tail of
the check's log; the agent commits and pushes over MCP; the checks pass; the person merges, and the task moves to
Done with its worktree removed. The connection's token never reaches a transcript, the agent, a file or argv."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from kandev.adapters.github.deliveries import signature_of
from kandev.domain.github.connections import GithubService
from kandev.domain.tasks.service import CreateTask
from kandev.domain.workspace.repositories import RepositoryChoice
from kandev.models import CheckFixRound, Message, QueuedPrompt, Session, Task, TaskShipRequest, Turn
from kandev.models.base import new_id
from kandev.platform.settings import Settings
from tests.integration.e2e.conftest import LiveSystem
from tests.support.factories import settings_for
from tests.support.fake_github import FakeGitHub, fake_github
from tests.support.git_http import GitHttpServer, bare_from, git_http_server
from tests.support.git_repos import git, make_repository
from tests.support.server import running_server
from tests.support.shipping import COMMIT, MERGE, OPEN, PULL_REQUESTS, PUSH, ref, with_identity
from tests.support.workers import running_worker

pytestmark = pytest.mark.slow

TOKEN = "tok-6ac3f19e-ship-e2e"
REPO = "acme/app"
APP_SECRET = "ship-loop-webhook-secret"
INSTALLATION = 5151
LEAKY = "ghp_" + "Q" * 36  # a token-shaped line in the CI log


def ci_log(fix: str) -> str:
    """A failing test run's log whose tail holds the scripted agent's fix (and a leaked token and the connection's)."""
    noise = "".join(f"collected item {n}\n" for n in range(200))
    return (
        f"{noise}export GITHUB_TOKEN={LEAKY}\ncurl -u x:{TOKEN} https://example.invalid\n"
        "FAILED tests/test_app.py::test_greeting - AssertionError\n"
        f"/write fix.txt\n{fix}\n/end-write\n"
        '/tool commit_changes_kandev {"message": "Fix the greeting test"}\n'
        "/tool push_branch_kandev {}\n"
        "/say fixed the failing check\n"
    )


@pytest.fixture
async def github() -> AsyncIterator[FakeGitHub]:
    async with fake_github() as fake:
        yield fake


@pytest.fixture
def git_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[GitHttpServer]:
    with git_http_server(tmp_path / "git-http", read_tokens=set(), push_tokens={TOKEN}) as server:
        monkeypatch.setenv("GIT_SSL_CAINFO", server.ca_file)
        yield server


@pytest.fixture
def settings(database_url: str, redis_url: str, tmp_path: Path, github: FakeGitHub) -> Settings:
    return settings_for(database_url, redis_url, tmp_path, turn_lease_seconds=5, github_api_url=github.url)


@pytest.fixture
async def live(settings: Settings, git_server: GitHttpServer, github: FakeGitHub) -> AsyncIterator[LiveSystem]:
    async with running_server(settings) as address:
        wired = settings.model_copy(update={"public_url": f"http://{address}"})
        with running_worker(wired, KANDEV_GITHUB_API_URL=github.url):
            yield LiveSystem(wired, address)


async def deliver_check(live: LiveSystem, sha: str, conclusion: str, run_id: int) -> None:
    body = json.dumps(
        {
            "action": "completed",
            "check_run": {"id": run_id, "name": "tests", "conclusion": conclusion, "head_sha": sha},
            "repository": {"full_name": REPO},
            "installation": {"id": INSTALLATION},
        }
    ).encode()
    headers = {
        "X-GitHub-Event": "check_run",
        "X-GitHub-Delivery": new_id(),
        "X-Hub-Signature-256": signature_of(APP_SECRET, body),
        "Content-Type": "application/json",
    }
    async with httpx.AsyncClient() as client:
        answer = await client.post(f"http://{live.address}/api/v1/github/webhook", content=body, headers=headers)
    assert answer.status_code == 202, answer.text


async def until(check: Any, seconds: float = 60.0) -> Any:
    async with asyncio.timeout(seconds):
        while not (found := await check()):
            await asyncio.sleep(0.1)
    return found


async def turns_done(db: Any, task_id: str, count: int) -> bool:
    async with db.read() as session:
        states = list(
            await session.scalars(
                select(Turn.state).join(Session, Session.id == Turn.session_id).where(Session.task_id == task_id)
            )
        )
    return len(states) >= count and "RUNNING" not in states


async def test_a_task_ships_to_a_merged_pull_request_through_a_fix_round(
    live: LiveSystem, services, gql, db, workspace_id, tmp_path, github: FakeGitHub, git_server: GitHttpServer
):
    await with_identity(gql)
    github.tokens[TOKEN] = "maintainer"
    await GithubService(services.ctx).connect(workspace_id, TOKEN)
    await services.github.set_app(
        "123", "-----BEGIN RSA PRIVATE KEY-----\nx\n-----END RSA PRIVATE KEY-----", APP_SECRET
    )
    assert await services.github.route_installation(workspace_id, INSTALLATION)
    work = make_repository(tmp_path / "app")
    bare = bare_from(work, git_server, REPO)
    github.git_roots[REPO] = bare
    git(work, "remote", "add", "origin", git_server.repository_url(REPO))
    repository = await services.repositories.create(workspace_id, "app", str(work))
    task = (
        await services.tasks.create(
            CreateTask(workspace_id=workspace_id, title="Greet people", repositories=[RepositoryChoice(repository.id)])
        )
    ).task
    settings_set = await gql(
        "mutation($id: ID!) { updateTask(input: { taskId: $id, fixFailingChecks: { enabled: true, maxRounds: 2 } }) "
        "{ __typename } }",
        id=task.id,
    )
    assert settings_set["updateTask"]["__typename"] == "TaskPayload"
    await services.sessions.start_task(
        task.id, "/write greet.py\nprint('hello')\n/end-write\n/run env\n/say done", None
    )
    await until(lambda: turns_done(db, task.id, 1))

    # The person commits with the agent's suggested message, pushes, opens the pull request.
    committed = (await gql(COMMIT, input={"taskId": task.id, "message": ""}))["commitTaskChanges"]
    assert committed["__typename"] == "CommitPayload", committed
    assert committed["commit"]["message"].startswith("Apply the task's changes\n\nAgent: Scripted")
    assert (await gql(PUSH, input={"taskId": task.id}))["pushTaskBranch"]["__typename"] == "PushPayload"
    opened = (await gql(OPEN, input={"taskId": task.id}))["openPullRequest"]
    assert opened["__typename"] == "PullRequestPayload", opened
    number, first_head = opened["pullRequest"]["number"], committed["commit"]["sha"]
    assert opened["pullRequest"]["body"] == ""  # as the card shows it; GitHub got the agent's last words
    assert github.created[0]["body"] == "done"

    # CI fails: one fix round, one prompt with the redacted tail of the log.
    run_id = github.add_check(REPO, first_head, "tests", "failure", log=ci_log("fixed"))
    await deliver_check(live, first_head, "failure", run_id)
    await deliver_check(live, first_head, "failure", run_id)  # redelivered under another id: nothing twice
    prompted = await until(lambda: _round(db, task.id, "PROMPTED"))
    async with db.read() as session:
        prompt = await session.get(QueuedPrompt, prompted.prompt_id)
    assert prompt is not None and prompt.source == "check_fix"
    assert "## tests: failure" in prompt.text and "fix round 1 of at most 2" in prompt.text
    assert LEAKY not in prompt.text and TOKEN not in prompt.text and "[REDACTED]" in prompt.text
    assert "collected item 0\n" not in prompt.text  # bounded: only the tail
    assert github.log_downloads == [False]  # the log's storage never saw the token

    # The agent fixed, committed and pushed over MCP.
    await until(lambda: turns_done(db, task.id, 2))
    branch = opened["pullRequest"]["headBranch"]
    fixed_head = ref(bare, f"refs/heads/{branch}")
    assert fixed_head and fixed_head != first_head
    assert git(bare, "log", "-1", "--format=%s%n%an", fixed_head).splitlines() == [
        "Fix the greeting test",
        "Ada Lovelace",
    ]

    # CI passes on the new head: no more rounds.
    run_id = github.add_check(REPO, fixed_head, "tests", "success")
    await deliver_check(live, fixed_head, "success", run_id)

    async def green() -> bool:
        found = (await gql(PULL_REQUESTS, id=task.id))["task"]["pullRequests"]
        checks = found[0]["checks"] if found else []
        return bool(found) and found[0]["headSha"] == fixed_head and [c["conclusion"] for c in checks] == ["success"]

    await until(green)
    async with db.read() as session:
        rounds = list(await session.scalars(select(CheckFixRound).where(CheckFixRound.task_id == task.id)))
    assert [r.round for r in rounds] == [1]

    merged = (await gql(MERGE, input={"taskId": task.id, "method": "MERGE"}))["mergePullRequest"]
    assert merged["__typename"] == "PullRequestPayload", merged
    shown = (await gql(PULL_REQUESTS, id=task.id))["task"]
    assert (shown["state"], shown["workflowStep"]["name"], shown["pullRequests"][0]["state"]) == (
        "COMPLETED",
        "Done",
        "merged",
    )
    assert ref(bare, "refs/heads/main") == fixed_head
    worktrees = live.settings.work_path / "worktrees" / task.id
    await until(lambda: _gone(worktrees), 15)
    assert shown["checkFixRounds"][0]["checkName"] == "tests"
    async with db.read() as session:
        texts = [
            m.text + json.dumps(m.data)
            for m in await session.scalars(select(Message).join(Session).where(Session.task_id == task.id))
        ]
        request = await session.get(TaskShipRequest, (task.id, repository.id))
    assert request is not None and request.number == number
    # The transcript, and in it the agent's own environment (/run env), hold no token.
    assert any("PATH=" in text for text in texts)
    assert all(TOKEN not in text and "KANDEV_GIT_TOKEN" not in text for text in texts)


async def _round(db: Any, task_id: str, state: str) -> CheckFixRound | None:
    async with db.read() as session:
        found: CheckFixRound | None = await session.scalar(
            select(CheckFixRound).where(CheckFixRound.task_id == task_id, CheckFixRound.state == state)
        )
    return found


async def _gone(path: Path) -> bool:
    return not path.exists()


async def _task(db: Any, task_id: str) -> Task | None:
    async with db.read() as session:
        return await session.get(Task, task_id)
