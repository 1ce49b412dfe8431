"""archive_task_kandev and archiveTask on a task that is archived already: reported as already_archived (the
spec's "an already archived target is safe and reports already_archived"), nothing changed."""

from __future__ import annotations

from sqlalchemy import select

from kandev.models import Task
from tests.integration.mcp_bridge.conftest import call_tool
from tests.support.factories import new_task

ARCHIVE = """mutation($id: ID!) { archiveTask(taskId: $id) {
  __typename ... on ArchiveTaskPayload { alreadyArchived task { id archivedAt } } } }"""


async def archived_at(db, task_id):
    async with db.read() as session:
        return await session.scalar(select(Task.archived_at).where(Task.id == task_id))


async def test_archiving_an_already_archived_task_reports_already_archived_and_changes_nothing(
    services, db, workspace_id, surface, external, gql
):
    task_id = await new_task(services, workspace_id, "Done with it")
    error, first = await call_tool(surface, external, "archive_task_kandev", task_id=task_id)
    assert not error and first["id"] == task_id and first["already_archived"] is False
    stamped = await archived_at(db, task_id)
    assert stamped is not None

    error, again = await call_tool(surface, external, "archive_task_kandev", task_id=task_id)
    assert not error and again["id"] == task_id and again["already_archived"] is True
    assert await archived_at(db, task_id) == stamped

    payload = (await gql(ARCHIVE, id=task_id))["archiveTask"]
    assert payload["__typename"] == "ArchiveTaskPayload" and payload["alreadyArchived"] is True
    assert await archived_at(db, task_id) == stamped
