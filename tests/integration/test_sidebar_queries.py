"""The sidebar query costs a constant number of SQL statements, however many tasks it shows."""

from __future__ import annotations

from typing import Any

from sqlalchemy import event, select

from kandev.models import Session, Task, Workflow, WorkflowStep
from kandev.models.base import new_id, utcnow

SIDEBAR = """query($ws: ID!) {
  tasks(workspaceId: $ws, first: 500) {
    totalCount pageInfo { hasNextPage endCursor }
    nodes { id title state autopilot parentId pendingAction workflowStepId
            workflowStep { id name } sessions { id state isPrimary } }
  }
}"""


async def add_tasks(db: Any, workspace_id: str, count: int) -> None:
    async with db.transaction() as session:
        workflow = await session.scalar(select(Workflow).where(Workflow.workspace_id == workspace_id))
        step = await session.scalar(select(WorkflowStep).where(WorkflowStep.workflow_id == workflow.id).limit(1))
        tasks = []
        for i in range(count):
            task = Task(
                id=new_id(),
                workspace_id=workspace_id,
                workflow_id=workflow.id,
                workflow_step_id=step.id,
                title=f"Task {i}",
                created_at=utcnow(),
                updated_at=utcnow(),
            )
            tasks.append(task)
        session.add_all(tasks)
        await session.flush()  # tasks before the sessions that point at them
        session.add_all(Session(task_id=t.id, is_primary=True, state="WAITING_FOR_INPUT") for t in tasks[::2])


async def statements_for_sidebar(gql: Any, db: Any, workspace_id: str) -> tuple[int, int]:
    statements: list[str] = []

    def count(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if not statement.lstrip().upper().startswith(("BEGIN", "PRAGMA")):
            statements.append(statement)

    event.listen(db.engine.sync_engine, "before_cursor_execute", count)
    try:
        data = await gql(SIDEBAR, ws=workspace_id)
    finally:
        event.remove(db.engine.sync_engine, "before_cursor_execute", count)
    return len(statements), len(data["tasks"]["nodes"])


async def test_the_sidebar_query_uses_the_same_number_of_statements_for_10_and_1000_tasks(gql, db, workspace_id):
    await add_tasks(db, workspace_id, 10)
    small, shown_small = await statements_for_sidebar(gql, db, workspace_id)
    await add_tasks(db, workspace_id, 990)
    large, shown_large = await statements_for_sidebar(gql, db, workspace_id)
    assert (shown_small, shown_large) == (10, 500)  # a page is at most 500 tasks
    assert small == large
    # workspace check, count, page, steps, sessions: a regression to per-row loading would be far above this
    assert small <= 6
