"""Durable cleanup of hidden run tasks: deleting an automation or its runs records the cleanups in the same
transaction, and the cleanup job stops, deletes and reclaims each task once, retried with backoff, recovered
when its job is lost; board tasks survive, and an attached folder's target is never touched."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import select

from kandev.domain.automations import cleanup
from kandev.domain.automations.cleanup import due_cleanups, run_cleanup
from kandev.domain.workspace.repositories import RepositoryChoice
from kandev.jobs.recovery import recover
from kandev.models import Message, Session, Task, TaskCleanup, TaskFolder, Turn
from kandev.models.base import utcnow
from kandev.models.enums import AutomationContext, AutomationDestination
from tests.integration.domain.automations.conftest import launched_run, new_automation, start_turn, take_turn
from tests.support.git_repos import git, make_repository


async def repository(services: Any, workspace_id: str, folder: Path) -> tuple[str, Path]:
    path = make_repository(folder)
    return (await services.repositories.create(workspace_id, "app", str(path))).id, path


async def automation_on(services: Any, workspace_id: str, repository_id: str, **fields: Any) -> str:
    fields.setdefault("max_concurrent_runs", 10)
    return await new_automation(services, workspace_id, repositories=[RepositoryChoice(repository_id)], **fields)


async def cleanups(db: Any) -> dict[str, TaskCleanup]:
    async with db.read() as session:
        return {row.task_id: row for row in await session.scalars(select(TaskCleanup))}


async def task(db: Any, task_id: str) -> Task:
    async with db.read() as session:
        row = await session.get(Task, task_id)
        assert row is not None
        return row


async def deleted(db: Any, task_ids: list[str]) -> list[bool]:
    """Whether each task is deleted."""
    return [(await task(db, task_id)).deleted_at is not None for task_id in task_ids]


def worktrees(repo: Path) -> list[str]:
    listing = git(repo, "worktree", "list", "--porcelain").splitlines()
    return [line.split()[1] for line in listing if line.startswith("worktree ")]


async def test_deleting_an_automation_captures_its_hidden_tasks_and_the_job_deletes_them_and_their_worktrees(
    services, db, workspace_id, tmp_path, enqueued
):
    repository_id, repo = await repository(services, workspace_id, tmp_path / "repo")
    automation_id = await automation_on(services, workspace_id, repository_id)
    runs = [await launched_run(services, automation_id) for _ in range(2)]
    attached = tmp_path / "notes"
    attached.mkdir()
    (attached / "keep.txt").write_text("mine\n")
    async with db.transaction() as session:
        session.add(TaskFolder(task_id=runs[0].task_id, path=str(attached), name="notes"))
    workdirs = [await take_turn(services, run.session_id) for run in runs]
    branches = [git(workdir, "branch", "--show-current") for workdir in workdirs]
    assert (workdirs[0].parent / "notes").is_symlink()
    assert len(worktrees(repo)) == 3

    await services.automations.delete(automation_id)

    captured = await cleanups(db)
    assert sorted(captured) == sorted(run.task_id for run in runs)
    assert {row.reason for row in captured.values()} == {"automation_deleted"}
    assert all(row.done_at is None for row in captured.values())
    assert sorted(enqueued["cleanups"]) == sorted(captured)
    assert await deleted(db, [run.task_id for run in runs]) == [False, False]  # the job's work, not the delete's

    results = [await run_cleanup(services.ctx, run.task_id) for run in runs]

    assert results == ["done", "done"]
    assert await deleted(db, [run.task_id for run in runs]) == [True, True]
    assert all(row.done_at is not None for row in (await cleanups(db)).values())
    assert not any(workdir.exists() or workdir.parent.exists() for workdir in workdirs)
    assert worktrees(repo) == [str(repo)]
    assert all(git(repo, "branch", "--list", branch) for branch in branches)  # no commit is lost
    assert (attached / "keep.txt").read_text() == "mine\n"  # the link went, never its target
    async with db.read() as session:
        states = set(await session.scalars(select(Session.state).where(Session.task_id.in_([r.task_id for r in runs]))))
    assert states == {"CANCELLED"}


async def test_tasks_an_automation_put_on_the_board_survive_its_deletion(services, db, workspace_id, enqueued):
    workflow = (await services.workflows.list_for_workspace(workspace_id))[0]
    automation_id = await new_automation(
        services, workspace_id, destination=AutomationDestination.NORMAL, workflow_id=workflow.id
    )
    run = await launched_run(services, automation_id)

    await services.automations.delete(automation_id)

    assert await cleanups(db) == {} and enqueued["cleanups"] == []
    assert (await task(db, run.task_id)).deleted_at is None


async def test_a_cleanup_whose_first_attempt_fails_is_retried_with_backoff_and_then_succeeds(
    services, db, workspace_id, tmp_path, monkeypatch
):
    repository_id, repo = await repository(services, workspace_id, tmp_path / "repo")
    run = await launched_run(services, await automation_on(services, workspace_id, repository_id))
    workdir = await take_turn(services, run.session_id)
    await services.automation_runs.delete(run.id)
    real = cleanup.reclaim_task_directories
    calls: list[str] = []

    def failing_once(*args: Any) -> bool:
        calls.append(args[1])
        if len(calls) == 1:
            raise PermissionError(13, "Permission denied")
        return real(*args)

    monkeypatch.setattr(cleanup, "reclaim_task_directories", failing_once)
    now = utcnow()

    first = await run_cleanup(services.ctx, run.task_id, now=now)
    kept = workdir.exists()
    row = (await cleanups(db))[run.task_id]
    not_yet = await run_cleanup(services.ctx, run.task_id, now=now + timedelta(seconds=1))
    due_later = await due_cleanups(services.ctx, now + cleanup.backoff(1))
    second = await run_cleanup(services.ctx, run.task_id, now=now + cleanup.backoff(1))

    assert first == "failed" and kept
    assert (row.attempts, row.done_at) == (1, None)
    assert row.last_error is not None and "PermissionError" in row.last_error
    assert row.next_attempt_at == now + cleanup.backoff(1)
    assert not_yet == "nothing to do"
    assert due_later == [run.task_id]
    assert second == "done" and not workdir.exists() and worktrees(repo) == [str(repo)]
    done = (await cleanups(db))[run.task_id]
    assert done.done_at is not None and done.last_error is None


async def test_a_cleanup_whose_job_was_lost_is_enqueued_again_by_recovery(
    services, db, settings, workspace_id, enqueued
):
    automation_id = await new_automation(services, workspace_id)
    run = await launched_run(services, automation_id)
    await services.automations.delete(automation_id)
    # Its job is taken as lost (no worker runs here): only recovery may enqueue it again.

    counts = await recover(settings)
    await run_cleanup(services.ctx, run.task_id)
    after = await recover(settings)

    assert counts["cleanups"] == 1
    assert enqueued["cleanups"] == [run.task_id, run.task_id]  # on deletion, and by recovery
    assert after["cleanups"] == 0
    assert (await task(db, run.task_id)).deleted_at is not None


async def test_running_a_cleanup_twice_or_at_once_does_its_work_once(services, db, workspace_id, tmp_path):
    repository_id, _ = await repository(services, workspace_id, tmp_path / "repo")
    automation_id = await automation_on(services, workspace_id, repository_id)
    runs = [await launched_run(services, automation_id) for _ in range(2)]
    for run in runs:
        await take_turn(services, run.session_id)
    await services.automations.delete(automation_id)

    together = await asyncio.gather(*(run_cleanup(services.ctx, runs[0].task_id) for _ in range(2)))
    once = await run_cleanup(services.ctx, runs[1].task_id)
    deleted_at = (await task(db, runs[1].task_id)).deleted_at
    twice = await run_cleanup(services.ctx, runs[1].task_id, now=utcnow() + timedelta(days=1))

    assert sorted(together) == ["done", "nothing to do"]
    assert (once, twice) == ("done", "nothing to do")
    assert (await task(db, runs[1].task_id)).deleted_at == deleted_at
    async with db.read() as session:
        markers = list(await session.scalars(select(Message.id).where(Message.session_id == runs[1].session_id)))
    assert len(markers) == len(set(markers))


async def test_delete_run_and_delete_all_runs_capture_their_orphaned_hidden_tasks_durably(
    services, db, workspace_id, enqueued
):
    per_run = await new_automation(services, workspace_id, max_concurrent_runs=10)
    lone = await launched_run(services, per_run)
    rest = [await launched_run(services, per_run) for _ in range(2)]
    continued = await new_automation(
        services, workspace_id, name="Continued", context=AutomationContext.CONTINUE_SESSION
    )
    first = await launched_run(services, continued)
    await take_turn(services, first.session_id)
    second = await launched_run(services, continued)
    assert second.task_id == first.task_id

    await services.automation_runs.delete(lone.id)
    after_one = await cleanups(db)
    await services.automation_runs.delete(first.id)  # its task is still the second run's
    after_shared = await cleanups(db)
    await services.automation_runs.delete_all(per_run)
    await services.automation_runs.delete_all(continued)
    captured = await cleanups(db)

    assert list(after_one) == [lone.task_id] and after_one[lone.task_id].reason == "run_deleted"
    assert list(after_shared) == [lone.task_id]
    assert sorted(captured) == sorted([lone.task_id, *(r.task_id for r in rest), first.task_id])
    assert sorted(enqueued["cleanups"]) == sorted(captured)
    assert not any(await deleted(db, list(captured)))  # until the job runs
    for task_id in captured:
        assert await run_cleanup(services.ctx, task_id) == "done"
    assert all(await deleted(db, list(captured)))


async def test_a_cleanup_cancels_a_running_turn_and_removes_the_worktree_only_once_that_turn_ended(
    services, db, workspace_id, tmp_path, enqueued
):
    from kandev.domain.sessions.turns import finish_turn

    repository_id, repo = await repository(services, workspace_id, tmp_path / "repo")
    automation_id = await automation_on(services, workspace_id, repository_id)
    run = await launched_run(services, automation_id)
    turn_id, workdir = await start_turn(services, run.session_id)
    await services.automations.delete(automation_id)

    waiting = await run_cleanup(services.ctx, run.task_id)
    async with db.read() as session:
        turn = await session.get(Turn, turn_id)
        state = await session.scalar(select(Session.state).where(Session.id == run.session_id))
    kept_while_running = workdir.exists()
    await finish_turn(services.ctx, turn_id, stop_reason="cancelled")  # the worker saw the cancel
    row = (await cleanups(db))[run.task_id]
    done = await run_cleanup(services.ctx, run.task_id, now=row.next_attempt_at)

    assert waiting == "waiting for the running turn to stop"
    assert turn is not None and turn.cancel_requested_at is not None and state == "CANCELLED"
    assert kept_while_running and row.attempts == 0
    assert done == "done" and not workdir.exists() and worktrees(repo) == [str(repo)]
