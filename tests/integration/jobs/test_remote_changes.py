"""A replica that can't reach a task's worktree reads its changes through the worker holding it, as a job on
that worker's reads queue answered even while the worker runs a turn; a worker that does not answer within
5 s makes it a typed UNAVAILABLE error naming the worker."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from sqlalchemy import func, select

from kandev.domain.tasks.service import CreateTask
from kandev.domain.workspace.repositories import RepositoryChoice
from kandev.models import Turn
from kandev.platform.settings import Settings
from tests.conftest import GraphQLCaller
from tests.support.factories import settings_for
from tests.support.git_repos import make_repository
from tests.support.watch import watching
from tests.support.workers import running_worker, stop_gracefully

pytestmark = pytest.mark.slow

WORKER = "reads-w1"
CHANGES = """query($id: ID!) { task(id: $id) { changes { repositories { note stats { files additions }
  files { nodes { path status hunks { lines { kind text } } } } } } } }"""


@pytest.fixture
def settings(database_url: str, redis_url: str, tmp_path: Path) -> Settings:
    # This process plays a replica whose machine does not have the workers' working trees.
    return settings_for(database_url, redis_url, tmp_path, work_dir=tmp_path / "replica-work", turn_lease_seconds=5)


async def test_a_replica_without_the_worktree_reads_changes_through_the_worker_holding_it(
    services, gql: GraphQLCaller, settings, bus, db, workspace_id, tmp_path
):
    worker_work = tmp_path / "worker-work"
    repository = await services.repositories.create(workspace_id, "repo", str(make_repository(tmp_path / "repo")))
    task = (
        await services.tasks.create(
            CreateTask(workspace_id=workspace_id, title="Remote", repositories=[RepositoryChoice(repository.id)])
        )
    ).task
    with running_worker(settings, KANDEV_WORK_DIR=str(worker_work), KANDEV_WORKER_NAME=WORKER) as worker:
        started = await services.sessions.start_task(
            task.id, "/write hello.txt\nhello\nworld\n/end-write\n/sleep 30", None
        )
        async with watching(bus, db, started.session.id) as watch:
            await watch.until(lambda: _exists(worker_work / "worktrees" / task.id / "repo" / "hello.txt"), 60)
            # The worker is inside a turn (the agent sleeps): the read is answered all the same.
            assert await _running_turns(db, started.session.id) == 1
            began = time.monotonic()
            [repo] = (await gql(CHANGES, id=task.id))["task"]["changes"]["repositories"]
            assert time.monotonic() - began < 5
            assert repo["note"] is None and repo["stats"] == {"files": 1, "additions": 2}
            [file] = repo["files"]["nodes"]
            assert file["path"] == "hello.txt" and file["status"] == "ADDED"
            assert [(x["kind"], x["text"]) for x in file["hunks"][0]["lines"]] == [("ADD", "hello"), ("ADD", "world")]
            await services.sessions.stop_task(task.id)
            await watch.turns_ended(1, timeout=30)
        stop_gracefully(worker)

        began = time.monotonic()
        result = await gql.raw(CHANGES, id=task.id)
        waited = time.monotonic() - began
    assert result.errors, result
    [error] = result.errors
    assert error.extensions["code"] == "UNAVAILABLE" and error.extensions["fields"] == {"worker": WORKER}
    assert WORKER in error.message
    assert 4 <= waited < 8


async def _running_turns(db, session_id: str) -> int:
    async with db.read() as s:
        found = await s.scalar(
            select(func.count()).select_from(Turn).where(Turn.session_id == session_id, Turn.state == "RUNNING")
        )
    return found or 0


async def _exists(path: Path) -> bool:
    return path.exists()
