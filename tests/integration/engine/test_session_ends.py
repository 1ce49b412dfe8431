"""How sessions end, against the domain services: a stop cancels only what is live, and a task's
sessions end when it enters its final step."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from kandev.domain.errors import ConflictError
from kandev.domain.sessions.turns import claim_turn, finish_turn
from kandev.domain.workflow.service import final_step_of
from kandev.models import Clarification, Message, QueuedPrompt, Session, SessionToken, Task, Turn
from kandev.models.base import new_id, utcnow
from kandev.models.enums import TaskState
from tests.support.factories import started_task
from tests.support.session_tokens import launch_token
from tests.support.users import as_agent


async def running(services: Any, workspace_id: str, **fields: Any) -> tuple[str, str, str]:
    """A task whose first turn a worker has claimed (so it is RUNNING) and whose agent holds a token."""
    task_id, session_id = await started_task(services, workspace_id, "work", **fields)
    claimed = await claim_turn(services.ctx, session_id, worker_name="test", job_id=None, lease_seconds=60)
    assert claimed is not None
    await launch_token(services.ctx, session_id)
    return task_id, session_id, claimed.turn_id


async def idle(services: Any, workspace_id: str) -> tuple[str, str]:
    """A task whose only turn has ended: nothing runs, nothing is queued, nothing waits."""
    task_id, session_id, turn_id = await running(services, workspace_id)
    await finish_turn(services.ctx, turn_id, stop_reason="end_turn")
    return task_id, session_id


async def snapshot(db: Any, task_id: str, session_id: str) -> dict[str, Any]:
    async with db.read() as s:
        task = await s.get(Task, task_id)
        session = await s.get(Session, session_id)
        tokens = list(await s.scalars(select(SessionToken.revoked_at).where(SessionToken.session_id == session_id)))
        turns = list(await s.scalars(select(Turn.cancel_requested_at).where(Turn.session_id == session_id)))
    assert task is not None and session is not None
    return {
        "task": (task.state, task.workflow_step_id, task.updated_at),
        "session": (session.state, session.ended_at, session.updated_at),
        "tokens": tokens,
        "cancel_requests": turns,
    }


async def queued_texts(db: Any, session_id: str) -> list[tuple[str, str]]:
    async with db.read() as s:
        rows = await s.scalars(
            select(QueuedPrompt).where(QueuedPrompt.session_id == session_id).order_by(QueuedPrompt.seq)
        )
        return [(p.text, p.state) for p in rows]


# -- stop (item 4) -----------------------------------------------------------------------------


async def test_stopping_a_task_with_nothing_live_answers_not_running_and_changes_nothing(services, db, workspace_id):
    task_id, session_id = await idle(services, workspace_id)
    before = await snapshot(db, task_id, session_id)
    assert before["session"][0] == "WAITING_FOR_INPUT" and before["tokens"] == [None]
    result = await services.sessions.stop_task(task_id)
    assert result.status == "not_running" and result.stopped_sessions == []
    assert await snapshot(db, task_id, session_id) == before


async def test_stopping_a_running_turn_cancels_it_and_sends_the_task_to_review_on_the_same_step(
    services, db, workspace_id
):
    task_id, session_id, turn_id = await running(services, workspace_id)
    before = await snapshot(db, task_id, session_id)
    assert before["task"][0] == "IN_PROGRESS"
    result = await services.sessions.stop_task(task_id)
    assert result.status == "stopped" and [s.id for s in result.stopped_sessions] == [session_id]
    after = await snapshot(db, task_id, session_id)
    assert after["task"][:2] == ("REVIEW", before["task"][1])
    assert after["session"][0] == "CANCELLED"
    assert after["cancel_requests"][0] is not None  # the worker's flag: the turn is told to stop
    assert all(revoked is not None for revoked in after["tokens"])


async def test_a_stopped_archived_task_keeps_its_state(services, db, workspace_id):
    task_id, session_id, _ = await running(services, workspace_id)
    async with services.ctx.unit_of_work() as uow:
        (await uow.db.get(Task, task_id)).archived_at = utcnow()  # archived while its turn runs
    result = await services.sessions.stop_task(task_id)
    assert result.status == "stopped"
    assert (await snapshot(db, task_id, session_id))["task"][0] == "IN_PROGRESS"


async def test_a_wait_on_a_question_is_live_and_a_stop_cancels_the_question(services, db, workspace_id):
    task_id, session_id = await idle(services, workspace_id)
    async with services.ctx.unit_of_work() as uow:
        question = Clarification(
            id=new_id(), session_id=session_id, task_id=task_id, questions=[], state="PENDING", detached=True
        )
        uow.db.add(question)
    result = await services.sessions.stop_task(task_id)
    assert result.status == "stopped"
    async with db.read() as s:
        assert (await s.get(Clarification, question.id)).state == "CANCELLED"
        assert (await s.get(Session, session_id)).state == "CANCELLED"


async def test_prompts_queued_on_a_stopped_session_move_in_order_to_the_session_the_next_start_opens(
    services, db, workspace_id
):
    task_id, first = await started_task(services, workspace_id, "one")
    for text in ("two", "three"):
        await services.sessions.send_message(task_id, text)
    assert (await services.sessions.stop_task(task_id)).status == "stopped"
    assert await queued_texts(db, first) == [("one", "QUEUED"), ("two", "QUEUED"), ("three", "QUEUED")]
    second = (await services.sessions.start_task(task_id, "four", None)).session.id
    assert second != first
    assert await queued_texts(db, first) == []
    expected = [("one", "QUEUED"), ("two", "QUEUED"), ("three", "QUEUED"), ("four", "QUEUED")]
    assert await queued_texts(db, second) == expected


# -- the final step (item 5) -------------------------------------------------------------------


async def final_step_id(services: Any, task_id: str) -> str:
    task = await services.tasks.get(task_id)
    return final_step_of(await services.workflows.steps(task.workflow_id)).id


async def system_notes(db: Any, session_id: str) -> list[Message]:
    async with db.read() as s:
        rows = await s.scalars(
            select(Message).where(Message.session_id == session_id, Message.kind == "SYSTEM").order_by(Message.seq)
        )
        return list(rows)


@pytest.mark.parametrize("how", ["move", "mark_complete"])
async def test_entering_the_final_step_cancels_the_running_turn_and_completes_the_sessions(
    how, services, db, workspace_id
):
    task_id, session_id, turn_id = await running(services, workspace_id)
    await services.sessions.send_message(task_id, "still queued")
    if how == "move":
        await services.tasks.move(task_id, await final_step_id(services, task_id))
    else:
        await services.tasks.update(task_id, state=TaskState.COMPLETED)
    after = await snapshot(db, task_id, session_id)
    assert after["task"][0] == "COMPLETED" and after["session"][0] == "COMPLETED"
    assert after["cancel_requests"] == [after["cancel_requests"][0]] and after["cancel_requests"][0] is not None
    assert all(revoked is not None for revoked in after["tokens"])
    [note] = await system_notes(db, session_id)
    assert note.turn_id == turn_id and "final step" in note.text and "cancelled" in note.text
    assert await queued_texts(db, session_id) == [("work", "CLAIMED"), ("still queued", "CANCELLED")]
    # The worker then ends the turn as cancelled; the session and the task stay completed.
    await finish_turn(services.ctx, turn_id, stop_reason="cancelled")
    async with db.read() as s:
        turn = await s.get(Turn, turn_id)
        assert (turn.state, turn.stop_reason) == ("CANCELLED", "cancelled")
    assert (await snapshot(db, task_id, session_id))["task"][0] == "COMPLETED"
    assert (await snapshot(db, task_id, session_id))["session"][0] == "COMPLETED"


async def test_a_message_to_a_completed_task_names_the_way_to_a_new_session_on_the_callers_surface(
    services, workspace_id
):
    parent_id, parent_session = await started_task(services, workspace_id, "work")
    task_id, session_id = await idle(services, workspace_id)
    await services.tasks.move(task_id, await final_step_id(services, task_id))
    with pytest.raises(ConflictError, match="startTask") as operator:
        await services.sessions.send_message(task_id, "more?")
    assert "spawn_session_kandev" not in str(operator.value)
    with pytest.raises(ConflictError, match="startTask"):
        await services.sessions.send_message(task_id, "more?", session_id=session_id)
    agent = as_agent(services, parent_session, parent_id)
    with pytest.raises(ConflictError, match="spawn_session_kandev") as over_mcp:
        await agent.sessions.send_message(task_id, "more?")
    assert "startTask" not in str(over_mcp.value)
    with pytest.raises(ConflictError, match="spawn_session_kandev"):
        await agent.sessions.send_message(task_id, "more?", session_id=session_id)
