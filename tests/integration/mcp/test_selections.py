"""Selections made at a task or a session go with the task: a scope's target has no foreign key."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from kandev.domain.mcp.rules import McpServerFields
from kandev.domain.workflow.service import StepFields
from kandev.models import McpServerSelection
from kandev.models.base import new_id
from kandev.models.enums import McpScope, McpServerKind
from tests.support.factories import Started, started_task


async def selections(db: Any) -> set[tuple[str, str]]:
    async with db.read() as session:
        rows = await session.execute(select(McpServerSelection.scope, McpServerSelection.target_id))
        return {(str(scope), target) for scope, target in rows.tuples()}


async def docs_server(services: Any, workspace_id: str) -> str:
    fields = McpServerFields(name="docs", kind=McpServerKind.REMOTE, url="https://docs.example/mcp")
    return (await services.mcp_servers.create(workspace_id, fields)).id


async def select_at_task_and_session(services: Any, server_id: str, started: Started) -> None:
    await services.mcp_selections.select(server_id, McpScope.TASK, started.task_id)
    await services.mcp_selections.select(server_id, McpScope.SESSION, started.session_id)


async def test_deleting_a_task_drops_the_selections_at_it_and_its_sessions_and_keeps_the_others(
    services, db, workspace_id
):
    server_id = await docs_server(services, workspace_id)
    doomed = await started_task(services, workspace_id, "/say hi", "Doomed")
    kept = await started_task(services, workspace_id, "/say hi", "Kept")
    await select_at_task_and_session(services, server_id, doomed)
    await select_at_task_and_session(services, server_id, kept)

    await services.tasks.delete(doomed.task_id)

    assert await selections(db) == {(McpScope.TASK, kept.task_id), (McpScope.SESSION, kept.session_id)}


async def test_deleting_a_workflow_drops_the_selections_left_at_its_deleted_tasks(services, db, workspace_id):
    """Tasks deleted before selections went with them still hold theirs until their rows go with the workflow."""
    server_id = await docs_server(services, workspace_id)
    workflow = (await services.workflows.create(workspace_id, "Short-lived")).workflow
    await services.workflows.create_step(workflow.id, StepFields(name="Only"))
    doomed = await started_task(services, workspace_id, "/say hi", "Doomed", workflow_id=workflow.id)
    await services.tasks.delete(doomed.task_id)
    async with db.transaction() as session:  # as an older version left them
        for scope, target in ((McpScope.TASK, doomed.task_id), (McpScope.SESSION, doomed.session_id)):
            session.add(McpServerSelection(id=new_id(), mcp_server_id=server_id, scope=scope, target_id=target))

    await services.workflows.delete(workflow.id)

    assert await selections(db) == set()
