"""Things agents wait on, written as the domain records them, at chosen times (for ordering and paging tests)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kandev.domain.automations.firing import fire
from kandev.domain.automations.launch import launch_run
from kandev.models import AutomationRun, Clarification, ParentQuestion, PermissionRequest, Session, Task
from kandev.models.base import new_id


async def launched(services: Any, automation_id: str) -> tuple[str, str, str]:
    """One manual run of the automation launched into its task: (run id, task id, session id)."""
    outcome = await fire(services.ctx, automation_id, trigger_id=None, trigger_type="manual")
    assert outcome.run_id is not None
    await launch_run(services.ctx, outcome.run_id)
    async with services.ctx.db.read() as s:
        run = await s.get(AutomationRun, outcome.run_id)
    assert run is not None and run.task_id is not None and run.session_id is not None
    return run.id, run.task_id, run.session_id


async def session_of(db: Any, task_id: str) -> str:
    """A primary session, waiting for input, on `task_id`."""
    session = Session(id=new_id(), task_id=task_id, is_primary=True, state="WAITING_FOR_INPUT")
    async with db.transaction() as s:
        s.add(session)
    return session.id


async def add_question(db: Any, session_id: str, created_at: datetime, state: str = "PENDING") -> str:
    """A question to the operator (ask_user_question_kandev) from `session_id`."""
    async with db.transaction() as s:
        session = await s.get(Session, session_id)
        row = Clarification(
            id=new_id(),
            session_id=session_id,
            task_id=session.task_id,
            questions=[{"id": "q1", "prompt": "Which?", "options": [{"label": "a"}, {"label": "b"}]}],
            state=state,
            created_at=created_at,
        )
        s.add(row)
    return row.id


async def add_permission(db: Any, session_id: str, created_at: datetime, state: str = "PENDING") -> str:
    """A permission request under the ASK policy from `session_id`."""
    async with db.transaction() as s:
        session = await s.get(Session, session_id)
        row = PermissionRequest(
            id=new_id(),
            session_id=session_id,
            task_id=session.task_id,
            title="Run make",
            tool_call={"tool_call_id": "call-1"},
            options=[{"option_id": "allow", "name": "Allow", "kind": "allow_once"}],
            state=state,
            created_at=created_at,
        )
        s.add(row)
    return row.id


async def add_parent_question(db: Any, session_id: str, created_at: datetime, state: str = "PENDING") -> str:
    """An autopilot child's question to its parent, from `session_id` (its task must have a parent)."""
    async with db.transaction() as s:
        session = await s.get(Session, session_id)
        child = await s.get(Task, session.task_id)
        row = ParentQuestion(
            id=new_id(),
            child_task_id=child.id,
            child_session_id=session_id,
            parent_task_id=child.parent_id,
            call_identity=new_id(),
            questions=[{"id": "q1", "prompt": "Which way?"}],
            state=state,
            created_at=created_at,
        )
        s.add(row)
    return row.id
