"""End to end: an orchestrating agent, through the official MCP client, decomposes a plan into a
three-step chain; real workers run scripted step agents, and each starts only after its predecessor
completed. A retried create with the same external_id answers with the first task."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from kandev.domain.tasks.service import CreateTask
from kandev.models import Message, StepTransition, Task, Turn, WorkflowStep
from kandev.models.base import utcnow
from kandev.models.enums import TaskState
from kandev.models.sessions import Session
from tests.integration.mcp_transport.conftest import MODERN, mcp_client
from tests.support.server import running_server
from tests.support.session_tokens import side_token
from tests.support.waiting import wait_until
from tests.support.workers import running_worker

pytestmark = pytest.mark.slow

FINISH = '/say working on it\n/tool update_task_kandev {"task_id": "self", "state": "COMPLETED"}'


async def test_an_orchestrator_builds_a_chain_that_runs_one_step_at_a_time(services, settings, db, workspace_id):
    plan = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Plan the release"))).task
    orchestrator = (await services.sessions.start_task(plan.id, "/say planning", None)).session
    async with running_server(settings) as address:
        with running_worker(settings.model_copy(update={"public_url": f"http://{address}"})):

            async def planned() -> bool:
                async with db.read() as s:
                    return await s.scalar(select(Turn.ended_at).where(Turn.session_id == orchestrator.id)) is not None

            # The test speaks as the orchestrator's agent once that agent has launched (a launch revokes
            # earlier tokens of its session).
            await wait_until(planned, timeout=60, interval=0.1)
            token = await side_token(db, orchestrator.id)
            async with mcp_client(f"http://{address}/mcp/session", MODERN, token) as client:
                tools = {t.name for t in (await client.list_tools()).tools}
                assert {
                    "create_task_kandev",
                    "add_task_dependency_kandev",
                    "show_rich_output_kandev",
                } <= tools
                ids: list[str] = []
                for step in ("Design", "Build", "Ship"):
                    arguments = {"title": step, "prompt": FINISH, "external_id": f"release-9/{step}"}
                    if ids:
                        arguments["blocked_by"] = [ids[-1]]
                    created = await client.call_tool("create_task_kandev", arguments)
                    assert not created.is_error, created.content
                    ids.append(created.structured_content["id"])
                retried = await client.call_tool(
                    "create_task_kandev",
                    {
                        "title": "Build",
                        "prompt": FINISH,
                        "external_id": "release-9/Build",
                        "blocked_by": [ids[0]],
                    },
                )
                assert not retried.is_error
                assert retried.structured_content["id"] == ids[1]
                assert retried.structured_content["deduplicated"] is True
                assert retried.structured_content["creation_complete"] is True
                assert json.loads(retried.content[0].text) == retried.structured_content

                # The other coordination tools over the same client: links on the caller's own task, and
                # a native presentation in its transcript.
                linked = await client.call_tool("add_task_dependency_kandev", {"depends_on_task_id": ids[0]})
                assert not linked.is_error and linked.structured_content["task_id"] == plan.id
                unlinked = await client.call_tool("remove_task_dependency_kandev", {"depends_on_task_id": ids[0]})
                assert unlinked.structured_content["removed"] is True
                again = await client.call_tool("remove_task_dependency_kandev", {"depends_on_task_id": ids[0]})
                assert not again.is_error and again.structured_content["removed"] is False
                foreign = await client.call_tool(
                    "add_task_dependency_kandev", {"task_id": ids[1], "depends_on_task_id": ids[0]}
                )
                assert foreign.is_error and foreign.structured_content["code"] == "PERMISSION_DENIED"
                metrics = {"type": "metrics", "items": [{"label": "Steps", "value": "3"}]}
                shown = await client.call_tool(
                    "show_rich_output_kandev", {"version": 1, "title": "Release plan", "blocks": [metrics]}
                )
                assert not shown.is_error and shown.structured_content["status"] == "shown"
                inline_bytes = {"type": "file", "path": "notes.txt", "content": "aGk="}
                refused = await client.call_tool(
                    "show_rich_output_kandev", {"version": 1, "title": "Bytes", "blocks": [inline_bytes]}
                )
                assert refused.is_error

            async def chain_done() -> bool:
                async with db.read() as s:
                    state = await s.scalar(select(Task.state).where(Task.id == ids[-1]))
                return state == TaskState.COMPLETED

            await wait_until(chain_done, timeout=120, interval=0.2)

    async with db.read() as s:
        completed_at = {}
        first_turn_at = {}
        for task_id in ids:
            completed_at[task_id] = await s.scalar(
                select(StepTransition.created_at)
                .join(WorkflowStep, WorkflowStep.id == StepTransition.to_step_id)
                .where(StepTransition.task_id == task_id, WorkflowStep.is_final_step.is_(True))
            )
            first_turn_at[task_id] = await s.scalar(
                select(Turn.started_at)
                .join(Session, Session.id == Turn.session_id)
                .where(Session.task_id == task_id)
                .order_by(Turn.started_at)
                .limit(1)
            )
            sessions = await s.scalar(select(Session.id).where(Session.task_id == task_id))
            assert sessions is not None
        tasks = {t.id: t for t in await s.scalars(select(Task).where(Task.id.in_(ids)))}
    assert all(tasks[i].state == TaskState.COMPLETED and tasks[i].deferred_launch is None for i in ids)
    assert all(completed_at[i] is not None and completed_at[i] <= utcnow() for i in ids)
    # Each step's agent started only after its predecessor had completed.
    assert first_turn_at[ids[1]] >= completed_at[ids[0]]
    assert first_turn_at[ids[2]] >= completed_at[ids[1]]
    async with db.read() as s:
        rich = list(
            await s.scalars(select(Message).where(Message.session_id == orchestrator.id, Message.kind == "RICH_OUTPUT"))
        )
    assert [m.data["rich_output"]["title"] for m in rich] == ["Release plan"]
