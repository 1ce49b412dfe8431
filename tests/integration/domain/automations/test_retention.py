"""Worktree retention: the ten newest finished run tasks keep their checkouts, older ones lose only the
directory (never an active run's, never the task a continue-session automation continues), a settled run
asks for it, and a reply to a reclaimed run checks the task's branch out again with its earlier commits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kandev.domain.automations.retention import KEPT_WORKTREES, retain_worktrees
from kandev.domain.workspace.repositories import RepositoryChoice
from kandev.models import Task
from kandev.models.enums import AutomationContext
from tests.integration.domain.automations.conftest import launched_run, new_automation, start_turn, take_turn
from tests.support.git_repos import git, make_repository


async def automation_on_repository(services: Any, workspace_id: str, folder: Path, **fields: Any) -> tuple[str, Path]:
    repo = make_repository(folder)
    repository = await services.repositories.create(workspace_id, "app", str(repo))
    fields.setdefault("max_concurrent_runs", 20)
    automation_id = await new_automation(
        services, workspace_id, repositories=[RepositoryChoice(repository.id)], **fields
    )
    return automation_id, repo


async def reclaimed_at(db: Any, task_id: str) -> Any:
    async with db.read() as session:
        task = await session.get(Task, task_id)
        assert task is not None and task.deleted_at is None
        return task.worktree_reclaimed_at


async def test_retention_keeps_the_ten_newest_finished_run_worktrees_and_reclaims_the_rest_but_no_active_ones(
    services, db, workspace_id, tmp_path, enqueued
):
    automation_id, repo = await automation_on_repository(services, workspace_id, tmp_path / "repo")
    active = await launched_run(services, automation_id)  # the oldest, its turn still running
    _, active_dir = await start_turn(services, active.session_id)
    finished = []
    for _ in range(KEPT_WORKTREES + 3):
        run = await launched_run(services, automation_id)
        finished.append((run, await take_turn(services, run.session_id)))

    reclaimed = await retain_worktrees(services.ctx, automation_id)
    again = await retain_worktrees(services.ctx, automation_id)

    oldest, newest = finished[:3], finished[3:]
    assert sorted(reclaimed) == sorted(run.task_id for run, _ in oldest) and again == []
    assert not any(workdir.exists() for _, workdir in oldest)
    assert all(workdir.exists() for _, workdir in newest) and active_dir.exists()
    assert all([await reclaimed_at(db, run.task_id) is not None for run, _ in oldest])
    assert not any([await reclaimed_at(db, run.task_id) for run, _ in newest])
    assert len(git(repo, "worktree", "list").splitlines()) == 1 + KEPT_WORKTREES + 1
    shown = await services.automation_runs.get(oldest[0][0].id)  # the run and its task stay readable
    assert shown.status == "succeeded" and shown.task_id == oldest[0][0].task_id
    assert enqueued["retention"] == [automation_id] * len(finished)  # each settled run asked for it


async def test_a_reply_to_a_reclaimed_run_checks_its_branch_out_again_with_the_earlier_commits(
    services, db, workspace_id, tmp_path, enqueued
):
    from kandev.domain.sessions.turns import finish_turn

    automation_id, repo = await automation_on_repository(services, workspace_id, tmp_path / "repo")
    old = await launched_run(services, automation_id)
    workdir = await take_turn(services, old.session_id)
    (workdir / "result.txt").write_text("from the run\n")
    git(workdir, "add", "result.txt")
    git(workdir, "-c", "user.email=a@example.com", "-c", "user.name=A", "commit", "-q", "-m", "run output")
    branch = git(workdir, "branch", "--show-current")
    await take_turn(services, (await launched_run(services, automation_id)).session_id)  # a newer run

    assert await retain_worktrees(services.ctx, automation_id, kept=0) == [old.task_id]
    assert not workdir.exists()
    await services.sessions.send_message(old.task_id, "/say and now?")
    turn_id, again = await start_turn(services, old.session_id)
    await finish_turn(services.ctx, turn_id, stop_reason="end_turn")

    assert again == workdir and (again / "result.txt").read_text() == "from the run\n"
    assert git(again, "branch", "--show-current") == branch
    assert "run output" in git(again, "log", "--format=%s")
    assert await reclaimed_at(db, old.task_id) is None  # it has a checkout again
    assert await retain_worktrees(services.ctx, automation_id, kept=0) == [old.task_id]  # and may lose it again


async def test_retention_never_reclaims_the_task_a_continue_session_automation_continues(
    services, db, workspace_id, tmp_path, enqueued
):
    automation_id, _ = await automation_on_repository(
        services, workspace_id, tmp_path / "repo", context=AutomationContext.CONTINUE_SESSION, max_concurrent_runs=1
    )
    first = await launched_run(services, automation_id)
    workdir = await take_turn(services, first.session_id)
    second = await launched_run(services, automation_id)
    await take_turn(services, second.session_id)

    assert second.task_id == first.task_id
    assert await retain_worktrees(services.ctx, automation_id, kept=0) == []
    assert workdir.exists()
