"""Board and transcript data written straight to the database: thousands of rows in one transaction, for
statement-count tests and the board benchmark."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from kandev.models import Message, QueuedPrompt, Session, Task, Turn, Workflow, WorkflowStep
from kandev.models.base import new_id, utcnow


async def add_tasks(db: Any, workspace_id: str, count: int) -> list[str]:
    """`count` tasks on the workspace's first step; every other one has a primary session, every tenth
    of those waits on its completion signal. Returns the tasks' ids."""
    async with db.transaction() as session:
        workflow = await session.scalar(select(Workflow).where(Workflow.workspace_id == workspace_id))
        step = await session.scalar(select(WorkflowStep).where(WorkflowStep.workflow_id == workflow.id).limit(1))
        tasks = [
            Task(
                id=new_id(),
                workspace_id=workspace_id,
                workflow_id=workflow.id,
                workflow_step_id=step.id,
                title=f"Task {i}",
                created_at=utcnow(),
                updated_at=utcnow(),
            )
            for i in range(count)
        ]
        session.add_all(tasks)
        await session.flush()  # tasks before the sessions that point at them
        session.add_all(
            Session(task_id=t.id, is_primary=True, state="WAITING_FOR_INPUT", completion_pending=i % 10 == 0)
            for i, t in enumerate(tasks[::2])
        )
        return [t.id for t in tasks]


async def add_transcript(db: Any, task_id: str, messages: int, turns: int = 3) -> str:
    """A session on the task with `turns` turns, `messages` messages spread over them and one queued
    prompt. Returns the session's id."""
    async with db.transaction() as session:
        row = Session(task_id=task_id, name="Primary", is_primary=True, state="RUNNING")
        session.add(row)
        await session.flush()
        turn_rows = [
            Turn(session_id=row.id, seq=i + 1, state="COMPLETED", stop_reason="end_turn", ended_at=utcnow())
            for i in range(turns)
        ]
        session.add_all(turn_rows)
        await session.flush()
        session.add_all(
            Message(
                session_id=row.id,
                turn_id=turn_rows[i % turns].id,
                seq=i + 1,
                kind="AGENT",
                text=f"message {i}",
                data={"n": i},
            )
            for i in range(messages)
        )
        session.add(QueuedPrompt(session_id=row.id, seq=1, idempotency_key=new_id(), source="user", text="next"))
        return row.id
