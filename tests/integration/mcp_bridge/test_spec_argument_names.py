"""The answer and permission tools speak the spec's argument names (pending_id; task_id and session_id), the
original question_id stays an unadvertised alias, and tasks an agent session creates have origin agent."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from kandev.domain.sessions.permissions import record_request
from kandev.domain.sessions.turns import claim_turn
from kandev.domain.tasks.service import CreateTask
from kandev.models import Clarification, PermissionRequest
from kandev.models.base import new_id, utcnow
from tests.integration.mcp_bridge.conftest import agent_on, call_tool
from tests.support.factories import new_task


async def schema_of(surface: Any, caller: Any, name: str) -> dict[str, Any]:
    [tool] = [t for t in await surface.list_tools(caller) if t.name == name]
    return tool.input_schema


async def pending_question(services: Any, db: Any, workspace_id: str) -> str:
    task_id = await new_task(services, workspace_id, "Asks")
    session = (await services.sessions.start_task(task_id, "go", None)).session
    question_id = new_id()
    async with db.transaction() as s:
        s.add(
            Clarification(
                id=question_id,
                session_id=session.id,
                task_id=task_id,
                turn_id=None,
                questions=[{"id": "q1", "prompt": "Which?", "options": [{"label": "a"}, {"label": "b"}]}],
                state="PENDING",
                created_at=utcnow(),
            )
        )
    return question_id


async def question_state(db: Any, question_id: str) -> str:
    async with db.read() as s:
        return await s.scalar(select(Clarification.state).where(Clarification.id == question_id))


async def test_answer_question_advertises_pending_id_and_not_question_id(surface, external):
    schema = await schema_of(surface, external, "answer_question_kandev")
    assert "pending_id" in schema["properties"] and schema["required"] == ["pending_id"]
    assert "question_id" not in schema["properties"]


async def test_answering_by_pending_id_resolves_the_question(surface, external, services, db, workspace_id):
    question_id = await pending_question(services, db, workspace_id)
    answers = [{"question_id": "q1", "selected_options": ["b"]}]
    failed, result = await call_tool(
        surface, external, "answer_question_kandev", pending_id=question_id, answers=answers
    )
    assert not failed, result
    assert await question_state(db, question_id) == "ANSWERED"


async def test_the_original_question_id_is_still_accepted(surface, external, services, db, workspace_id):
    question_id = await pending_question(services, db, workspace_id)
    failed, result = await call_tool(surface, external, "answer_question_kandev", question_id=question_id, reject=True)
    assert not failed, result
    assert await question_state(db, question_id) != "PENDING"


async def test_sending_both_names_or_neither_is_a_validation_error(surface, external, services, db, workspace_id):
    question_id = await pending_question(services, db, workspace_id)
    failed, result = await call_tool(
        surface, external, "answer_question_kandev", pending_id=question_id, question_id=question_id, reject=True
    )
    assert failed and "pending_id" in result["error"] and "question_id" in result["error"]
    failed, result = await call_tool(surface, external, "answer_question_kandev", reject=True)
    assert failed and "missing required field: pending_id" in result["error"]
    assert await question_state(db, question_id) == "PENDING"


async def permission_request(services: Any, workspace_id: str) -> tuple[str, str, str]:
    task_id = await new_task(services, workspace_id, "Needs permission")
    session = (await services.sessions.start_task(task_id, "go", None)).session
    claimed = await claim_turn(services.ctx, session.id, worker_name="t", job_id=None, lease_seconds=60)
    assert claimed is not None
    options = [{"option_id": "allow", "name": "Allow", "kind": "allow_once"}]
    request_id = await record_request(
        services.ctx,
        session_id=session.id,
        turn_id=claimed.turn_id,
        title="rm",
        tool_call={"tool_call_id": f"call-{session.id}"},
        options=options,
    )
    return task_id, session.id, request_id


async def test_permission_tools_advertise_task_id_and_session_id(surface, external):
    for name in ("list_pending_agent_permissions_kandev", "resolve_agent_permission_kandev"):
        properties = (await schema_of(surface, external, name))["properties"]
        assert {"task_id", "session_id"} <= set(properties), name
    assert "pending_id" in (await schema_of(surface, external, "resolve_agent_permission_kandev"))["properties"]


async def test_permissions_are_listed_by_session_and_resolved_only_for_their_own_task_and_session(
    surface, external, services, db, workspace_id
):
    task_id, session_id, request_id = await permission_request(services, workspace_id)
    other_task, other_session, _ = await permission_request(services, workspace_id)
    failed, listed = await call_tool(
        surface, external, "list_pending_agent_permissions_kandev", workspace_id=workspace_id, session_id=session_id
    )
    assert not failed, listed
    assert [(p["id"], p["pending_id"]) for p in listed["permissions"]] == [(request_id, f"call-{session_id}")]
    for wrong in ({"task_id": other_task}, {"session_id": other_session}, {"pending_id": f"call-{other_session}"}):
        failed, result = await call_tool(
            surface, external, "resolve_agent_permission_kandev", request_id=request_id, option_id="allow", **wrong
        )
        assert failed and result["code"] == "NOT_FOUND", result
    async with db.read() as s:
        assert (await s.get(PermissionRequest, request_id)).state == "PENDING"
    failed, result = await call_tool(
        surface,
        external,
        "resolve_agent_permission_kandev",
        task_id=task_id,
        session_id=session_id,
        request_id=request_id,
        pending_id=f"call-{session_id}",
        option_id="allow",
    )
    assert not failed and result["state"] == "RESOLVED", result


async def test_a_task_created_by_an_agent_session_has_origin_agent(surface, external, services, workspace_id):
    own = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Own"))).task.id
    agent = await agent_on(services, own)
    failed, made = await call_tool(surface, agent, "create_task_kandev", title="By the agent")
    assert not failed and made["origin"] == "AGENT", made
    assert (await services.tasks.get(made["id"])).origin == "agent"
    failed, made = await call_tool(surface, external, "create_task_kandev", workspace_id=workspace_id, title="By me")
    assert not failed and made["origin"] == "USER", made
