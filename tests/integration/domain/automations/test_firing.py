"""fire(): admission in one transaction — disabled refuses without a row, a dedup key fires once, a reached
cap writes a skipped run with the reason — and the launch job the worker runs."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from kandev.domain.automations.firing import Admission, fire
from kandev.domain.automations.launch import launch_run
from kandev.domain.automations.scheduling import dedup_key
from kandev.domain.tasks.service import TaskFilter
from kandev.domain.workflow.service import start_step_of
from kandev.models.enums import AutomationDestination, RunStatus, RunTriggerType, TaskOrigin
from kandev.platform.event_bus import automation_channel, task_channel
from tests.integration.domain.automations.conftest import new_automation, runs_of, scheduled
from tests.support.workers import running_worker


async def test_a_disabled_automation_or_trigger_refuses_and_writes_no_run(services, db, workspace_id):
    automation_id = await new_automation(services, workspace_id, triggers=scheduled())
    trigger_id = (await services.automations.get(automation_id)).triggers[0].id
    await services.automations.set_trigger_enabled(trigger_id, False)
    by_trigger = await fire(services.ctx, automation_id, trigger_id=trigger_id, trigger_type="scheduled")
    await services.automations.set_enabled(automation_id, False)
    manual = await fire(services.ctx, automation_id, trigger_id=None, trigger_type="manual")

    assert (by_trigger.admission, by_trigger.reason) == (Admission.REFUSED, "the trigger is disabled")
    assert (manual.admission, manual.reason) == (Admission.REFUSED, "the automation is disabled")
    assert await runs_of(db, automation_id) == []


async def test_a_dedup_key_fires_once_even_when_two_callers_race(services, db, workspace_id):
    automation_id = await new_automation(services, workspace_id, triggers=scheduled(), max_concurrent_runs=5)
    trigger_id = (await services.automations.get(automation_id)).triggers[0].id

    async def once() -> Admission:
        outcome = await services.automation_runs.fire(
            automation_id, trigger_id=trigger_id, trigger_type="scheduled", dedup_key="t:09:00"
        )
        return outcome.admission

    outcomes = await asyncio.gather(once(), once(), once())

    assert sorted(outcomes) == [Admission.DEDUPLICATED, Admission.DEDUPLICATED, Admission.FIRED]
    assert len(await runs_of(db, automation_id)) == 1


@pytest.mark.parametrize(
    ("trigger_type", "key", "reason"),
    [
        ("scheduled", dedup_key("t-1", datetime(2026, 6, 1, 9, 0, tzinfo=UTC)), "already fired for this minute"),
        ("webhook", "webhook:3f1c", "already fired for this delivery"),
        ("github_pr", "github_pr:acme/app#7:opened", "already fired for this pull request event"),
        ("github_pr_merged", "github_pr_merged:t:acme/app#7", "already fired for this merged pull request"),
        ("github_push", "github_push:acme/app:main:" + "a" * 40, "already fired for this push"),
        ("github_ci", "github_ci:acme/app:check_run:9", "already fired for this check run"),
    ],
)
async def test_a_deduplicated_firing_answers_the_reason_it_did_not_run(
    services, db, workspace_id, trigger_type, key, reason
):
    """Skipped with the reason, every time: like the cap and the disabled cases, a key that already fired says
    why nothing ran (and names the run that holds it)."""
    automation_id = await new_automation(services, workspace_id, max_concurrent_runs=5)
    first = await fire(services.ctx, automation_id, trigger_id=None, trigger_type=trigger_type, dedup_key=key)
    again = await fire(services.ctx, automation_id, trigger_id=None, trigger_type=trigger_type, dedup_key=key)
    assert first.fired and first.reason is None
    assert (again.admission, again.run_id, again.reason) == (Admission.DEDUPLICATED, first.run_id, reason)
    assert len(await runs_of(db, automation_id)) == 1


async def test_a_reached_cap_writes_a_skipped_run_with_the_reason_and_keeps_the_key_free(services, db, workspace_id):
    automation_id = await new_automation(services, workspace_id)
    first = await fire(services.ctx, automation_id, trigger_id=None, trigger_type="manual")
    second = await fire(services.ctx, automation_id, trigger_id=None, trigger_type="webhook", dedup_key="d1")

    assert first.admission == Admission.FIRED
    assert second.admission == Admission.SKIPPED and "1 run(s) still active" in (second.reason or "")
    rows = await runs_of(db, automation_id)
    assert [(r.status, r.dedup_key) for r in rows] == [("triggered", None), ("skipped", None)]
    assert rows[1].reason == second.reason


async def test_the_title_snapshot_is_rendered_from_the_trigger_data(services, db, workspace_id):
    automation_id = await new_automation(
        services, workspace_id, title_template="Deploy {{data.service}} ({{trigger.type}})"
    )
    await fire(services.ctx, automation_id, trigger_id=None, trigger_type="manual", data={"service": "api"})

    assert [r.title_snapshot for r in await runs_of(db, automation_id)] == ["Deploy api (manual)"]


async def test_a_launch_of_a_hidden_run_makes_a_task_kept_off_lists_and_task_events(services, db, bus, workspace_id):
    automation_id = await new_automation(services, workspace_id, title_template="Run {{data.n}}")
    async with (
        bus.subscribe(task_channel(workspace_id)) as task_events,
        bus.subscribe(automation_channel(workspace_id)) as run_events,
    ):
        outcome = await fire(services.ctx, automation_id, trigger_id=None, trigger_type="manual", data={"n": 7})
        assert outcome.run_id is not None
        assert await launch_run(services.ctx, outcome.run_id) == "launched"
        assert await launch_run(services.ctx, outcome.run_id) == "nothing to launch"  # a retried job
        kinds = []
        async with asyncio.timeout(5):
            async for event in run_events:
                kinds.append((event["kind"], (event["run"] or event.get("thread_message") or {}).get("status")))
                if len(kinds) == 3:
                    break
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.3):
                await anext(aiter(task_events))

    run = (await runs_of(db, automation_id))[0]
    task = await services.tasks.get(run.task_id)
    listed = await services.tasks.list(workspace_id, TaskFilter())
    # The run's request entered the automation's thread with its launch (not on the firing's path).
    assert kinds == [("RUN_CREATED", "triggered"), ("RUN_UPDATED", "task_created"), ("THREAD_MESSAGE", None)]
    assert (run.status, task.origin, task.title) == (RunStatus.TASK_CREATED, TaskOrigin.AUTOMATION_RUN, "Run 7")
    assert run.session_id is not None
    assert task.id not in [t.id for t in listed.records]


async def test_a_normal_destination_lands_at_its_workflow_start_step(services, db, workspace_id):
    workflow = (await services.workflows.list_for_workspace(workspace_id))[0]
    start = start_step_of(await services.workflows.steps(workflow.id))
    automation_id = await new_automation(
        services, workspace_id, destination=AutomationDestination.NORMAL, workflow_id=workflow.id
    )
    outcome = await fire(services.ctx, automation_id, trigger_id=None, trigger_type=RunTriggerType.MANUAL)
    assert outcome.run_id is not None
    await launch_run(services.ctx, outcome.run_id)

    run = (await runs_of(db, automation_id))[0]
    task = await services.tasks.get(run.task_id)
    assert (task.origin, task.workflow_step_id) == (TaskOrigin.AUTOMATION, start.id)


@pytest.mark.slow
async def test_a_manual_run_runs_the_scripted_agent_and_ends_succeeded_waiting_for_input(
    services, db, bus, settings, workspace_id
):
    automation_id = await new_automation(services, workspace_id)
    with running_worker(settings):
        async with bus.subscribe(automation_channel(workspace_id)) as events:
            outcome = await fire(services.ctx, automation_id, trigger_id=None, trigger_type="manual")
            async with asyncio.timeout(30):
                async for event in events:
                    if (event["run"] or {}).get("status") in ("succeeded", "failed"):
                        break

    run = (await runs_of(db, automation_id))[0]
    session = await services.sessions.get(run.session_id)
    assert (run.id, run.status, run.reason) == (outcome.run_id, "succeeded", None)
    assert run.turn_id is not None and run.finished_at is not None
    assert session.state == "WAITING_FOR_INPUT"
