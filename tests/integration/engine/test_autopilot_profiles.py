"""Autopilot is never silently downgraded: every way an autopilot task could come to run on an agent profile
without MCP is refused with AutopilotNeedsMcpError, and nothing changes."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import func, select, update

from kandev.domain.errors import AutopilotNeedsMcpError
from kandev.domain.sessions.service import spawn_session
from kandev.domain.sessions.turns import claim_turn, finish_turn
from kandev.domain.tasks.service import CreateTask
from kandev.domain.workspace.agent_profiles import AgentProfileFields
from kandev.models import AgentProfile, QueuedPrompt, Session, Task, WorkflowStep
from tests.integration.engine.conftest import history, messages
from tests.support.factories import new_agent_profile
from tests.support.users import as_agent
from tests.support.workflows import steps_by_name


async def no_mcp_profile(services: Any, workspace_id: str) -> str:
    return (await new_agent_profile(services, workspace_id, "No MCP", supports_mcp=False)).id


async def autopilot_child(services: Any, workspace_id: str) -> Any:
    parent = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Parent"))).task
    return (
        await services.tasks.create(
            CreateTask(workspace_id=workspace_id, title="Child", parent_id=parent.id, autopilot=True)
        )
    ).task


async def count(db: Any, model: Any, *conditions: Any) -> int:
    async with db.read() as s:
        return await s.scalar(select(func.count()).select_from(model).where(*conditions)) or 0


async def test_start_task_on_a_profile_without_mcp_is_refused_and_opens_nothing(services, db, workspace_id):
    child = await autopilot_child(services, workspace_id)
    profile_id = await no_mcp_profile(services, workspace_id)
    with pytest.raises(AutopilotNeedsMcpError, match="autopilot") as refused:
        await services.sessions.start_task(child.id, "build", profile_id)
    assert refused.value.code == "AUTOPILOT_NEEDS_MCP"
    assert await count(db, Session, Session.task_id == child.id) == 0
    after = await services.tasks.get(child.id)
    assert (after.state, after.workflow_step_id) == (child.state, child.workflow_step_id)


async def test_start_task_that_would_switch_an_unstarted_session_to_a_profile_without_mcp_is_refused(
    services, db, workspace_id
):
    child = await autopilot_child(services, workspace_id)
    session = (await services.sessions.start_task(child.id, "build", None)).session
    profile_id = await no_mcp_profile(services, workspace_id)
    with pytest.raises(AutopilotNeedsMcpError):
        await services.sessions.start_task(child.id, "again", profile_id)
    assert (await services.sessions.get(session.id)).agent_profile_id != profile_id
    assert await count(db, QueuedPrompt, QueuedPrompt.session_id == session.id) == 1


async def test_a_normal_task_still_starts_on_a_profile_without_mcp(services, workspace_id):
    task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Normal"))).task
    profile_id = await no_mcp_profile(services, workspace_id)
    delivery = await services.sessions.start_task(task.id, "build", profile_id)
    assert delivery.session.agent_profile_id == profile_id


async def test_spawning_a_session_on_a_profile_without_mcp_for_an_autopilot_task_is_refused(services, db, workspace_id):
    child = await autopilot_child(services, workspace_id)
    session = (await services.sessions.start_task(child.id, "build", None)).session
    profile_id = await no_mcp_profile(services, workspace_id)
    agent = as_agent(services, session.id, child.id)
    with pytest.raises(AutopilotNeedsMcpError):
        await spawn_session(agent.ctx, None, "helper", "look around", profile_id)
    assert await count(db, Session, Session.task_id == child.id) == 1


async def test_turning_mcp_off_on_a_profile_an_autopilot_task_runs_on_is_refused(services, db, workspace_id):
    child = await autopilot_child(services, workspace_id)
    session = (await services.sessions.start_task(child.id, "build", None)).session
    with pytest.raises(AutopilotNeedsMcpError, match=child.id):
        await services.agent_profiles.update(session.agent_profile_id, AgentProfileFields(supports_mcp=False))
    async with db.read() as s:
        assert (await s.get(AgentProfile, session.agent_profile_id)).supports_mcp is True
    # A profile no autopilot task runs on can still turn it off.
    spare = await new_agent_profile(services, workspace_id, "Spare")
    updated = await services.agent_profiles.update(spare.id, AgentProfileFields(supports_mcp=False))
    assert updated.supports_mcp is False


async def test_a_manual_move_into_an_auto_start_step_is_refused_and_the_task_stays(services, db, workspace_id):
    steps = await steps_by_name(services, workspace_id)
    child = await autopilot_child(services, workspace_id)
    profile_id = await no_mcp_profile(services, workspace_id)
    async with db.transaction() as s:  # a task from before the rule, already on such a profile
        await s.execute(update(Task).where(Task.id == child.id).values(agent_profile_id=profile_id))
    with pytest.raises(AutopilotNeedsMcpError):
        await services.tasks.move(child.id, steps["In Progress"].id)
    assert (await services.tasks.get(child.id)).workflow_step_id == child.workflow_step_id
    assert await history(db, child.id) == []
    assert await count(db, Session, Session.task_id == child.id) == 0


async def test_a_rule_move_into_an_auto_start_step_is_refused_with_a_system_note_and_the_task_stays(
    services, db, workspace_id
):
    steps = await steps_by_name(services, workspace_id)
    async with db.transaction() as s:
        await s.execute(
            update(WorkflowStep)
            .where(WorkflowStep.id == steps["In Progress"].id)
            .values(auto_advance_requires_signal=False)
        )
        await s.execute(
            update(WorkflowStep)
            .where(WorkflowStep.id == steps["Review"].id)
            .values(events={"on_enter": [{"type": "auto_start_agent", "prompt": "review"}]})
        )
    child = await autopilot_child(services, workspace_id)
    session = (await services.sessions.start_task(child.id, "build", None)).session
    claimed = await claim_turn(services.ctx, session.id, worker_name="t", job_id=None, lease_seconds=60)
    assert claimed is not None
    async with db.transaction() as s:  # the profile lost MCP behind the rule's back (e.g. an older database)
        lost = update(AgentProfile).where(AgentProfile.id == session.agent_profile_id).values(supports_mcp=False)
        await s.execute(lost)
    await finish_turn(services.ctx, claimed.turn_id, stop_reason="end_turn")
    assert (await services.tasks.get(child.id)).workflow_step_id == steps["In Progress"].id
    notes = [m.text for m in await messages(db, session.id, "SYSTEM")]
    assert any("did not move to 'Review'" in n and "autopilot" in n for n in notes), notes
    assert await count(db, QueuedPrompt, QueuedPrompt.session_id == session.id) == 1  # no review prompt
