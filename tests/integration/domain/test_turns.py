"""How a turn ends decides its session's and task's state: launch failures fail them through the one
state-change path; a failed turn leaves them waiting with the error shown; stops say who stopped what."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select, update

from kandev.domain.sessions.turns import claim_turn, fail_session_launch, finish_turn
from kandev.domain.tasks.service import CreateTask
from kandev.models import Message, WorkflowStep
from kandev.models.enums import TaskState
from tests.support.workflows import steps_by_name


async def claimed_turn(services: Any, task_id: str, prompt: str = "work") -> tuple[str, str]:
    """(session id, turn id) of the task's first turn, claimed as a worker would."""
    session = (await services.sessions.start_task(task_id, prompt, None)).session
    claimed = await claim_turn(services.ctx, session.id, worker_name="t", job_id=None, lease_seconds=60)
    assert claimed is not None
    return session.id, claimed.turn_id


async def next_turn(services: Any, task_id: str, session_id: str, prompt: str) -> str:
    await services.sessions.send_message(task_id, prompt)
    claimed = await claim_turn(services.ctx, session_id, worker_name="t", job_id=None, lease_seconds=60)
    assert claimed is not None
    return claimed.turn_id


async def last_turn_error(services: Any, task_id: str) -> Any:
    [turn] = await services.lookups.last_turn_errors([task_id])
    return turn


async def test_a_child_that_fails_to_launch_fails_and_its_dependents_and_parent_hear_of_it(services, db, workspace_id):
    steps = await steps_by_name(services, workspace_id)
    async with db.transaction() as s:
        await s.execute(
            update(WorkflowStep)
            .where(WorkflowStep.id == steps["Review"].id)
            .values(events={"on_children_completed": [{"type": "move_to_next"}]})
        )
    parent = (
        await services.tasks.create(
            CreateTask(workspace_id=workspace_id, title="Parent", workflow_step_id=steps["Review"].id)
        )
    ).task
    child = (
        await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Child", parent_id=parent.id))
    ).task
    dependent = (
        await services.tasks.create(CreateTask(workspace_id=workspace_id, title="After", blocked_by=[child.id]))
    ).task
    assert dependent.state == "BLOCKED" and "waiting for" in (dependent.block_reason or "")
    session_id, turn_id = await claimed_turn(services, child.id)

    await fail_session_launch(services.ctx, turn_id, "the agent can't start: command 'nope' is not on PATH")

    assert (await services.sessions.get(session_id)).state == "FAILED"
    assert (await services.tasks.get(child.id)).state == TaskState.FAILED
    after = await services.tasks.get(dependent.id)
    assert after.state == "BLOCKED" and f"'Child' ({child.id}) failed" in (after.block_reason or "")
    moved = await services.tasks.get(parent.id)
    assert moved.workflow_step_id == steps["Done"].id, "the parent's children-completed event did not fire"
    error = await last_turn_error(services, child.id)
    assert error is not None and "not on PATH" in error.error


async def test_a_failed_turn_leaves_the_task_waiting_with_its_error_until_a_later_turn_completes(
    services, workspace_id
):
    task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Flaky"))).task
    session_id, turn_id = await claimed_turn(services, task.id)
    assert await last_turn_error(services, task.id) is None

    await finish_turn(services.ctx, turn_id, stop_reason="failed", error="agent error: boom")

    assert (await services.sessions.get(session_id)).state == "WAITING_FOR_INPUT"
    assert (await services.tasks.get(task.id)).state == "WAITING_FOR_INPUT"
    error = await last_turn_error(services, task.id)
    assert error is not None and error.error == "agent error: boom" and error.stop_reason == "failed"
    assert error.ended_at is not None

    cancelled = await next_turn(services, task.id, session_id, "again")
    await finish_turn(services.ctx, cancelled, stop_reason="cancelled")
    assert (await last_turn_error(services, task.id)) is not None, "a cancelled turn does not clear the error"

    good = await next_turn(services, task.id, session_id, "once more")
    await finish_turn(services.ctx, good, stop_reason="end_turn")
    assert await last_turn_error(services, task.id) is None
    assert (await services.tasks.get(task.id)).state == "REVIEW"


async def test_stopping_and_interrupting_a_running_turn_leave_a_system_message_naming_who(services, db, workspace_id):
    task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Busy"))).task
    session_id, _ = await claimed_turn(services, task.id)
    from kandev.domain.sessions.service import DeliveryMode

    await services.sessions.send_message(task.id, "change of plan", delivery_mode=DeliveryMode.INTERRUPT)
    await services.sessions.stop_task(task.id)  # the turn is already flagged: no second note for it
    async with db.read() as s:
        notes = list(
            await s.scalars(
                select(Message.text)
                .where(Message.session_id == session_id, Message.kind == "SYSTEM")
                .order_by(Message.seq)
            )
        )
    actor = services.ctx.principal.actor
    assert notes == [f"Interrupted by {actor}: the running turn was cancelled for a new prompt."]


async def test_stopping_a_running_turn_leaves_a_system_message_naming_who(services, db, workspace_id):
    task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Busy"))).task
    session_id, _ = await claimed_turn(services, task.id)
    await services.sessions.stop_task(task.id)
    async with db.read() as s:
        notes = list(
            await s.scalars(select(Message.text).where(Message.session_id == session_id, Message.kind == "SYSTEM"))
        )
    actor = services.ctx.principal.actor
    assert notes == [f"Stopped by {actor}: the running turn was cancelled and the session ended."]
