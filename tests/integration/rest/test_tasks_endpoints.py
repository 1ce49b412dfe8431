"""POST /api/v1/tasks and GET|DELETE /api/v1/workspaces/{id}/tasks/by-external-id over HTTP."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select, update

from kandev.domain.access.bootstrap import bootstrap
from kandev.domain.access.tokens import create_token
from kandev.domain.access.users import create_user
from kandev.migrations import upgrade_to_head
from kandev.models import QueuedPrompt, Session, Task
from kandev.platform.database import Database
from kandev.platform.settings import Settings
from tests.integration.rest.conftest import rest_client
from tests.support.databases import create_postgres_database, drop_postgres_database, postgres_server_url
from tests.support.factories import settings_for

SECRET = "sk-live-SECRET-VALUE-4242"


def by_external_id(workspace_id: str) -> str:
    return f"/api/v1/workspaces/{workspace_id}/tasks/by-external-id"


async def task_rows(db: Database, external_id: str | None = None) -> list[Task]:
    async with db.read() as s:
        query = select(Task).where(Task.deleted_at.is_(None))
        if external_id is not None:
            query = query.where(Task.external_id == external_id)
        return list(await s.scalars(query))


async def test_post_creates_with_201_and_a_retry_answers_200_with_the_same_task(http, db, workspace_id):
    body = {
        "workspace_id": workspace_id,
        "title": "Nightly report",
        "prompt": "/say hi",
        "external_id": "nightly-7",
    }
    first = await http.post("/api/v1/tasks", json=body)
    assert first.status_code == 201
    created = first.json()
    assert created["deduplicated"] is False and created["creation_complete"] is True
    task = created["task"]
    assert task["title"] == "Nightly report" and task["external_id"] == "nightly-7" and task["state"] == "SCHEDULING"
    assert task["workspace_id"] == workspace_id and "id" in task and "created_at" in task
    retry = await http.post("/api/v1/tasks", json={**body, "title": "Other", "external_id": " nightly-7 "})
    assert retry.status_code == 200
    assert retry.json() == {"task": task, "deduplicated": True, "creation_complete": True}
    async with db.read() as s:
        prompts = await s.scalar(select(func.count()).select_from(QueuedPrompt))
    assert prompts == 1 and len(await task_rows(db)) == 1


async def test_post_without_an_external_id_always_creates(http, workspace_id):
    for _ in range(2):
        response = await http.post(
            "/api/v1/tasks", json={"workspace_id": workspace_id, "title": "T", "external_id": ""}
        )
        assert response.status_code == 201 and response.json()["deduplicated"] is False


async def test_post_takes_the_create_task_tool_fields_including_dependencies(http, workspace_id):
    first = (
        await http.post("/api/v1/tasks", json={"workspace_id": workspace_id, "title": "A", "start_agent": False})
    ).json()
    second = await http.post(
        "/api/v1/tasks",
        json={
            "workspace_id": workspace_id,
            "title": "B",
            "description": "/say b",
            "blocked_by": [first["task"]["id"]],
        },
    )
    assert second.status_code == 201
    task = second.json()["task"]
    assert task["state"] == "BLOCKED" and first["task"]["id"] in task["block_reason"] and task["prompt"] == "/say b"


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({"title": "no workspace"}, "workspace_id"),
        ({"workspace_id": "w"}, "title"),
        ({"workspace_id": "w", "title": "x", "unexpected": SECRET}, "unknown field: unexpected"),
        ({"workspace_id": "w", "title": "x", "external_id": 7}, "must be of type string"),
        (
            {"workspace_id": "w", "title": "x", "prompt": "a", "description": "b"},
            "either prompt or description",
        ),
        ({"workspace_id": "w", "title": "x", "parent_id": "self"}, "only works inside a task session"),
        ({"workspace_id": "w", "title": SECRET * 20}, "too long"),
    ],
)
async def test_post_rejects_bad_bodies_with_400_without_echoing_values(http, db, body, fragment):
    response = await http.post("/api/v1/tasks", json=body)
    assert response.status_code == 400
    error = response.json()
    assert error["code"] == "VALIDATION" and fragment in error["error"] and SECRET not in response.text
    assert await task_rows(db) == []


async def test_post_answers_bad_json_with_400_and_unknown_workspaces_with_404(http):
    broken = await http.post("/api/v1/tasks", content=b"{not json", headers={"content-type": "application/json"})
    assert broken.status_code == 400 and broken.json()["code"] == "VALIDATION"
    listed = await http.post("/api/v1/tasks", json=[1, 2])
    assert listed.status_code == 400
    missing = await http.post("/api/v1/tasks", json={"workspace_id": "nope", "title": "x"})
    assert missing.status_code == 404 and missing.json()["code"] == "NOT_FOUND"


async def test_get_finds_the_holder_and_delete_frees_the_identity_but_leaves_the_task(http, db, workspace_id):
    url = by_external_id(workspace_id)
    assert (await http.get(url, params={"external_id": "ext-1"})).status_code == 404
    created = (
        await http.post("/api/v1/tasks", json={"workspace_id": workspace_id, "title": "T", "external_id": "ext-1"})
    ).json()
    found = await http.get(url, params={"external_id": "ext-1"})
    assert found.status_code == 200
    assert found.json() == {"task": created["task"], "creation_complete": True}
    assert (await http.get(url, params={"external_id": "EXT-1"})).status_code == 404  # byte-exact

    released = await http.delete(url, params={"external_id": "ext-1"})
    assert released.status_code == 204 and released.content == b""
    assert (await http.get(url, params={"external_id": "ext-1"})).status_code == 404
    assert (await http.delete(url, params={"external_id": "ext-1"})).status_code == 404
    [task] = await task_rows(db)
    assert task.id == created["task"]["id"] and task.title == "T" and task.external_id is None
    fresh = await http.post(
        "/api/v1/tasks", json={"workspace_id": workspace_id, "title": "New", "external_id": "ext-1"}
    )
    assert fresh.status_code == 201 and fresh.json()["task"]["id"] != task.id


async def test_get_shows_an_unsettled_create(http, db, workspace_id):
    created = (
        await http.post("/api/v1/tasks", json={"workspace_id": workspace_id, "title": "T", "external_id": "slow"})
    ).json()
    async with db.transaction() as s:
        await s.execute(update(Task).where(Task.id == created["task"]["id"]).values(creation_completed_at=None))
    found = await http.get(by_external_id(workspace_id), params={"external_id": "slow"})
    assert found.status_code == 200 and found.json()["creation_complete"] is False
    retry = await http.post("/api/v1/tasks", json={"workspace_id": workspace_id, "title": "T", "external_id": "slow"})
    assert retry.status_code == 200 and retry.json()["creation_complete"] is False


async def test_by_external_id_needs_the_parameter_and_a_visible_workspace(http, workspace_id):
    assert (await http.get(by_external_id(workspace_id))).status_code == 400
    assert (await http.get(by_external_id(workspace_id), params={"external_id": "  "})).status_code == 400
    assert (await http.delete(by_external_id("elsewhere"), params={"external_id": "x"})).status_code == 404


async def test_fifty_concurrent_posts_with_one_identity_make_exactly_one_task(http, db, workspace_id):
    await assert_one_task_from_fifty_posts(http, db, workspace_id)


async def assert_one_task_from_fifty_posts(http: httpx.AsyncClient, db: Database, workspace_id: str) -> None:
    body = {"workspace_id": workspace_id, "title": "Burst", "prompt": "/say once", "external_id": "burst-1"}
    responses = await asyncio.wait_for(
        asyncio.gather(*(http.post("/api/v1/tasks", json=body) for _ in range(50))), timeout=120
    )
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [200] * 49 + [201], [r.text for r in responses if r.status_code not in (200, 201)][:3]
    assert len({r.json()["task"]["id"] for r in responses}) == 1
    assert sum(r.json()["deduplicated"] for r in responses) == 49
    assert all(r.json()["creation_complete"] for r in responses)
    [task] = await task_rows(db, "burst-1")
    async with db.read() as s:
        sessions = await s.scalar(select(func.count()).select_from(Session).where(Session.task_id == task.id))
    assert sessions == 1


@pytest.mark.postgres
@pytest.mark.skipif(
    postgres_server_url() is None,
    reason="KANDEV_TEST_POSTGRES_URL is not set: no PostgreSQL server to create the test database on",
)
async def test_fifty_concurrent_posts_make_exactly_one_task_on_postgresql(redis_url, bus, jobs, tmp_path: Path):
    server = postgres_server_url()
    assert server is not None
    url = await create_postgres_database(server)
    database: Database | None = None
    try:
        await asyncio.to_thread(upgrade_to_head, url)
        settings = Settings(database_url=url, redis_url=redis_url, data_dir=tmp_path / "pg-data")
        database = Database(url)
        principal = await bootstrap(database, settings)
        async with rest_client(settings, database, bus, redis_url, principal, jobs) as client:
            async with database.read() as s:
                from kandev.models import Workspace

                workspace_id = await s.scalar(select(Workspace.id))
            await assert_one_task_from_fifty_posts(client, database, workspace_id)
    finally:
        if database is not None:
            await database.dispose()
        await drop_postgres_database(server, url)


@pytest.fixture
def auth_settings(database_url: str, redis_url: str, tmp_path: Path) -> Settings:
    return settings_for(database_url, redis_url, tmp_path, auth="on")


async def test_with_auth_on_the_endpoints_need_a_personal_access_token(auth_settings, bus, redis_url, jobs):
    database = Database(auth_settings.resolved_database_url())
    try:
        principal = await bootstrap(database, auth_settings)
        token = (await create_token(database, name="ci", login="local")).token
        await create_user(database, "mallory")
        stranger = (await create_token(database, name="other", login="mallory")).token
        async with rest_client(auth_settings, database, bus, redis_url, principal, jobs) as client:
            async with database.read() as s:
                from kandev.models import Workspace

                workspace_id = await s.scalar(select(Workspace.id))
            body = {"workspace_id": workspace_id, "title": "T", "external_id": "auth-1"}
            refused = await client.post("/api/v1/tasks", json=body)
            assert refused.status_code == 401 and refused.json()["code"] == "UNAUTHENTICATED"
            assert refused.headers["www-authenticate"] == "Bearer"
            bad = await client.post("/api/v1/tasks", json=body, headers={"Authorization": "Bearer kdv_wrong"})
            assert bad.status_code == 401
            url = by_external_id(workspace_id)
            assert (await client.get(url, params={"external_id": "auth-1"})).status_code == 401
            ok = await client.post("/api/v1/tasks", json=body, headers={"Authorization": f"Bearer {token}"})
            assert ok.status_code == 201
            theirs = {"Authorization": f"Bearer {stranger}"}
            assert (await client.post("/api/v1/tasks", json=body, headers=theirs)).status_code == 404
            assert (await client.get(url, params={"external_id": "auth-1"}, headers=theirs)).status_code == 404
            assert (await client.delete(url, params={"external_id": "auth-1"}, headers=theirs)).status_code == 404
            mine = await client.get(url, params={"external_id": "auth-1"}, headers={"Authorization": f"Bearer {token}"})
            assert mine.status_code == 200
    finally:
        await database.dispose()


async def test_a_create_whose_agent_cannot_start_is_a_409_and_leaves_nothing(http, db, workspace_id):
    from kandev.models import AgentProfile

    async with db.transaction() as s:
        broken = AgentProfile(workspace_id=workspace_id, name="Broken", kind="ACP", command=["no-such-agent-binary"])
        s.add(broken)
        await s.flush()
        profile_id = broken.id
    body = {
        "workspace_id": workspace_id,
        "title": "T",
        "prompt": "go",
        "agent_profile_id": profile_id,
        "external_id": "x",
    }
    response = await http.post("/api/v1/tasks", json=body)
    assert response.status_code == 409 and response.json()["code"] == "CONFLICT"
    assert await task_rows(db) == []  # the create is one transaction: the identity stays free
    assert (await http.get(by_external_id(workspace_id), params={"external_id": "x"})).status_code == 404
