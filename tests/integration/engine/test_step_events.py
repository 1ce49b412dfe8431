"""Step events beyond moves on turn end: children completed, plan mode, context reset."""

from __future__ import annotations

import pytest
from sqlalchemy import update

from kandev.domain.tasks.service import CreateTask
from kandev.models.enums import TaskState
from tests.integration.engine.conftest import history, messages
from tests.support.watch import watching
from tests.support.workers import running_worker
from tests.support.workflows import set_events, steps_by_name


async def test_a_parent_moves_when_all_its_children_reach_a_terminal_state(services, db, workspace_id):
    steps = await steps_by_name(services, workspace_id)
    await set_events(db, steps["Review"].id, {"on_children_completed": [{"type": "move_to_next"}]})
    parent = (
        await services.tasks.create(
            CreateTask(workspace_id=workspace_id, title="Parent", workflow_step_id=steps["Review"].id)
        )
    ).task
    first = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="A", parent_id=parent.id))).task
    second = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="B", parent_id=parent.id))).task
    await services.tasks.update(first.id, state=TaskState.COMPLETED)
    assert (await services.tasks.get(parent.id)).workflow_step_id == steps["Review"].id  # one child still open
    await services.tasks.update(second.id, state=TaskState.FAILED)
    moved = await services.tasks.get(parent.id)
    assert moved.workflow_step_id == steps["Done"].id and moved.state == "COMPLETED"
    last = (await history(db, parent.id))[-1]
    assert last.trigger == "children_completed"
    assert last.details["children"] == {first.id: "COMPLETED", second.id: "FAILED"}


@pytest.mark.slow
async def test_a_step_that_enables_plan_mode_puts_the_agent_in_plan_mode(services, settings, bus, db, workspace_id):
    steps = await steps_by_name(services, workspace_id)
    events = dict(steps["In Progress"].events)
    events["on_enter"] = [*events["on_enter"], {"type": "enable_plan_mode"}]
    await set_events(db, steps["In Progress"].id, events)
    task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Plan first"))).task
    with running_worker(settings):
        delivery = await services.sessions.start_task(task.id, "/say planning", None)
        async with watching(bus, db, delivery.session.id) as watch:
            await watch.next_turn_end()
    assert (await services.sessions.get(delivery.session.id)).plan_mode is True
    notes = [m.data.get("mode") for m in await messages(db, delivery.session.id, "SYSTEM")]
    assert "plan" in notes


async def test_entering_a_step_that_resets_context_marks_the_transcript_and_drops_the_agent_session(
    services, db, workspace_id
):
    steps = await steps_by_name(services, workspace_id)
    await set_events(db, steps["Review"].id, {"on_enter": [{"type": "reset_agent_context"}]})
    task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Fresh eyes"))).task
    delivery = await services.sessions.start_task(task.id, "work", None)
    async with db.transaction() as s:
        from kandev.models import Session

        await s.execute(update(Session).where(Session.id == delivery.session.id).values(acp_session_id="acp-1"))
    await services.tasks.move(task.id, steps["Review"].id)
    session = await services.sessions.get(delivery.session.id)
    assert session.acp_session_id is None
    [marker] = [m for m in await messages(db, session.id, "SYSTEM") if m.data.get("context_reset")]
    assert "Review" in marker.text
