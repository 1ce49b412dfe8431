"""A parent question outlives neither its asker nor its parent: when the parent goes away the child is told to
proceed; only operator input and the parent's messages supersede it, a peer's message waits behind it."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from kandev.domain.errors import ConflictError
from kandev.domain.sessions.turns import claim_turn, fail_session_launch, finish_turn
from kandev.domain.tasks.service import CreateTask
from kandev.models import ParentQuestion
from kandev.models.enums import TaskState
from tests.integration.engine.conftest import messages
from tests.integration.engine.test_parent_questions import QUESTIONS, family, prompts
from tests.support.users import as_agent


async def question_state(db: Any, question_id: str) -> str:
    async with db.read() as s:
        return await s.scalar(select(ParentQuestion.state).where(ParentQuestion.id == question_id))


async def claim(services: Any, session_id: str) -> Any:
    return await claim_turn(services.ctx, session_id, worker_name="t", job_id=None, lease_seconds=60)


async def asked_and_waiting(services: Any, workspace_id: str) -> tuple[dict[str, Any], str]:
    """A family whose child asked its parent and ended its turn: the child waits behind the gate."""
    f = await family(services, workspace_id)
    asked = await f["child_agent"].parent_questions.ask(QUESTIONS, "Blocks the client code")
    await finish_turn(services.ctx, f["turn"], stop_reason="end_turn")
    assert await claim(services, f["child_session"].id) is None
    return f, asked.question.id


async def end_parent(services: Any, f: dict[str, Any], how: str) -> None:
    parent_id = f["parent"].id
    if how == "archived":
        await services.tasks.archive(parent_id)
    elif how == "deleted":
        await services.tasks.delete(parent_id)
    elif how == "cancelled":
        await services.tasks.update(parent_id, state=TaskState.CANCELLED)
    elif how == "stopped":  # its last (only) session is cancelled
        await services.sessions.stop_task(parent_id)
    elif how == "launch_failed":  # its last (only) session fails
        claimed = await claim(services, f["parent_session"].id)
        assert claimed is not None
        await fail_session_launch(services.ctx, claimed.turn_id, "agent binary missing")


@pytest.mark.parametrize("how", ["archived", "deleted", "cancelled", "stopped", "launch_failed"])
async def test_when_the_parent_goes_away_the_question_is_stale_and_the_child_is_told_to_proceed(
    services, db, workspace_id, how
):
    f, question_id = await asked_and_waiting(services, workspace_id)
    await end_parent(services, f, how)
    assert await question_state(db, question_id) == "STALE"
    assert await services.lookups.pending_actions([f["child"].id]) == ["NONE"]
    [notice] = await prompts(db, f["child_session"].id, "parent_stale")
    assert question_id in notice.text and "will not be answered" in notice.text and "autopilot" in notice.text
    # The gate lifted: the notice starts the child's next turn, and it reads as SYSTEM in the transcript.
    turn = await claim(services, f["child_session"].id)
    assert turn is not None and (turn.prompt_source, turn.prompt_text) == ("parent_stale", notice.text)
    [shown] = [m for m in await messages(db, f["child_session"].id, "SYSTEM") if m.turn_id == turn.turn_id]
    assert shown.text == notice.text
    with pytest.raises(ConflictError):
        await f["parent_agent"].sessions.send_message(f["child"].id, "late", reply_to_question_id=question_id)


async def test_the_parent_keeping_another_live_session_keeps_the_question_pending(services, db, workspace_id):
    f, question_id = await asked_and_waiting(services, workspace_id)
    await services.sessions.send_message(f["parent"].id, "keep going")  # still queued on the parent's session
    from kandev.domain.sessions.service import spawn_session

    await spawn_session(f["parent_agent"].ctx, None, "second", None, None)
    claimed = await claim(services, f["parent_session"].id)
    await fail_session_launch(services.ctx, claimed.turn_id, "boom")
    assert await question_state(db, question_id) == "PENDING"
    assert await prompts(db, f["child_session"].id, "parent_stale") == []


async def test_a_peer_message_queues_behind_the_gate_and_the_question_stays_pending(services, db, workspace_id):
    f, question_id = await asked_and_waiting(services, workspace_id)
    peer = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Peer"))).task
    peer_session = (await services.sessions.start_task(peer.id, "x", None)).session
    await as_agent(services, peer_session.id, peer.id).sessions.send_message(f["child"].id, "from a peer")
    assert await question_state(db, question_id) == "PENDING"
    assert await claim(services, f["child_session"].id) is None  # held
    await f["parent_agent"].sessions.send_message(f["child"].id, "Use v2", reply_to_question_id=question_id)
    first = await claim(services, f["child_session"].id)
    assert first is not None and first.prompt_source == "parent_answer"
    await finish_turn(services.ctx, first.turn_id, stop_reason="end_turn")
    second = await claim(services, f["child_session"].id)
    assert second is not None and second.prompt_text == "from a peer"


@pytest.mark.parametrize("sender", ["operator", "parent"])
async def test_operator_input_and_the_parent_s_message_supersede_the_question(services, db, workspace_id, sender):
    f, question_id = await asked_and_waiting(services, workspace_id)
    who = services if sender == "operator" else f["parent_agent"]
    await who.sessions.send_message(f["child"].id, "change of plan")
    assert await question_state(db, question_id) == "SUPERSEDED"
    turn = await claim(services, f["child_session"].id)
    assert turn is not None and turn.prompt_text == "change of plan"
