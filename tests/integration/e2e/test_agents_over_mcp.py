"""Scripted agents calling Kandev over MCP inside real turns: tools, completion signals, parent questions."""

from __future__ import annotations

import json
import time

import pytest
from sqlalchemy import select

from kandev.domain.tasks.service import CreateTask
from kandev.models import Message, QueuedPrompt, StepTransition
from tests.support.watch import watching

pytestmark = pytest.mark.slow


async def transcript(db, session_id, kind=None):
    async with db.read() as s:
        query = select(Message).where(Message.session_id == session_id).order_by(Message.seq)
        if kind:
            query = query.where(Message.kind == kind)
        return list(await s.scalars(query))


async def test_the_scripted_agents_tool_directive_calls_kandev_over_mcp(live, services, bus, db, workspace_id):
    task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Look around"))).task
    delivery = await services.sessions.start_task(task.id, "/tool list_tasks_kandev {}", None)
    async with watching(bus, db, delivery.session.id) as watch:
        await watch.next_turn_end()
    [call] = await transcript(db, delivery.session.id, "TOOL_CALL")
    assert call.data["status"] == "completed", call.data
    assert task.id in call.data["output"]  # the agent saw its own task in the listing
    tools = await services.sessions.mcp_tools(delivery.session.id)
    assert "step_complete_kandev" in tools and "ask_user_question_kandev" in tools


async def test_a_three_step_workflow_with_two_gated_steps_runs_to_the_end_on_agent_signals(
    live, services, bus, db, workspace_id
):
    from kandev.domain.workflow.service import add_workflow

    design = '/say designing\n/tool step_complete_kandev {"summary": "designed"}'
    build = '/say building\n/tool step_complete_kandev {"summary": "built"}'
    signal_gate = {"on_turn_complete": [{"type": "move_to_next"}]}
    async with db.transaction() as session:
        workflow = add_workflow(
            session,
            workspace_id,
            "Two gates",
            [
                {
                    "name": "Design",
                    "is_start_step": True,
                    "prompt": design,
                    "auto_advance_requires_signal": True,
                    "events": {"on_enter": [{"type": "auto_start_agent"}], **signal_gate},
                },
                {
                    "name": "Build",
                    "prompt": build,
                    "auto_advance_requires_signal": True,
                    "events": {"on_enter": [{"type": "auto_start_agent"}], **signal_gate},
                },
                {"name": "Shipped", "is_final_step": True},
            ],
        )
    task = (
        await services.tasks.create(
            CreateTask(workspace_id=workspace_id, title="Feature", workflow_id=workflow.id, start_agent=False)
        )
    ).task
    delivery = await services.sessions.start_task(task.id, design, None)
    async with watching(bus, db, delivery.session.id) as watch:
        await watch.next_turn_end(timeout=60)
        await watch.next_turn_end(timeout=60)
    done = await services.tasks.get(task.id)
    assert done.state == "COMPLETED"
    async with db.read() as s:
        moves = list(
            await s.scalars(
                select(StepTransition).where(StepTransition.task_id == task.id).order_by(StepTransition.created_at)
            )
        )
    assert [(m.trigger, m.details.get("signal_source"), m.details.get("signal_summary")) for m in moves] == [
        ("auto_complete", "agent", "designed"),
        ("auto_complete", "agent", "built"),
    ]


async def test_an_autopilot_child_asks_its_parent_and_resumes_with_the_answer(live, services, bus, db, workspace_id):
    parent = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Parent"))).task
    parent_session = (await services.sessions.start_task(parent.id, "/on-question Use v2, it is stable", None)).session
    async with watching(bus, db, parent_session.id) as watch:
        await watch.next_turn_end()
    ask = {
        "questions": [{"prompt": "v1 or v2?", "options": [{"label": "v1"}, {"label": "v2"}]}],
        "context": "API choice",
    }
    child = (
        await services.tasks.create(
            CreateTask(
                workspace_id=workspace_id,
                title="Child",
                parent_id=parent.id,
                autopilot=True,
                start_agent=False,
            )
        )
    ).task
    asked_at = time.time()
    child_session = (
        await services.sessions.start_task(child.id, f"/tool ask_parent_question_kandev {json.dumps(ask)}", None)
    ).session
    async with watching(bus, db, child_session.id) as watch:
        await watch.next_turn_end(timeout=60)  # the asking turn
        await watch.next_turn_end(timeout=60)  # the turn that received the answer
    [question] = await services.parent_questions.list(child.id)
    assert question.state == "ANSWERED" and question.answer == "Use v2, it is stable"
    async with db.read() as s:
        parent_prompts = list(
            await s.scalars(
                select(QueuedPrompt).where(
                    QueuedPrompt.session_id == parent_session.id, QueuedPrompt.source == "parent_question"
                )
            )
        )
        answers = list(
            await s.scalars(
                select(QueuedPrompt).where(
                    QueuedPrompt.session_id == child_session.id, QueuedPrompt.source == "parent_answer"
                )
            )
        )
    assert len(parent_prompts) == 1 and len(answers) == 1
    assert parent_prompts[0].created_at.timestamp() - asked_at < 30
    child_users = [m.text for m in await transcript(db, child_session.id, "USER")]
    assert child_users[-1].endswith("Use v2, it is stable")
    assert await services.lookups.pending_actions([child.id]) != ["CLARIFICATION"]
