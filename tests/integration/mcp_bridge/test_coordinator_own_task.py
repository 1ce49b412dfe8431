"""An automation run's coordinator session can't make its own hidden task (or its sessions) a target: no subtask
of it or task waiting on it, no answer to its questions or permission requests (nor are they listed), no
discovery of its relations, no move, update or delete; each refusal is PERMISSION_DENIED (reason
own_run_task) and changes nothing. Reading its own conversation and sessions, and archiving its task, stay; other
tasks of its workspace it orders, interrupts and stops, which a task's agent may do only to its own children."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from sqlalchemy import select

from kandev.domain.errors import PermissionDeniedError
from kandev.domain.services import Services
from kandev.domain.sessions.permissions import record_request
from kandev.domain.tasks.service import CreateTask
from kandev.edge.mcp_bridge.surface import McpCaller
from kandev.edge.mcp_bridge.tool_surface import KandevToolSurface
from kandev.models import Clarification, PermissionRequest, QueuedPrompt, Session, Task, TaskDependency, WorkflowStep
from tests.integration.mcp_bridge.conftest import call_tool, run_session_caller, unknown_tool
from tests.support.users import as_agent

OPTIONS = [{"option_id": "allow", "name": "Allow", "kind": "allow_once"}]


@dataclass
class Run:
    """A run's hidden task and session, its coordinator caller (from a real session token), and another task."""

    task_id: str
    session_id: str
    caller: McpCaller
    other_task_id: str
    other_session_id: str


@pytest.fixture
async def run(services: Services, db: Any, settings: Any, workspace_id: str) -> Run:
    hidden_id, session_id, caller = await run_session_caller(services, db, settings, workspace_id)
    assert caller.principal.own_run_task_id == hidden_id
    other = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Other"))).task
    other_session = (await services.sessions.start_task(other.id, "work", None)).session
    return Run(hidden_id, session_id, caller, other.id, other_session.id)


async def snapshot(db: Any) -> dict[str, Any]:
    """Everything a coordinator tool could change."""
    async with db.read() as s:
        tasks = await s.execute(
            select(
                Task.id,
                Task.parent_id,
                Task.title,
                Task.state,
                Task.workflow_step_id,
                Task.archived_at,
                Task.deleted_at,
                Task.updated_at,
            ).order_by(Task.id)
        )
        sessions = await s.execute(select(Session.id, Session.state).order_by(Session.id))
        prompts = await s.execute(select(QueuedPrompt.id, QueuedPrompt.state).order_by(QueuedPrompt.id))
        links = await s.execute(select(TaskDependency.task_id, TaskDependency.blocked_by_id))
        questions = await s.execute(select(Clarification.id, Clarification.state).order_by(Clarification.id))
        permissions = await s.execute(
            select(PermissionRequest.id, PermissionRequest.state, PermissionRequest.chosen_option_id).order_by(
                PermissionRequest.id
            )
        )
        return {
            "tasks": list(tasks),
            "sessions": list(sessions),
            "prompts": list(prompts),
            "links": sorted(links),
            "questions": list(questions),
            "permissions": list(permissions),
        }


async def assert_refused(surface: KandevToolSurface, db: Any, run: Run, tool: str, **arguments: Any) -> None:
    before = await snapshot(db)
    error, payload = await call_tool(surface, run.caller, tool, **arguments)
    assert error and payload["code"] == "PERMISSION_DENIED", (tool, arguments, payload)
    assert payload["fields"]["reason"] == "own_run_task", (tool, payload)
    assert await snapshot(db) == before, (tool, arguments)


async def test_a_subtask_of_its_own_task_or_a_task_waiting_on_it_is_refused_and_nothing_is_created(surface, db, run):
    for arguments in (
        {"title": "Child", "parent_id": "self"},
        {"title": "Child", "parent_id": run.task_id, "prompt": "do it"},
        {"title": "Waits", "blocked_by": [run.task_id]},
        {"title": "Waits", "blocked_by": [run.other_task_id, "self"], "external_id": "ext-1"},
    ):
        await assert_refused(surface, db, run, "create_task_kandev", **arguments)

    # Other tasks stay fair targets: a subtask of another task, a top-level task (never a child of its own).
    error, child = await call_tool(
        surface, run.caller, "create_task_kandev", title="Child", parent_id=run.other_task_id, start_agent=False
    )
    assert not error and child["parent_id"] == run.other_task_id, child
    error, top = await call_tool(surface, run.caller, "create_task_kandev", title="Top", start_agent=False)
    assert not error and top["parent_id"] is None, top


async def test_questions_of_its_own_task_are_not_listed_and_cannot_be_answered_or_rejected(
    surface, services, db, run, workspace_id
):
    own_agent = as_agent(services, run.session_id, run.task_id, workspace_id)
    other_agent = as_agent(services, run.other_session_id, run.other_task_id, workspace_id)
    own = await own_agent.clarifications.ask([{"prompt": "Mine?", "options": [{"label": "Yes"}]}], None)
    theirs = await other_agent.clarifications.ask([{"prompt": "Theirs?", "options": [{"label": "Yes"}]}], None)

    error, listed = await call_tool(surface, run.caller, "list_pending_questions_kandev")
    assert not error and [q["id"] for q in listed["questions"]] == [theirs.id]

    answer = [{"question_id": own.questions[0]["id"], "selected_options": ["Yes"]}]
    await assert_refused(surface, db, run, "answer_question_kandev", pending_id=own.id, answers=answer)
    await assert_refused(surface, db, run, "answer_question_kandev", pending_id=own.id, reject=True)

    # Another agent's question is the coordinator's to answer.
    answer = [{"question_id": theirs.questions[0]["id"], "selected_options": ["Yes"]}]
    error, answered = await call_tool(
        surface, run.caller, "answer_question_kandev", pending_id=theirs.id, answers=answer
    )
    assert not error and answered["state"] == "ANSWERED", answered


async def test_permission_requests_of_its_own_task_are_not_listed_and_cannot_be_resolved(surface, services, db, run):
    async def asked(session_id: str) -> str:
        return await record_request(
            services.ctx, session_id=session_id, turn_id="t", title="rm -rf build", tool_call={}, options=OPTIONS
        )

    own = await asked(run.session_id)
    theirs = await asked(run.other_session_id)

    error, listed = await call_tool(surface, run.caller, "list_pending_agent_permissions_kandev")
    assert not error and [p["id"] for p in listed["permissions"]] == [theirs]
    error, listed = await call_tool(
        surface, run.caller, "list_pending_agent_permissions_kandev", task_id=run.task_id, session_id=run.session_id
    )
    assert not error and listed["permissions"] == []

    await assert_refused(surface, db, run, "resolve_agent_permission_kandev", request_id=own, option_id="allow")
    await assert_refused(
        surface,
        db,
        run,
        "resolve_agent_permission_kandev",
        request_id=own,
        option_id="allow",
        session_id=run.session_id,
    )

    error, resolved = await call_tool(
        surface, run.caller, "resolve_agent_permission_kandev", request_id=theirs, option_id="allow"
    )
    assert not error and resolved["state"] == "RESOLVED", resolved


async def test_its_own_tasks_relations_cannot_be_discovered_but_its_conversation_and_sessions_can_be_read(
    surface, db, run
):
    await assert_refused(surface, db, run, "list_related_tasks_kandev")
    await assert_refused(surface, db, run, "list_related_tasks_kandev", task_id="self")
    await assert_refused(surface, db, run, "list_related_tasks_kandev", task_id=run.task_id)
    await assert_refused(surface, db, run, "list_tasks_kandev", parent_id="self")

    error, related = await call_tool(surface, run.caller, "list_related_tasks_kandev", task_id=run.other_task_id)
    assert not error and related["task_id"] == run.other_task_id
    # Reads of what it already has: its own transcript (what a continued run resumes) and its session states.
    error, conversation = await call_tool(surface, run.caller, "get_task_conversation_kandev", task_id="self")
    assert not error and conversation["session_id"] == run.session_id
    error, sessions = await call_tool(surface, run.caller, "list_task_sessions_kandev", task_id="self")
    assert not error and [s["id"] for s in sessions["sessions"]] == [run.session_id]
    # Its hidden task is no entry of the workspace's list.
    error, listed = await call_tool(surface, run.caller, "list_tasks_kandev")
    assert not error and run.task_id not in [t["id"] for t in listed["tasks"]]


async def test_a_reply_naming_its_own_task_and_a_session_of_it_are_refused(surface, db, run):
    await assert_refused(
        surface, db, run, "message_task_kandev", task_id=run.task_id, prompt="done", reply_to_question_id="q-1"
    )
    await assert_refused(surface, db, run, "spawn_session_kandev", task_id="self", prompt="again")
    await assert_refused(surface, db, run, "stop_task_kandev", task_id="self")
    await assert_refused(surface, db, run, "remove_task_dependency_kandev", depends_on_task_id=run.other_task_id)


async def test_its_own_task_cannot_be_moved_updated_or_deleted_on_the_surface_or_below_it(
    surface, services, db, run, workspace_id
):
    async with db.read() as s:
        task = await s.get(Task, run.task_id)
        assert task is not None
        steps = list(await s.scalars(select(WorkflowStep).where(WorkflowStep.workflow_id == task.workflow_id)))
    target = next(step for step in steps if step.id != task.workflow_step_id)
    before = await snapshot(db)
    for tool, arguments in (
        ("move_task_kandev", {"task_id": "self", "workflow_step_id": target.id}),
        ("update_task_kandev", {"task_id": "self", "state": "COMPLETED"}),
        ("delete_task_kandev", {"task_id": "self"}),
    ):
        await unknown_tool(surface, run.caller, tool, **arguments)  # not on the coordinator surface
    # The services refuse them too, whatever surface a call came through.
    coordinator = Services(services.ctx.with_principal(run.caller.principal))
    for attempt in (
        coordinator.tasks.move(run.task_id, target.id),
        coordinator.tasks.update(run.task_id, title="Renamed"),
        coordinator.tasks.delete(run.task_id),
    ):
        with pytest.raises(PermissionDeniedError) as refused:
            await attempt
        assert refused.value.fields["reason"] == "own_run_task"
    assert await snapshot(db) == before

    # Archiving its own task is its end-of-run signal, and stays allowed.
    error, archived = await call_tool(surface, run.caller, "archive_task_kandev", task_id="self")
    assert not error and archived["archived_at"] is not None


async def test_it_orders_interrupts_and_stops_other_tasks_which_a_plain_agent_may_not(
    surface, services, db, run, workspace_id
):
    third = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Third"))).task

    async def links() -> list[Any]:
        async with db.read() as s:
            return list(await s.execute(select(TaskDependency.task_id, TaskDependency.blocked_by_id)))

    error, added = await call_tool(
        surface, run.caller, "add_task_dependency_kandev", task_id=run.other_task_id, depends_on_task_id=third.id
    )
    assert not error and added["added"] and added["blocked_by"] == [third.id], added
    assert await links() == [(run.other_task_id, third.id)]
    await assert_refused(
        surface, db, run, "add_task_dependency_kandev", task_id=run.other_task_id, depends_on_task_id=run.task_id
    )
    await assert_refused(surface, db, run, "add_task_dependency_kandev", task_id="self", depends_on_task_id=third.id)
    error, removed = await call_tool(
        surface, run.caller, "remove_task_dependency_kandev", task_id=run.other_task_id, depends_on_task_id=third.id
    )
    assert not error and removed["removed"] and await links() == [], removed

    # A task's own agent (not the other task's parent) may neither interrupt nor stop it.
    peer = as_agent(services, "peer-session", third.id, workspace_id)
    with pytest.raises(PermissionDeniedError) as refused:
        await peer.sessions.stop_task(run.other_task_id)
    assert refused.value.fields["reason"] == "not_parent"

    error, sent = await call_tool(
        surface,
        run.caller,
        "message_task_kandev",
        task_id=run.other_task_id,
        prompt="New plan",
        delivery_mode="interrupt",
    )
    assert not error and sent["session_id"] == run.other_session_id, sent
    error, stopped = await call_tool(surface, run.caller, "stop_task_kandev", task_id=run.other_task_id)
    assert not error and stopped["status"] == "stopped", stopped
    async with db.read() as s:
        assert (await s.get(Session, run.other_session_id)).state == "CANCELLED"
