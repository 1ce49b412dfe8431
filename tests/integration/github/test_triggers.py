"""GitHub triggers wired to firing: PR polls and merged task PRs fire through the durable pending-firing
outbox (once per dedup key, surviving a crash between the decision and the firing, retried with backoff),
and a merged-PR run may archive only the task whose pull request merged (and its own run task)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select

from kandev.domain.automations.firing import Admission
from kandev.domain.automations.records import AutomationFields, TriggerFields
from kandev.domain.context import Principal
from kandev.domain.errors import PermissionDeniedError
from kandev.domain.github import firings
from kandev.domain.github.firings import backoff, deliver_pending
from kandev.domain.github.links import MERGED_PR_SUGGESTED_PROMPT, sync_task_pull_requests
from kandev.domain.github.pull_requests import poll_github_now, poll_pull_requests
from kandev.domain.services import Services
from kandev.models import AutomationRun, GithubPendingFiring, Task
from kandev.models.base import utcnow
from kandev.models.enums import TriggerType
from tests.integration.github.test_poller import add_repository, branch_task, connect
from tests.support.factories import new_task


async def runs_of(db, automation_id):
    async with db.read() as session:
        return list(
            await session.scalars(
                select(AutomationRun)
                .where(AutomationRun.automation_id == automation_id)
                .order_by(AutomationRun.created_at)
            )
        )


async def pending(db):
    async with db.read() as session:
        return list(await session.scalars(select(GithubPendingFiring)))


async def pr_automation(services, workspace_id, **filters):
    trigger = TriggerFields(type=TriggerType.GITHUB_PR, config=filters)
    saved = await services.automations.create(
        workspace_id,
        AutomationFields(name="PRs", prompt="review {{pr.url}}", triggers=[trigger], max_concurrent_runs=10),
    )
    return saved.automation.id


async def merged_automation(services, workspace_id, **filters):
    trigger = TriggerFields(type=TriggerType.GITHUB_PR_MERGED, config=filters)
    saved = await services.automations.create(
        workspace_id, AutomationFields(name="Archive merged", prompt=MERGED_PR_SUGGESTED_PROMPT, triggers=[trigger])
    )
    return saved.automation.id


async def test_a_new_pr_fires_once_across_two_polls_and_a_synchronize_fires_again(services, db, workspace_id, github):
    await connect(services, workspace_id)
    automation = await pr_automation(
        services, workspace_id, repositories=["acme/widgets"], events=["opened", "synchronize"]
    )
    github.add_pr("acme/widgets", 1, title="Fix it", author="alice")
    first = await poll_github_now(services.ctx, workspace_id)
    assert [o.admission for o in first] == [Admission.FIRED]
    assert await poll_github_now(services.ctx, workspace_id) == []
    runs = await runs_of(db, automation)
    assert len(runs) == 1 and runs[0].trigger_type == "github_pr"
    assert runs[0].dedup_key == "github_pr:acme/widgets#1:opened"
    data = runs[0].trigger_data
    assert data["pr"]["title"] == "Fix it" and data["pr"]["author"] == "alice" and data["event"] == "opened"
    assert data["repository"] == "acme/widgets"
    github.update_pr("acme/widgets", 1, head_sha="c" * 40)
    again = await poll_github_now(services.ctx, workspace_id)
    assert [o.admission for o in again] == [Admission.FIRED]
    runs = await runs_of(db, automation)
    assert [r.trigger_data["event"] for r in runs] == ["opened", "synchronize"]
    assert await pending(db) == []


async def test_filters_choose_what_fires(services, db, workspace_id, github):
    await connect(services, workspace_id)
    automation = await pr_automation(
        services, workspace_id, repositories=["acme/widgets"], base_branches=["release/*"], authors=["bob"]
    )
    github.add_pr("acme/widgets", 1, base="main", author="bob")
    github.add_pr("acme/widgets", 2, base="release/2", author="carol")
    github.add_pr("acme/widgets", 3, base="release/2", author="Bob")
    await poll_github_now(services.ctx, workspace_id)
    assert [r.trigger_data["pr"]["number"] for r in await runs_of(db, automation)] == [3]


async def test_a_crash_between_poll_and_fire_does_not_lose_the_firing(services, db, workspace_id, github, monkeypatch):
    await connect(services, workspace_id)
    automation = await pr_automation(services, workspace_id, repositories=["acme/widgets"])
    github.add_pr("acme/widgets", 5)
    # The poll commits its state and the firing it decided; the process dies before firing.
    assert len(await poll_pull_requests(services.ctx, workspace_id)) == 1
    assert [p.dedup_key for p in await pending(db)] == ["github_pr:acme/widgets#5:opened"]
    # A firing attempt that crashes inside `fire` keeps the row too.

    async def crash(*args, **kwargs):
        raise RuntimeError("worker died")

    monkeypatch.setattr(firings, "fire", crash)
    assert await deliver_pending(services.ctx) == []
    monkeypatch.undo()
    assert len(await pending(db)) == 1 and await runs_of(db, automation) == []
    # The next poll sees nothing new, but fires what the earlier one recorded (once it is due).
    outcomes = await deliver_pending(services.ctx, now=utcnow() + backoff(1))
    assert [o.admission for o in outcomes] == [Admission.FIRED]
    assert len(await runs_of(db, automation)) == 1 and await pending(db) == []
    assert await poll_github_now(services.ctx, workspace_id) == []


async def test_a_merged_task_pr_fires_the_merged_trigger_once_with_the_task_id(services, db, workspace_id, github):
    await connect(services, workspace_id)
    repository = await add_repository(db, workspace_id, "acme/widgets")
    task_id = await branch_task(services, db, workspace_id, repository, "kandev/linked-1")
    automation = await merged_automation(services, workspace_id, repositories=["acme/widgets"], base_branches=["main"])
    skipped = await merged_automation(services, workspace_id, base_branches=["release/*"])
    github.add_pr("acme/widgets", 9, head="kandev/linked-1", base="main")
    assert await poll_github_now(services.ctx, workspace_id) == []  # linked, not merged
    github.merge_pr("acme/widgets", 9)
    outcomes = await poll_github_now(services.ctx, workspace_id)
    assert [o.admission for o in outcomes] == [Admission.FIRED]
    runs = await runs_of(db, automation)
    assert len(runs) == 1 and runs[0].trigger_type == "github_pr_merged"
    assert runs[0].dedup_key == f"github_pr_merged:{task_id}:acme/widgets#9"
    assert runs[0].trigger_data["task_id"] == task_id and runs[0].trigger_data["pr"]["number"] == 9
    assert await runs_of(db, skipped) == []
    assert await poll_github_now(services.ctx, workspace_id) == []
    assert len(await runs_of(db, automation)) == 1


async def test_a_failing_merged_firing_is_retried_with_backoff(services, db, workspace_id, github, monkeypatch):
    await connect(services, workspace_id)
    repository = await add_repository(db, workspace_id, "acme/widgets")
    task_id = await branch_task(services, db, workspace_id, repository, "kandev/linked-2")
    automation = await merged_automation(services, workspace_id)
    github.add_pr("acme/widgets", 3, head="kandev/linked-2")
    await sync_task_pull_requests(services.ctx, workspace_id)
    github.merge_pr("acme/widgets", 3)
    real_fire = firings.fire
    calls = []

    async def flaky(*args, **kwargs):
        calls.append(kwargs["dedup_key"])
        if len(calls) < 3:
            raise ConnectionError("database went away")
        return await real_fire(*args, **kwargs)

    monkeypatch.setattr(firings, "fire", flaky)
    start = utcnow()
    assert await poll_github_now(services.ctx, workspace_id) == []
    [row] = await pending(db)
    assert row.attempts == 1 and row.next_attempt_at >= start + timedelta(seconds=29)
    assert row.last_error is not None and "ConnectionError" in row.last_error
    assert await deliver_pending(services.ctx) == []  # not due yet: no attempt
    assert len(calls) == 1
    assert await deliver_pending(services.ctx, now=row.next_attempt_at) == []
    [row] = await pending(db)
    assert row.attempts == 2 and row.next_attempt_at - row.created_at >= backoff(2)
    outcomes = await deliver_pending(services.ctx, now=row.next_attempt_at)
    assert [o.admission for o in outcomes] == [Admission.FIRED] and len(calls) == 3
    [run] = await runs_of(db, automation)
    assert run.trigger_data["task_id"] == task_id and await pending(db) == []


async def test_a_merged_pr_run_archives_only_its_task_and_itself(services, db, workspace_id, github, principal):
    await connect(services, workspace_id)
    repository = await add_repository(db, workspace_id, "acme/widgets")
    task_id = await branch_task(services, db, workspace_id, repository, "kandev/linked-3")
    other = await new_task(services, workspace_id, "Someone else's")
    automation = await merged_automation(services, workspace_id)
    github.add_pr("acme/widgets", 4, head="kandev/linked-3")
    await sync_task_pull_requests(services.ctx, workspace_id)
    github.merge_pr("acme/widgets", 4)
    await poll_github_now(services.ctx, workspace_id)
    [run] = await runs_of(db, automation)
    run_task = await new_task(services, workspace_id, "The run's task")
    async with db.transaction() as session:
        stored = await session.get(AutomationRun, run.id)
        stored.task_id = run_task
    agent = Principal(
        user_id=principal.user_id,
        login=principal.login,
        sees_everything=principal.sees_everything,
        session_id="session-of-the-run",
        task_id=run_task,
        workspace_id=workspace_id,
    )
    as_agent = Services(services.ctx.with_principal(agent))
    with pytest.raises(PermissionDeniedError):
        await as_agent.tasks.archive(other)
    async with db.read() as session:
        assert (await session.get(Task, other)).archived_at is None
    archived = await as_agent.tasks.archive(task_id)
    assert archived.task.id == task_id and not archived.already_archived
    async with db.read() as session:
        assert (await session.get(Task, task_id)).archived_at is not None
    # A run whose data names no task may archive nothing.
    async with db.transaction() as session:
        stored = await session.get(AutomationRun, run.id)
        stored.trigger_data = {"pr": stored.trigger_data["pr"]}
    with pytest.raises(PermissionDeniedError):
        await as_agent.tasks.archive(task_id)
    # Its own run task it may always archive: that is how a run says it is done.
    assert (await as_agent.tasks.archive(run_task)).task.id == run_task
    # Outside a merged-PR run (a person, or another session) archiving is unchanged.
    await services.tasks.archive(other)
