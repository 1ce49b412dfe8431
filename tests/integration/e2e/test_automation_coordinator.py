"""An automation run's agent over the real /mcp/session endpoint: its own hidden task is no target for a subtask
or for relation lookups, and archiving it (the end-of-run signal) works."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import func, select

from kandev.domain.automations.firing import fire
from kandev.models import Message, Task
from kandev.platform.event_bus import automation_channel
from tests.integration.domain.automations.conftest import new_automation, runs_of
from tests.integration.domain.automations.test_run_turns import ended, until_run

pytestmark = pytest.mark.slow

SCRIPT = "\n".join(
    [
        '/tool create_task_kandev {"title": "Child", "parent_id": "self", "start_agent": false}',
        "/tool list_related_tasks_kandev {}",
        '/tool archive_task_kandev {"task_id": "self"}',
    ]
)


async def test_a_runs_agent_cannot_give_its_own_task_a_subtask_or_look_up_its_relations_but_archives_it(
    live, services, db, bus, workspace_id
):
    automation_id = await new_automation(services, workspace_id, prompt=SCRIPT)
    async with db.read() as s:
        tasks_before = await s.scalar(select(func.count()).select_from(Task))
    async with bus.subscribe(automation_channel(workspace_id)) as events:
        outcome = await fire(services.ctx, automation_id, trigger_id=None, trigger_type="manual")
        assert outcome.run_id
        await until_run(events, outcome.run_id, ended, timeout=60)
    [run] = await runs_of(db, automation_id)
    async with db.read() as s:
        calls = list(
            await s.scalars(
                select(Message)
                .where(Message.session_id == run.session_id, Message.kind == "TOOL_CALL")
                .order_by(Message.seq)
            )
        )
        task = await s.get(Task, run.task_id)
        tasks_after = await s.scalar(select(func.count()).select_from(Task))
    assert [c.data["status"] for c in calls] == ["failed", "failed", "completed"], [c.data for c in calls]
    for refused in calls[:2]:
        output = json.dumps(refused.data)
        assert "PERMISSION_DENIED" in output and "own_run_task" in output, output
    assert task is not None and task.archived_at is not None
    assert tasks_after == tasks_before + 1  # the run's own task, and no subtask of it
