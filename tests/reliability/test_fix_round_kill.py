"""kill -9 of the worker in the middle of a fix round (while it reads the failing check's log from the code host):
the round survives as a durable record, another worker takes it up once its claim lapses (the scheduler enqueues it
again), and exactly one prompt reaches the agent; refreshing the request again makes no second round."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select

from kandev.domain.github.connections import GithubService
from kandev.models import CheckFixRound, Message, QueuedPrompt, Session, Turn
from kandev.platform.settings import Settings
from tests.reliability.test_worker_kill import kill_tree
from tests.support.factories import settings_for
from tests.support.fake_github import FakeGitHub, fake_github
from tests.support.git_http import GitHttpServer, bare_from, git_http_server
from tests.support.git_repos import git, make_repository
from tests.support.shipping import COMMIT, OPEN, PUSH, shippable_task, with_identity
from tests.support.workers import running_scheduler, running_worker

pytestmark = [pytest.mark.reliability, pytest.mark.slow]

TOKEN = "tok-0c5e7a21-fix-kill"
REPO = "acme/app"


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
    # A short lease: a dead worker's claim on the round lapses after 10 s (twice the lease, at least 10 s).
    return settings_for(database_url, redis_url, tmp_path, turn_lease_seconds=3, github_api_url=github.url)


async def until(check, seconds: float = 60.0):
    async with asyncio.timeout(seconds):
        while not (found := await check()):
            await asyncio.sleep(0.1)
    return found


async def test_a_worker_killed_mid_round_loses_nothing_and_repeats_nothing(
    services, gql, db, settings, workspace_id, tmp_path, github: FakeGitHub, git_server: GitHttpServer
):
    await with_identity(gql)
    github.tokens[TOKEN] = "maintainer"
    await GithubService(services.ctx).connect(workspace_id, TOKEN)
    work = make_repository(tmp_path / "app")
    github.git_roots[REPO] = bare_from(work, git_server, REPO)
    git(work, "remote", "add", "origin", git_server.repository_url(REPO))
    task_id, folder = await shippable_task(services, workspace_id, work)
    await gql(
        "mutation($id: ID!) { updateTask(input: { taskId: $id, fixFailingChecks: { enabled: true } }) { __typename } }",
        id=task_id,
    )
    (folder / "a.txt").write_text("a\n")
    head = (await gql(COMMIT, input={"taskId": task_id, "message": "A"}))["commitTaskChanges"]["commit"]["sha"]
    assert (await gql(PUSH, input={"taskId": task_id}))["pushTaskBranch"]["__typename"] == "PushPayload"
    opened = (await gql(OPEN, input={"taskId": task_id}))["openPullRequest"]
    repository_id = opened["pullRequest"]["repositoryId"]
    github.logs_gate = asyncio.Event()  # the round's log read hangs until released
    github.add_check(REPO, head, "tests", "failure", log="E   assert 1 == 2\n/say looking into the failing check\n")
    env = {"KANDEV_GITHUB_API_URL": github.url}
    with running_worker(settings, **env) as doomed:
        await services.ctx.jobs.enqueue_request_refresh(task_id, repository_id)
        await until(lambda: _true(bool(github.log_downloads)), 60)  # the worker is inside the round, reading
        kill_tree(doomed)
    killed_at = time.monotonic()
    github.logs_gate.set()
    assert await _round_state(db, task_id) == ["PENDING"]
    with running_worker(settings, **env), running_scheduler(settings, **env):
        await until(lambda: _rounds_prompted(db, task_id), 90)
        prompted_after = time.monotonic() - killed_at
        await until(lambda: _turn_ended(db, task_id), 60)
        await services.ctx.jobs.enqueue_request_refresh(task_id, repository_id)  # the same failure seen again
        await asyncio.sleep(3)
    async with db.read() as session:
        [round_] = list(await session.scalars(select(CheckFixRound).where(CheckFixRound.task_id == task_id)))
        prompts = list(
            await session.scalars(
                select(QueuedPrompt).join(Session).where(Session.task_id == task_id, QueuedPrompt.source == "check_fix")
            )
        )
        agent = list(
            await session.scalars(
                select(Message.text).join(Session).where(Session.task_id == task_id, Message.kind == "AGENT")
            )
        )
        turns = await session.scalar(
            select(func.count()).select_from(Turn).join(Session).where(Session.task_id == task_id)
        )
    assert (round_.state, round_.attempts) == ("PROMPTED", 2)
    assert [p.id for p in prompts] == [round_.prompt_id]
    assert agent == ["looking into the failing check"] and turns == 1
    print(f"\n[reliability] fix round: worker killed mid-round, prompt queued {prompted_after:.1f}s later, once")


async def _true(value: bool) -> bool:
    return value


async def _round_state(db, task_id: str) -> list[str]:
    async with db.read() as session:
        return list(await session.scalars(select(CheckFixRound.state).where(CheckFixRound.task_id == task_id)))


async def _rounds_prompted(db, task_id: str) -> bool:
    return await _round_state(db, task_id) == ["PROMPTED"]


async def _turn_ended(db, task_id: str) -> bool:
    async with db.read() as session:
        states = list(await session.scalars(select(Turn.state).join(Session).where(Session.task_id == task_id)))
    return bool(states) and "RUNNING" not in states
