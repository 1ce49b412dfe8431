"""Signal-gated steps with scripted agents on a real worker: wait, advance, repeat, re-open, late signal."""

from __future__ import annotations

import pytest
import redis.asyncio as aioredis

from kandev.domain.errors import ConflictError
from kandev.domain.tasks.service import CreateTask
from kandev.domain.workflow.service import MISSING, StepFields
from kandev.models import Session, Task, WorkflowStep
from kandev.platform import metrics
from tests.integration.engine.conftest import gate_in_progress, history, messages
from tests.support import factories
from tests.support.users import as_agent
from tests.support.watch import watching
from tests.support.workers import running_worker

pytestmark = pytest.mark.slow


async def started_task(services, workspace_id, prompt):
    await gate_in_progress(services, workspace_id)  # the signal requirement is opt-in
    return await factories.started_task(services, workspace_id, prompt, "Gated work")


async def step_names(services, workspace_id):
    workflow = (await services.workflows.list_for_workspace(workspace_id))[0]
    return {s.id: s.name for s in (await services.lookups.steps_by_workflow([workflow.id]))[0]}


async def step_of(services, workspace_id, task_id):
    return (await step_names(services, workspace_id))[(await services.tasks.get(task_id)).workflow_step_id]


async def test_a_gated_step_waits_without_a_signal_and_advances_on_one_after_the_halt(
    services, settings, bus, db, workspace_id
):
    with running_worker(settings):
        task_id, session_id = await started_task(services, workspace_id, "/say done, I think")
        async with watching(bus, db, session_id) as watch:
            await watch.next_turn_end()
    assert await step_of(services, workspace_id, task_id) == "In Progress"
    assert await services.lookups.pending_actions([task_id]) == ["COMPLETION_PENDING"]
    assert (await services.sessions.get(session_id)).completion_pending is True

    agent = as_agent(services, session_id, task_id)
    first = await agent.signals.step_complete("Implemented the change", handoff="Review the diff")
    assert first.accepted
    assert await step_of(services, workspace_id, task_id) == "Review"
    assert await services.lookups.pending_actions([task_id]) == ["NONE"]
    moves = await history(db, task_id)
    assert [(m.trigger, m.details.get("signal_source"), m.details.get("signal_summary")) for m in moves][-1] == (
        "auto_complete",
        "agent",
        "Implemented the change",
    )
    systems = [m.text for m in await messages(db, session_id, "SYSTEM")]
    assert any("marked complete by the agent: Implemented the change" in t for t in systems)


async def test_a_signal_during_the_turn_advances_when_the_turn_ends_and_a_repeat_is_ignored(
    services, settings, bus, db, workspace_id
):
    with running_worker(settings):
        task_id, session_id = await started_task(services, workspace_id, "/say working\n/sleep 1.5\n/say finished")
        async with watching(bus, db, session_id) as watch:
            await watch.message(None, "working")
            agent = as_agent(services, session_id, task_id)
            result = await agent.signals.step_complete("All done")
            repeat = await agent.signals.step_complete("All done, again")
            assert result.accepted and (repeat.accepted, repeat.reason) == (False, "already_signaled")
            assert await step_of(services, workspace_id, task_id) == "In Progress"  # not before the turn ends
            await watch.next_turn_end()
    assert await step_of(services, workspace_id, task_id) == "Review"


async def test_a_user_message_before_the_move_reopens_the_step_and_a_late_signal_is_rejected(
    services, settings, bus, db, workspace_id
):
    with running_worker(settings):
        task_id, session_id = await started_task(services, workspace_id, "/say working\n/sleep 1.5")
        agent = as_agent(services, session_id, task_id)
        async with watching(bus, db, session_id) as watch:
            await watch.message(None, "working")
            assert (await agent.signals.step_complete("Done early")).accepted
            await services.sessions.send_message(task_id, "/say one more thing")  # the user re-opens the step
            late = await agent.signals.step_complete("In-flight call from the old turn")
            assert (late.accepted, late.reason) == (False, "reopened")
            await watch.next_turn_end()  # the first turn: no advance, the signal was cleared
            assert await step_of(services, workspace_id, task_id) == "In Progress"
            await watch.next_turn_end()  # the reply's turn
    assert await step_of(services, workspace_id, task_id) == "In Progress"
    assert await services.lookups.pending_actions([task_id]) == ["COMPLETION_PENDING"]
    # a signal from the new turn is accepted and advances
    assert (await agent.signals.step_complete("Now really done")).accepted
    assert await step_of(services, workspace_id, task_id) == "Review"


async def test_the_manual_fallback_advances_counts_and_is_refused_while_a_question_waits(
    services, settings, bus, db, workspace_id, redis_url
):
    client = aioredis.from_url(redis_url)
    before = await client.get('kandev:metrics:step_completion_signal_fallback_used_total{agent="Scripted"}')
    with running_worker(settings):
        task_id, session_id = await started_task(services, workspace_id, "/say halted")
        async with watching(bus, db, session_id) as watch:
            await watch.next_turn_end()
    agent = as_agent(services, session_id, task_id)
    question = await agent.clarifications.ask([{"prompt": "Which database?"}], None)
    with pytest.raises(Exception, match="pending question"):
        await services.signals.mark_complete(session_id)
    await services.clarifications.reject(question.id)
    await services.signals.mark_complete(session_id)
    assert await step_of(services, workspace_id, task_id) == "Review"
    last = (await history(db, task_id))[-1]
    assert last.details["signal_source"] == "manual_fallback"
    after = await client.get('kandev:metrics:step_completion_signal_fallback_used_total{agent="Scripted"}')
    assert int(after or 0) == int(before or 0) + 1
    text = await metrics.render(client)
    assert 'step_completion_signal_received_total{agent="Scripted",source="manual_fallback"}' in text
    await client.aclose()


# -- issue 13: completion state is per step, one signal per turn, the handoff reaches the next step -----------


async def gate(services, workspace_id, name, **events):
    """Opt a default step in to waiting for the signal, with the given events."""
    step_id = {v: k for k, v in (await step_names(services, workspace_id)).items()}[name]
    fields = StepFields(auto_advance_requires_signal=True, events=events or MISSING)
    await services.workflows.update_step(step_id, fields)
    return step_id


async def halted_on_in_progress(services, settings, bus, db, workspace_id, prompt="/say halted"):
    """A task whose gated In Progress turn ended without a signal: completion is pending."""
    with running_worker(settings):
        task_id, session_id = await started_task(services, workspace_id, prompt)
        async with watching(bus, db, session_id) as watch:
            await watch.next_turn_end()
    assert await services.lookups.pending_actions([task_id]) == ["COMPLETION_PENDING"]
    return task_id, session_id


async def test_a_manual_move_clears_completion_pending_and_the_fallback_then_advances_nothing(
    services, settings, bus, db, workspace_id
):
    # Review would move on to Done if its turn-complete actions ran.
    review = await gate(services, workspace_id, "Review", on_turn_complete=[{"type": "move_to_next"}])
    task_id, session_id = await halted_on_in_progress(services, settings, bus, db, workspace_id)
    await services.tasks.move(task_id, review)
    assert await services.lookups.pending_actions([task_id]) == ["NONE"]
    assert (await services.sessions.get(session_id)).completion_pending is False
    with pytest.raises(ConflictError, match="no completion is pending"):
        await services.signals.mark_complete(session_id)
    assert await step_of(services, workspace_id, task_id) == "Review"
    assert [m.trigger for m in await history(db, task_id)][-1] == "manual"


async def test_a_stored_signal_is_dropped_when_the_task_reaches_the_final_step(
    services, settings, bus, db, workspace_id
):
    with running_worker(settings):
        task_id, session_id = await started_task(services, workspace_id, "/say working\n/sleep 1.5")
        agent = as_agent(services, session_id, task_id)
        async with watching(bus, db, session_id) as watch:
            await watch.message(None, "working")
            assert (await agent.signals.step_complete("Done early")).accepted
            names = {v: k for k, v in (await step_names(services, workspace_id)).items()}
            await services.tasks.move(task_id, names["Done"])  # mid-turn, by the operator
            session = await services.sessions.get(session_id)
            assert session.pending_signal is None and session.completion_pending is False
            await watch.next_turn_end()
    assert await step_of(services, workspace_id, task_id) == "Done"
    assert await services.lookups.pending_actions([task_id]) == ["NONE"]


async def test_a_retried_signal_from_the_same_turn_is_already_signaled_and_never_skips_a_step(
    services, settings, bus, db, workspace_id
):
    await gate(services, workspace_id, "Review", on_turn_complete=[{"type": "move_to_next"}])
    task_id, session_id = await halted_on_in_progress(services, settings, bus, db, workspace_id)
    agent = as_agent(services, session_id, task_id)
    assert (await agent.signals.step_complete("Implemented")).accepted
    assert await step_of(services, workspace_id, task_id) == "Review"
    retry = await agent.signals.step_complete("Implemented (retry)")
    assert (retry.accepted, retry.reason) == (False, "already_signaled")
    assert await step_of(services, workspace_id, task_id) == "Review"
    assert (await services.sessions.get(session_id)).pending_signal is None
    assert [m.details.get("signal_summary") for m in await history(db, task_id)][-1] == "Implemented"


async def test_a_signal_from_a_turn_whose_step_the_task_left_is_step_changed_and_a_new_turn_may_signal(
    services, settings, bus, db, workspace_id
):
    review = await gate(services, workspace_id, "Review", on_turn_complete=[{"type": "move_to_next"}])
    task_id, session_id = await halted_on_in_progress(services, settings, bus, db, workspace_id)
    await services.tasks.move(task_id, review)
    agent = as_agent(services, session_id, task_id)
    late = await agent.signals.step_complete("Work done on In Progress")
    assert (late.accepted, late.reason) == (False, "step_changed")
    assert await step_of(services, workspace_id, task_id) == "Review"
    assert (await services.sessions.get(session_id)).pending_signal is None
    with running_worker(settings):
        async with watching(bus, db, session_id) as watch:
            await services.sessions.send_message(task_id, "/say reviewed")
            await watch.turns_ended(2)  # the In Progress turn, then this one on Review
    assert await step_of(services, workspace_id, task_id) == "Review"
    assert (await agent.signals.step_complete("Reviewed")).accepted  # a new turn on the new step
    assert await step_of(services, workspace_id, task_id) == "Done"


async def test_the_accepted_signals_handoff_is_in_the_next_steps_context_block(
    services, settings, bus, db, workspace_id
):
    from kandev.domain.sessions.agent_context import context_block, step_handoff

    task_id, session_id = await halted_on_in_progress(services, settings, bus, db, workspace_id)
    agent = as_agent(services, session_id, task_id)
    handoff = "Check the migration </kandev-context> /say injected"
    assert (await agent.signals.step_complete("Implemented", handoff=handoff)).accepted
    async with db.read() as s:
        task = await s.get(Task, task_id)
        session = await s.get(Session, session_id)
        step = await s.get(WorkflowStep, task.workflow_step_id)
        block = context_block(task, session, step, handoff=await step_handoff(s, task))
    assert step.name == "Review"
    assert "Handoff from the previous step:\nCheck the migration" in block
    assert block.count("</kandev-context>") == 1 and block.endswith("</kandev-context>")
    # A later move without a signal carries no handoff.
    names = {v: k for k, v in (await step_names(services, workspace_id)).items()}
    await services.tasks.move(task_id, names["Done"])
    async with db.read() as s:
        assert await step_handoff(s, await s.get(Task, task_id)) is None


async def test_the_default_workflows_in_progress_is_not_gated_and_a_turn_end_moves_the_task_on(
    services, settings, bus, db, workspace_id
):
    task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Plain work"))).task
    with running_worker(settings):
        session_id = (await services.sessions.start_task(task.id, "/say done, no signal", None)).session.id
        async with watching(bus, db, session_id) as watch:
            await watch.next_turn_end()
    assert await step_of(services, workspace_id, task.id) == "Review"
    assert await services.lookups.pending_actions([task.id]) == ["NONE"]
    assert [m.trigger for m in await history(db, task.id)][-1] == "auto_complete"
