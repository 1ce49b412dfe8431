"""The automation cleanup jobs on a real worker: settled runs beyond the ten newest lose their worktrees, and
deleting the automation stops, deletes and reclaims every hidden run task, with the scripted agent."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from kandev.domain.automations.firing import fire
from kandev.domain.automations.retention import KEPT_WORKTREES
from kandev.domain.workspace.repositories import RepositoryChoice
from kandev.models import AutomationRun, Session, Task, TaskCleanup
from kandev.platform.settings import Settings
from tests.integration.domain.automations.conftest import new_automation
from tests.support.factories import settings_for
from tests.support.git_repos import git, make_repository
from tests.support.waiting import wait_until
from tests.support.workers import running_worker

pytestmark = pytest.mark.slow

RUNS = KEPT_WORKTREES + 2


@pytest.fixture
def settings(database_url: str, redis_url: str, tmp_path: Path) -> Settings:
    return settings_for(database_url, redis_url, tmp_path, turn_lease_seconds=5)


async def settled_runs(db) -> list[AutomationRun]:
    async with db.read() as session:
        rows = await session.scalars(
            select(AutomationRun).where(AutomationRun.finished_at.is_not(None)).order_by(AutomationRun.created_at)
        )
        return list(rows)


async def test_a_worker_reclaims_older_run_worktrees_and_cleans_up_a_deleted_automations_tasks(
    services, db, settings, workspace_id, tmp_path
):
    repo = make_repository(tmp_path / "repo")
    repository = await services.repositories.create(workspace_id, "app", str(repo))
    automation_id = await new_automation(
        services,
        workspace_id,
        prompt="/end",
        max_concurrent_runs=RUNS,
        repositories=[RepositoryChoice(repository.id)],
    )
    with running_worker(settings):
        for _ in range(RUNS):
            await fire(services.ctx, automation_id, trigger_id=None, trigger_type="manual")

        async def all_settled() -> bool:
            return len(await settled_runs(db)) == RUNS

        await wait_until(all_settled, timeout=90, interval=0.2)
        runs = await settled_runs(db)
        assert {run.status for run in runs} == {"succeeded"}

        async def oldest_reclaimed() -> bool:
            async with db.read() as session:
                marks = await session.scalars(
                    select(Task.worktree_reclaimed_at).where(Task.id.in_([r.task_id for r in runs[:2]]))
                )
                return all(mark is not None for mark in marks)

        await wait_until(oldest_reclaimed, timeout=30, interval=0.2)
        assert len(git(repo, "worktree", "list").splitlines()) == 1 + KEPT_WORKTREES

        await services.automations.delete(automation_id)

        async def cleaned() -> bool:
            async with db.read() as session:
                done = await session.scalars(select(TaskCleanup.done_at))
                return [d is not None for d in done] == [True] * RUNS

        await wait_until(cleaned, timeout=60, interval=0.2)

    async with db.read() as session:
        deleted = list(await session.scalars(select(Task.deleted_at).where(Task.origin == "automation_run")))
        states = set(await session.scalars(select(Session.state)))
    assert len(deleted) == RUNS and all(at is not None for at in deleted)
    assert states == {"CANCELLED"}
    assert git(repo, "worktree", "list").splitlines()[0].startswith(str(repo))
    assert len(git(repo, "worktree", "list").splitlines()) == 1
    assert not any((settings.work_path / "worktrees").iterdir())
