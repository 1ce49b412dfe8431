"""Task events: every kind of change publishes after commit, and failed changes publish nothing."""

from __future__ import annotations

import asyncio

import pytest

from kandev.domain.tasks.service import CreateTask
from kandev.platform.event_bus import task_channel


async def test_each_task_change_publishes_its_kind_with_the_current_row(services, bus, workspace_id):
    steps = await services.lookups.steps_by_workflow(
        [(await services.workflows.list_for_workspace(workspace_id))[0].id]
    )
    review = steps[0][2]
    async with bus.subscribe(task_channel(workspace_id)) as events:
        created = await services.tasks.create(CreateTask(workspace_id=workspace_id, title="One"))
        task_id = created.task.id
        await services.tasks.update(task_id, title="Renamed")
        await services.tasks.move(task_id, review.id)
        await services.tasks.archive(task_id)
        await services.tasks.delete(task_id)
        received = [await asyncio.wait_for(anext(events), timeout=5) for _ in range(5)]
    assert [(e["kind"], e["task"]["id"]) for e in received] == [
        ("CREATED", task_id),
        ("UPDATED", task_id),
        ("MOVED", task_id),
        ("ARCHIVED", task_id),
        ("DELETED", task_id),
    ]
    assert received[1]["task"]["title"] == "Renamed"
    assert received[2]["task"]["workflow_step_id"] == review.id


async def test_events_of_a_rolled_back_unit_of_work_are_never_published(services, bus, workspace_id):
    ctx = services.ctx
    async with bus.subscribe(task_channel(workspace_id)) as events:
        with pytest.raises(RuntimeError):
            async with ctx.unit_of_work() as uow:
                uow.emit(task_channel(workspace_id), {"kind": "CREATED", "marker": "rolled back"})
                raise RuntimeError("boom")
        await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Committed"))
        first = await asyncio.wait_for(anext(events), timeout=5)
    assert "marker" not in first
    assert first["task"]["title"] == "Committed"


async def test_a_timed_out_wait_for_the_next_event_keeps_the_subscription_alive(bus, workspace_id):
    channel = task_channel(workspace_id)
    async with bus.subscribe(channel) as events:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(anext(events), timeout=0.05)
        await bus.publish(channel, {"kind": "UPDATED", "marker": "after the timeout"})
        event = await asyncio.wait_for(anext(events), timeout=5)
    assert event["marker"] == "after the timeout"
