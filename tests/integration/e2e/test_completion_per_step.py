"""Completion state per step with scripted agents signalling over MCP: moves drop it, a retried signal never
skips a step, and the handoff reaches the next step's agent (issue 13, items 1, 2 and 9)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kandev.domain.errors import ConflictError
from kandev.domain.tasks.service import CreateTask
from kandev.domain.workflow.service import add_workflow
from kandev.domain.workspace.agent_profiles import AgentProfileFields
from tests.support.watch import watching

pytestmark = pytest.mark.slow

GATE = {"on_turn_complete": [{"type": "move_to_next"}]}


def signal(summary: str, **more: str) -> str:
    return f"/tool step_complete_kandev {json.dumps({'summary': summary, **more})}"


async def gated_task(services, db, workspace_id, first_prompt: str = "", second_prompt: str = ""):
    """A task on Work (gated, auto-start) → Check (gated) → Shipped; its ids by step name."""
    async with db.transaction() as session:
        workflow = add_workflow(
            session,
            workspace_id,
            "Per step",
            [
                {
                    "name": "Work",
                    "is_start_step": True,
                    "prompt": first_prompt,
                    "auto_advance_requires_signal": True,
                    "events": {"on_enter": [{"type": "auto_start_agent"}], **GATE},
                },
                {
                    "name": "Check",
                    "prompt": second_prompt,
                    "auto_advance_requires_signal": True,
                    "events": {"on_enter": [{"type": "auto_start_agent"}], **GATE} if second_prompt else dict(GATE),
                },
                {"name": "Shipped", "is_final_step": True},
            ],
        )
    task = (
        await services.tasks.create(
            CreateTask(workspace_id=workspace_id, title="Per step", workflow_id=workflow.id, start_agent=False)
        )
    ).task
    steps = (await services.lookups.steps_by_workflow([workflow.id]))[0]
    return task.id, {s.name: s.id for s in steps}


async def step_name(services, steps: dict[str, str], task_id: str) -> str:
    by_id = {v: k for k, v in steps.items()}
    return by_id[(await services.tasks.get(task_id)).workflow_step_id]


async def signal_outputs(db, session_id: str) -> list[dict]:
    from tests.integration.e2e.test_agents_over_mcp import transcript

    calls = [m for m in await transcript(db, session_id, "TOOL_CALL") if "step_complete_kandev" in json.dumps(m.data)]
    return [m.data for m in calls if m.data.get("status") in ("completed", "failed")]


async def test_a_manual_move_drops_completion_pending_and_the_new_steps_turn_signals_for_itself(
    live, services, bus, db, workspace_id
):
    task_id, steps = await gated_task(services, db, workspace_id)
    session_id = (await services.sessions.start_task(task_id, "/say stopped without signalling", None)).session.id
    async with watching(bus, db, session_id) as watch:
        await watch.next_turn_end(timeout=60)
        assert await services.lookups.pending_actions([task_id]) == ["COMPLETION_PENDING"]
        await services.tasks.move(task_id, steps["Check"])
        assert await services.lookups.pending_actions([task_id]) == ["NONE"]
        with pytest.raises(ConflictError):
            await services.signals.mark_complete(session_id)  # nothing pending: Check's actions don't run
        assert await step_name(services, steps, task_id) == "Check"
        await services.sessions.send_message(task_id, f"/say checked\n{signal('checked')}")
        await watch.next_turn_end(timeout=60)
    assert await step_name(services, steps, task_id) == "Shipped"
    [output] = await signal_outputs(db, session_id)
    assert '"accepted": true' in json.dumps(output).replace("\\", "")


async def test_a_retried_signal_after_a_move_is_already_signaled_and_the_task_stays_on_the_new_step(
    live, services, bus, db, workspace_id
):
    task_id, steps = await gated_task(services, db, workspace_id)
    prompt = f"{signal('first')}\n/say signalled\n/sleep 2\n{signal('retry')}\n/say retried"
    session_id = (await services.sessions.start_task(task_id, prompt, None)).session.id
    async with watching(bus, db, session_id) as watch:
        await watch.message("AGENT", "signalled", timeout=60)
        await services.tasks.move(task_id, steps["Check"])  # the operator moves it while the turn runs
        await watch.next_turn_end(timeout=60)
    assert await step_name(services, steps, task_id) == "Check"
    assert await services.lookups.pending_actions([task_id]) == ["NONE"]
    first, retry = [json.dumps(o) for o in await signal_outputs(db, session_id)]
    assert "already_signaled" in retry and "already_signaled" not in first


async def test_a_signal_from_a_turn_whose_step_the_task_left_is_step_changed_and_skips_nothing(
    live, services, bus, db, workspace_id
):
    task_id, steps = await gated_task(services, db, workspace_id)
    prompt = f"/say working\n/sleep 2\n{signal('work done')}\n/say finished"
    session_id = (await services.sessions.start_task(task_id, prompt, None)).session.id
    async with watching(bus, db, session_id) as watch:
        await watch.message("AGENT", "working", timeout=60)
        await services.tasks.move(task_id, steps["Check"])
        await watch.next_turn_end(timeout=60)
    assert await step_name(services, steps, task_id) == "Check"
    [late] = [json.dumps(o) for o in await signal_outputs(db, session_id)]
    assert "step_changed" in late


async def test_the_handoff_of_an_accepted_signal_reaches_the_next_steps_agent_in_its_context(
    live, services, bus, db, workspace_id, tmp_path: Path
):
    log = tmp_path / "prompts.jsonl"
    for profile in await services.agent_profiles.list(workspace_id):
        env = {**(profile.env or {}), "KANDEV_SCRIPTED_LOG": str(log)}
        await services.agent_profiles.update(profile.id, AgentProfileFields(env=env))
    work = signal("designed", handoff="Use the v2 API; v1 is deprecated")
    task_id, steps = await gated_task(services, db, workspace_id, work, f"/say checking\n{signal('checked')}")
    session_id = (await services.sessions.start_task(task_id, work, None)).session.id
    async with watching(bus, db, session_id) as watch:
        await watch.next_turn_end(timeout=60)
        await watch.next_turn_end(timeout=60)
    assert await step_name(services, steps, task_id) == "Shipped"
    prompts = [json.loads(line)["prompt"] for line in log.read_text().splitlines()]
    [check] = [p for p in prompts if "/say checking" in p]
    context = check.split("</kandev-context>", 1)[0]
    assert "<kandev-context>" in context and "Workflow step: Check" in context
    assert "Handoff from the previous step:\nUse the v2 API; v1 is deprecated" in context
    [first] = [p for p in prompts if "designed" in p]
    assert "Handoff from the previous step" not in first
