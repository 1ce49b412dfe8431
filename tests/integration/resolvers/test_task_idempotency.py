"""external_id: one task per identity and workspace, whatever surface and however many concurrent creates."""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy import func, select, update

from kandev.domain.tasks.service import CreateTask
from kandev.models import Session, Task

CREATE = """mutation($input: CreateTaskInput!) { createTask(input: $input) { __typename
  ... on CreateTaskPayload { deduplicated creationComplete task { id title externalId } }
  ... on Error { code message } } }"""
UPDATE_FIELDS = 'query { __type(name: "UpdateTaskInput") { inputFields { name } } }'


async def create(gql: Any, workspace_id: str, title: str = "Task", **fields: Any) -> dict[str, Any]:
    result = (await gql(CREATE, input={"workspaceId": workspace_id, "title": title, **fields}))["createTask"]
    assert result["__typename"] == "CreateTaskPayload", result
    return result


async def live_tasks(db: Any, external_id: str | None = None) -> int:
    async with db.read() as s:
        query = select(func.count()).select_from(Task).where(Task.deleted_at.is_(None))
        if external_id is not None:
            query = query.where(Task.external_id == external_id)
        return await s.scalar(query) or 0


async def test_a_retry_with_the_same_external_id_returns_the_first_task(gql, db, workspace_id):
    first = await create(gql, workspace_id, "First", externalId="plan-42")
    assert first["deduplicated"] is False and first["creationComplete"] is True
    again = await create(gql, workspace_id, "Second title is ignored", externalId="  plan-42  ")
    assert again["deduplicated"] is True and again["creationComplete"] is True
    assert again["task"] == first["task"] and again["task"]["externalId"] == "plan-42"
    assert await live_tasks(db) == 1


async def test_external_ids_are_byte_exact_and_empty_means_absent(gql, db, workspace_id):
    lower = await create(gql, workspace_id, externalId="job")
    upper = await create(gql, workspace_id, externalId="JOB")
    accented = await create(gql, workspace_id, externalId="jo\u0301b")
    assert len({lower["task"]["id"], upper["task"]["id"], accented["task"]["id"]}) == 3
    blank = [await create(gql, workspace_id, externalId="   ") for _ in range(2)]
    assert all(b["deduplicated"] is False and b["task"]["externalId"] is None for b in blank)
    assert blank[0]["task"]["id"] != blank[1]["task"]["id"]
    plain = await create(gql, workspace_id)
    assert plain["deduplicated"] is False and plain["creationComplete"] is True


async def test_each_workspace_holds_its_own_identity(gql, services, workspace_id):
    other = await services.workspaces.create("Other")
    here = await create(gql, workspace_id, externalId="shared")
    there = await create(gql, other.id, externalId="shared")
    assert there["deduplicated"] is False and there["task"]["id"] != here["task"]["id"]


async def test_deleting_frees_the_identity_and_archiving_keeps_it(gql, workspace_id):
    archived = await create(gql, workspace_id, externalId="keep")
    await gql("mutation($id: ID!) { archiveTask(taskId: $id) { __typename } }", id=archived["task"]["id"])
    assert (await create(gql, workspace_id, externalId="keep"))["task"]["id"] == archived["task"]["id"]
    deleted = await create(gql, workspace_id, externalId="free")
    await gql("mutation($id: ID!) { deleteTask(taskId: $id) { __typename } }", id=deleted["task"]["id"])
    reborn = await create(gql, workspace_id, externalId="free")
    assert reborn["deduplicated"] is False and reborn["task"]["id"] != deleted["task"]["id"]


async def test_an_update_cannot_change_the_identity(gql):
    fields = {f["name"] for f in (await gql(UPDATE_FIELDS))["__type"]["inputFields"]}
    assert "externalId" not in fields


async def test_a_task_whose_create_has_not_finished_reports_creation_complete_false(gql, db, workspace_id):
    held = await create(gql, workspace_id, externalId="in-flight")
    async with db.transaction() as s:  # what a create that claimed the identity and then crashed leaves
        await s.execute(update(Task).where(Task.id == held["task"]["id"]).values(creation_completed_at=None))
    again = await create(gql, workspace_id, externalId="in-flight")
    assert again["deduplicated"] is True and again["creationComplete"] is False
    assert again["task"]["id"] == held["task"]["id"]


async def test_fifty_concurrent_creates_with_one_identity_make_exactly_one_task(services, db, workspace_id):
    async def attempt(n: int):  # noqa: ANN202
        return await services.tasks.create(
            CreateTask(workspace_id=workspace_id, title=f"Attempt {n}", prompt="/say hi", external_id="burst")
        )

    results = await asyncio.wait_for(asyncio.gather(*(attempt(n) for n in range(50))), timeout=120)
    assert len({r.task.id for r in results}) == 1
    assert sum(not r.deduplicated for r in results) == 1
    assert all(r.creation_complete for r in results)
    assert await live_tasks(db, "burst") == 1
    async with db.read() as s:
        sessions = await s.scalar(
            select(func.count()).select_from(Session).where(Session.task_id == results[0].task.id)
        )
    assert sessions == 1  # and one agent start, not fifty
