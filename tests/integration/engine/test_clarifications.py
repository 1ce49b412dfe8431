"""Questions to the operator: the hard pause when no answer comes, resuming without turn-start
triggers, and the barrier that a current-turn question puts on every turn-complete path."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import select

from kandev.domain.sessions.clarifications import Answer
from kandev.domain.tasks.service import CreateTask
from kandev.models import Clarification, QueuedPrompt, Turn
from kandev.models.base import new_id, utcnow
from tests.integration.engine.conftest import messages
from tests.support.users import as_agent
from tests.support.watch import watching
from tests.support.workers import running_worker
from tests.support.workflows import set_events, steps_by_name

pytestmark = pytest.mark.slow


async def test_an_unanswered_question_pauses_the_turn_and_the_answer_resumes_without_turn_start_triggers(
    services, settings, bus, db, workspace_id
):
    steps = await steps_by_name(services, workspace_id)
    task = (
        await services.tasks.create(
            CreateTask(workspace_id=workspace_id, title="Ask first", workflow_step_id=steps["Review"].id)
        )
    ).task
    with running_worker(settings):
        delivery = await services.sessions.start_task(task.id, "/say thinking\n/sleep 30", None)
        session_id = delivery.session.id
        agent = as_agent(services, session_id, task.id)
        async with watching(bus, db, session_id) as watch:
            await watch.message(None, "thinking")
            question = await agent.clarifications.ask(
                [{"prompt": "Postgres or SQLite?", "options": [{"label": "Postgres"}, {"label": "SQLite"}]}],
                "storage",
            )
            assert await services.lookups.pending_actions([task.id]) == ["CLARIFICATION"]
            waited = await agent.clarifications.wait_for_answer(question.id)  # what the tool waits on
            assert waited.status == "waiting_for_user" and waited.row.state == "PENDING"
            ended = await watch.next_turn_end()
            assert ended.state == "CANCELLED"
            assert (await services.sessions.get(session_id)).state == "WAITING_FOR_INPUT"
            assert (await services.tasks.get(task.id)).workflow_step_id == steps["Review"].id  # no stop triggers ran
            # From now on a normal turn start in Review moves the task on; the answer must not trigger it.
            await set_events(db, steps["Review"].id, {"on_turn_start": [{"type": "move_to_next"}]})
            await services.clarifications.answer(question.id, [Answer("q1", ["Postgres"], "with pgvector")])
            resumed = await watch.next_turn_end()
            assert resumed.state == "COMPLETED"
            assert (await services.tasks.get(task.id)).workflow_step_id == steps["Review"].id
            await services.sessions.send_message(task.id, "/say next")
            await watch.next_turn_end()
    assert (await services.tasks.get(task.id)).workflow_step_id == steps["Done"].id  # a normal turn start did move
    users = [m.text for m in await messages(db, session_id, "USER")]
    assert users[1].startswith("The user answered your question(s):") and "Postgres; with pgvector" in users[1]
    async with db.read() as s:
        sources = list(
            await s.scalars(
                select(QueuedPrompt.source).where(QueuedPrompt.session_id == session_id).order_by(QueuedPrompt.seq)
            )
        )
    assert sources == ["user", "clarification_answer", "user"]


async def test_a_question_of_the_current_turn_blocks_advancing_even_with_a_signal(
    services, settings, bus, db, workspace_id
):
    with running_worker(settings):
        task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Gated"))).task
        delivery = await services.sessions.start_task(task.id, "/say asking\n/sleep 3", None)
        session_id = delivery.session.id
        agent = as_agent(services, session_id, task.id)
        async with watching(bus, db, session_id) as watch:
            await watch.message(None, "asking")
            question = await agent.clarifications.ask([{"prompt": "Ship it?"}], None)
            assert (await agent.signals.step_complete("done")).accepted
            await watch.next_turn_end()
    steps = await steps_by_name(services, workspace_id)
    assert (await services.tasks.get(task.id)).workflow_step_id == steps["In Progress"].id
    assert await services.lookups.pending_actions([task.id]) == ["CLARIFICATION"]
    await services.clarifications.reject(question.id)
    assert question.id


async def test_a_pending_question_of_an_older_turn_does_not_block(services, settings, bus, db, workspace_id):
    with running_worker(settings):
        task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Gated"))).task
        delivery = await services.sessions.start_task(task.id, "/say first", None)
        session_id = delivery.session.id
        async with watching(bus, db, session_id) as watch:
            await watch.next_turn_end()
            await services.sessions.send_message(task.id, "/say second\n/sleep 1")
            await watch.message(None, "second")
            # A question still pending from the first turn while the second one runs:
            async with db.transaction() as s:
                first_turn = await s.scalar(select(Turn.id).where(Turn.session_id == session_id, Turn.seq == 1))
                s.add(
                    Clarification(
                        id=new_id(),
                        session_id=session_id,
                        task_id=task.id,
                        turn_id=first_turn,
                        questions=[{"id": "q1", "prompt": "old"}],
                        state="PENDING",
                        created_at=utcnow(),
                    )
                )
            assert (await as_agent(services, session_id, task.id).signals.step_complete("done")).accepted
            await watch.next_turn_end()
    steps = await steps_by_name(services, workspace_id)
    assert (await services.tasks.get(task.id)).workflow_step_id == steps["Review"].id


async def test_waiting_for_an_answer_returns_the_answer_once_the_user_gives_it(
    services, settings, bus, db, workspace_id
):
    task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Ask and wait"))).task
    with running_worker(settings):
        delivery = await services.sessions.start_task(task.id, "/say thinking\n/sleep 30", None)
        agent = as_agent(services, delivery.session.id, task.id)
        async with watching(bus, db, delivery.session.id) as watch:
            await watch.message(None, "thinking")
            question = await agent.clarifications.ask([{"prompt": "Which database?"}], "storage")
            waiting = asyncio.create_task(agent.clarifications.wait_for_answer(question.id))
            await services.clarifications.answer(question.id, [Answer("q1", [], "Postgres")])
            waited = await asyncio.wait_for(waiting, 30)
    assert waited.status == "answered" and waited.row.id == question.id
    assert waited.row.answers == [{"question_id": "q1", "selected_options": [], "custom_text": "Postgres"}]
    async with db.read() as s:
        assert (await s.get(Clarification, question.id)).detached is not True  # answered in time: no pause
