"""The parent-question protocol against the domain services: ask, correlated reply, the gate, the
lifecycle and every rejection (the answer-versus-supersede race x200 is in tests/reliability)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlalchemy import func, select

from kandev.domain.errors import ConflictError, NotFoundError, PermissionDeniedError, ValidationError
from kandev.domain.sessions.turns import claim_turn, finish_turn
from kandev.domain.tasks.service import CreateTask
from kandev.models import ParentQuestion, QueuedPrompt
from tests.support.users import as_agent

QUESTIONS = [{"prompt": "Which API version?", "options": [{"label": "v1"}, {"label": "v2", "description": "new"}]}]


async def family(services: Any, workspace_id: str) -> dict[str, Any]:
    """A parent with a live session and an autopilot child whose turn is running."""
    parent = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Parent"))).task
    parent_session = (await services.sessions.start_task(parent.id, "plan", None)).session
    child = (
        await services.tasks.create(
            CreateTask(workspace_id=workspace_id, title="Child", parent_id=parent.id, autopilot=True)
        )
    ).task
    child_session = (await services.sessions.start_task(child.id, "build", None)).session
    claimed = await claim_turn(services.ctx, child_session.id, worker_name="test", job_id=None, lease_seconds=60)
    assert claimed is not None
    return {
        "parent": parent,
        "parent_session": parent_session,
        "child": child,
        "child_session": child_session,
        "turn": claimed.turn_id,
        "child_agent": as_agent(services, child_session.id, child.id),
        "parent_agent": as_agent(services, parent_session.id, parent.id),
    }


async def prompts(db: Any, session_id: str, source: str | None = None) -> list[QueuedPrompt]:
    async with db.read() as s:
        query = select(QueuedPrompt).where(QueuedPrompt.session_id == session_id).order_by(QueuedPrompt.seq)
        if source:
            query = query.where(QueuedPrompt.source == source)
        return list(await s.scalars(query))


async def test_asking_commits_the_question_and_queues_one_attributed_prompt_for_the_parent(services, db, workspace_id):
    f = await family(services, workspace_id)
    asked = await f["child_agent"].parent_questions.ask(QUESTIONS, "Blocks the client code")
    assert asked.parent_task_id == f["parent"].id and asked.question.state == "PENDING"
    [prompt] = await prompts(db, f["parent_session"].id, "parent_question")
    assert prompt.sender == {"kind": "child", "task_id": f["child"].id, "session_id": f["child_session"].id}
    for fragment in (
        f["child"].id,
        f["child_session"].id,
        asked.question.id,
        "Which API version?",
        'option "v2": new',
        "Blocks the client code",
    ):
        assert fragment in prompt.text
    call = json.loads(prompt.text.splitlines()[-1].removeprefix("message_task_kandev "))
    assert call == {
        "task_id": f["child"].id,
        "reply_to_question_id": asked.question.id,
        "prompt": "<your answer>",
    }
    assert await services.lookups.pending_actions([f["child"].id]) == ["CLARIFICATION"]
    again = await f["child_agent"].parent_questions.ask(QUESTIONS, "Blocks the client code")
    other = await f["child_agent"].parent_questions.ask([{"prompt": "Something else?"}], None)
    assert again.question.id == other.question.id == asked.question.id
    assert len(await prompts(db, f["parent_session"].id, "parent_question")) == 1


async def test_a_task_without_a_parent_gets_a_no_parent_error_and_nothing_is_stored(services, db, workspace_id):
    root = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Root", autopilot=True))).task
    session = (await services.sessions.start_task(root.id, "go", None)).session
    with pytest.raises(ValidationError, match="no parent"):
        await as_agent(services, session.id, root.id).parent_questions.ask(QUESTIONS, None)
    async with db.read() as s:
        assert await s.scalar(select(func.count()).select_from(ParentQuestion)) == 0


async def test_while_pending_queued_prompts_are_held_and_the_answer_is_admitted_first(services, db, workspace_id):
    f = await family(services, workspace_id)
    await services.sessions.send_message(f["child"].id, "an operator note queued before the question")
    asked = await f["child_agent"].parent_questions.ask(QUESTIONS, None)
    await finish_turn(services.ctx, f["turn"], stop_reason="end_turn")
    assert (await services.sessions.get(f["child_session"].id)).state == "WAITING_FOR_INPUT"
    assert await claim_turn(services.ctx, f["child_session"].id, worker_name="t", job_id=None, lease_seconds=60) is None
    delivery = await f["parent_agent"].sessions.send_message(
        f["child"].id, "Use v2", reply_to_question_id=asked.question.id
    )
    assert delivery.session.id == f["child_session"].id
    first = await claim_turn(services.ctx, f["child_session"].id, worker_name="t", job_id=None, lease_seconds=60)
    assert first is not None and first.prompt_source == "parent_answer" and "Use v2" in first.prompt_text
    await finish_turn(services.ctx, first.turn_id, stop_reason="end_turn")
    second = await claim_turn(services.ctx, f["child_session"].id, worker_name="t", job_id=None, lease_seconds=60)
    assert second is not None and second.prompt_text == "an operator note queued before the question"


async def test_a_retried_answer_returns_the_outcome_and_delivers_nothing_more(services, db, workspace_id):
    f = await family(services, workspace_id)
    asked = await f["child_agent"].parent_questions.ask(QUESTIONS, None)
    one = await f["parent_agent"].sessions.send_message(f["child"].id, "v1", reply_to_question_id=asked.question.id)
    two = await f["parent_agent"].sessions.send_message(f["child"].id, "v1", reply_to_question_id=asked.question.id)
    assert one.prompt.id == two.prompt.id
    assert len(await prompts(db, f["child_session"].id, "parent_answer")) == 1


@pytest.mark.parametrize(
    "who", ["operator", "other_agent", "wrong_child", "unknown_question", "not_pending", "wrong_session"]
)
async def test_every_bad_reply_is_rejected_without_side_effects(services, db, workspace_id, who):
    f = await family(services, workspace_id)
    asked = await f["child_agent"].parent_questions.ask(QUESTIONS, None)
    stranger = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Stranger"))).task
    stranger_session = (await services.sessions.start_task(stranger.id, "x", None)).session
    sender, task_id, question_id, session_id = f["parent_agent"], f["child"].id, asked.question.id, None
    expected: type[Exception] = PermissionDeniedError
    if who == "operator":
        sender = services
    elif who == "other_agent":
        sender = as_agent(services, stranger_session.id, stranger.id)
    elif who == "wrong_child":
        task_id, expected = stranger.id, NotFoundError
    elif who == "unknown_question":
        question_id, expected = "no-such-question", NotFoundError
    elif who == "wrong_session":
        session_id, expected = stranger_session.id, ConflictError
    elif who == "not_pending":
        await services.sessions.send_message(f["child"].id, "operator takes over")  # supersedes
        expected = ConflictError
    before = len(await prompts(db, f["child_session"].id))
    with pytest.raises(expected):
        await sender.sessions.send_message(task_id, "answer", reply_to_question_id=question_id, session_id=session_id)
    assert len(await prompts(db, f["child_session"].id)) == before
    async with db.read() as s:
        state = await s.scalar(select(ParentQuestion.state).where(ParentQuestion.id == asked.question.id))
    assert state == ("SUPERSEDED" if who == "not_pending" else "PENDING")


async def test_archiving_the_child_makes_its_question_stale_and_a_late_answer_cannot_resume_it(
    services, db, workspace_id
):
    f = await family(services, workspace_id)
    asked = await f["child_agent"].parent_questions.ask(QUESTIONS, None)
    await services.tasks.archive(f["child"].id)
    [row] = await services.parent_questions.list(f["child"].id)
    assert row.state == "STALE"
    with pytest.raises(ConflictError):
        await f["parent_agent"].sessions.send_message(f["child"].id, "too late", reply_to_question_id=asked.question.id)
    assert await prompts(db, f["child_session"].id, "parent_answer") == []
