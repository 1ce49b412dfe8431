"""Runs following their turns on a real worker with the scripted agent: a continued session keeps earlier
runs as they were when a later one is stopped, a permission request fails the run, and a replaced
continuation says why."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from sqlalchemy import select

from kandev.domain.automations.firing import fire
from kandev.domain.automations.launch import launch_run
from kandev.domain.automations.records import AutomationFields
from kandev.models import AutomationRun, Message, Turn
from kandev.models.enums import AutomationContext, PermissionPolicy
from kandev.platform.event_bus import automation_channel
from tests.integration.domain.automations.conftest import new_automation, runs_of
from tests.support.factories import new_agent_profile
from tests.support.workers import running_worker

pytestmark = pytest.mark.slow


async def until_run(events: Any, run_id: str, predicate: Any, timeout: float = 30) -> dict[str, Any]:
    async with asyncio.timeout(timeout):
        async for event in events:
            if event["run"] is not None and event["run"]["id"] == run_id and predicate(event["run"]):
                return dict(event["run"])
    raise AssertionError("event stream ended")


def ended(run: dict[str, Any]) -> bool:
    """Its turn settled it (a stopped run then still shows cancelled)."""
    return run["finished_at"] is not None


async def test_stopping_a_continued_run_cancels_only_its_turn_and_leaves_earlier_runs_as_they_were(
    services, db, bus, settings, workspace_id
):
    automation_id = await new_automation(
        services, workspace_id, prompt="{{data.script}}", context=AutomationContext.CONTINUE_SESSION
    )
    with running_worker(settings):
        async with bus.subscribe(automation_channel(workspace_id)) as events:
            first = await fire(
                services.ctx, automation_id, trigger_id=None, trigger_type="manual", data={"script": "/say one"}
            )
            assert first.run_id
            await until_run(events, first.run_id, ended)
            before = (await runs_of(db, automation_id))[0]
            second = await fire(
                services.ctx, automation_id, trigger_id=None, trigger_type="manual", data={"script": "/sleep 30"}
            )
            assert second.run_id
            await until_run(events, second.run_id, lambda run: run["turn_id"] is not None)
            await services.automation_runs.stop(second.run_id)
            await until_run(events, second.run_id, ended)

    earlier, stopped = await runs_of(db, automation_id)
    session = await services.sessions.get(stopped.session_id)
    async with db.read() as s:
        turn = await s.get(Turn, stopped.turn_id)
        markers = list(
            await s.scalars(select(Message.text).where(Message.turn_id == stopped.turn_id, Message.kind == "SYSTEM"))
        )
    shown = await services.automation_runs.get(stopped.id)
    assert (earlier.status, earlier.finished_at, earlier.reason) == (before.status, before.finished_at, before.reason)
    assert earlier.status == "succeeded"
    assert (stopped.session_id, stopped.task_id) == (earlier.session_id, earlier.task_id)
    assert shown.status == "cancelled" and stopped.stopped_at is not None
    assert turn is not None and turn.stop_reason == "cancelled"
    assert any("this automation run's turn was cancelled" in text for text in markers)
    assert session.state == "WAITING_FOR_INPUT"


async def test_a_run_whose_agent_asks_for_a_permission_fails_saying_why(services, db, bus, settings, workspace_id):
    asking = await new_agent_profile(services, workspace_id, "Asks", permission_policy=PermissionPolicy.ASK)
    automation_id = await new_automation(
        services, workspace_id, prompt="/permission rm -rf build", agent_profile_id=asking.id
    )
    with running_worker(settings):
        async with bus.subscribe(automation_channel(workspace_id)) as events:
            outcome = await fire(services.ctx, automation_id, trigger_id=None, trigger_type="manual")
            assert outcome.run_id
            run = await until_run(events, outcome.run_id, ended)
    assert run["status"] == "failed"
    assert "asked for permission (rm -rf build)" in run["reason"]
    assert "cannot wait for a permission response" in run["reason"]


async def test_a_continuation_whose_task_was_archived_is_replaced_and_the_run_says_why(services, db, workspace_id):
    automation_id = await new_automation(services, workspace_id, context=AutomationContext.CONTINUE_SESSION)
    first = await fire(services.ctx, automation_id, trigger_id=None, trigger_type="manual")
    assert first.run_id
    await launch_run(services.ctx, first.run_id)
    earlier = (await runs_of(db, automation_id))[0]
    await services.tasks.archive(earlier.task_id)

    second = await fire(services.ctx, automation_id, trigger_id=None, trigger_type="manual")
    assert second.run_id
    await launch_run(services.ctx, second.run_id)

    _, replaced = await runs_of(db, automation_id)
    assert replaced.task_id != earlier.task_id
    assert replaced.continuation_note and "archived" in replaced.continuation_note


async def test_a_compatible_continuation_reuses_the_session_and_a_changed_profile_replaces_it(
    services, db, workspace_id
):
    automation_id = await new_automation(services, workspace_id, context=AutomationContext.CONTINUE_SESSION)
    for _ in range(2):
        outcome = await fire(services.ctx, automation_id, trigger_id=None, trigger_type="manual")
        assert outcome.run_id
        await launch_run(services.ctx, outcome.run_id)
        async with db.transaction() as session:  # its turn ended: the next firing is admitted
            run = await session.get(AutomationRun, outcome.run_id)
            assert run is not None
            run.status = "succeeded"
    other = await new_agent_profile(services, workspace_id, "Other")
    await services.automations.update(automation_id, AutomationFields(agent_profile_id=other.id))
    last = await fire(services.ctx, automation_id, trigger_id=None, trigger_type="manual")
    assert last.run_id
    await launch_run(services.ctx, last.run_id)

    first, continued, replaced = await runs_of(db, automation_id)
    assert (continued.task_id, continued.session_id, continued.continuation_note) == (
        first.task_id,
        first.session_id,
        None,
    )
    assert replaced.task_id != first.task_id
    assert replaced.continuation_note and "agent profile changed" in replaced.continuation_note


STOP_TASK = "mutation($id: ID!) { stopTask(taskId: $id) { __typename ... on StopTaskPayload { status } } }"
RUN_STATUSES = "query($id: ID!) { automationRuns(automationId: $id) { nodes { id status } } }"


async def shown(gql, automation_id):
    """Each run's status as the GraphQL history shows it."""
    nodes = (await gql(RUN_STATUSES, id=automation_id))["automationRuns"]["nodes"]
    return {node["id"]: node["status"] for node in nodes}


async def test_a_run_whose_task_is_stopped_from_the_task_page_reads_cancelled_like_stop_run(
    services, db, bus, settings, workspace_id, gql
):
    """History status rules: a run stopped from its task page (stopTask) reads CANCELLED on every view, as a
    stopRun makes it, whether its turn was running or had not started yet; and it no longer counts as active."""
    automation_id = await new_automation(services, workspace_id, prompt="{{data.script}}", max_concurrent_runs=2)
    # Not started yet: launched, its prompt queued, no worker has claimed it.
    waiting = await fire(
        services.ctx, automation_id, trigger_id=None, trigger_type="manual", data={"script": "/say late"}
    )
    assert waiting.run_id and await launch_run(services.ctx, waiting.run_id) == "launched"
    [queued] = await runs_of(db, automation_id)
    assert (await gql(STOP_TASK, id=queued.task_id))["stopTask"]["status"] == "stopped"
    assert await shown(gql, automation_id) == {queued.id: "CANCELLED"}
    with running_worker(settings):
        async with bus.subscribe(automation_channel(workspace_id)) as events:
            running = await fire(
                services.ctx, automation_id, trigger_id=None, trigger_type="manual", data={"script": "/sleep 30"}
            )
            assert running.run_id, running.reason  # the stopped run freed its slot
            started = await until_run(events, running.run_id, lambda run: run["turn_id"] is not None)
            stopped = await gql(STOP_TASK, id=started["task_id"])
            assert stopped["stopTask"]["status"] == "stopped"
            settled = await until_run(events, running.run_id, ended)
    assert settled["status"] == "cancelled"
    assert await shown(gql, automation_id) == {queued.id: "CANCELLED", running.run_id: "CANCELLED"}
    page = await services.automations.list_runs(automation_id)
    assert {r.id: r.status for r in page.records} == {queued.id: "cancelled", running.run_id: "cancelled"}
    # Both slots are free again: the cap counts neither.
    again = await fire(services.ctx, automation_id, trigger_id=None, trigger_type="manual", data={"script": "/say"})
    assert again.fired
