"""Every REST route answers bad input with a 400 naming the field: bodies that are not JSON objects,
unstorable strings in bodies, paths and query strings, and oversized prompts; nothing changes."""

from __future__ import annotations

import json
import logging

import pytest

from kandev.domain.validation import MAX_PROMPT_BYTES
from tests.integration.rest.conftest import rest_client
from tests.support.counts import row_counts
from tests.support.factories import new_task

NOT_OBJECTS = ["[]", '"x"', "1", "null", "true", "{"]
BAD_ESCAPES = {"nul": "\\u0000", "surrogate": "\\ud800"}


def body_with(fields: dict[str, object], field: str, escape: str) -> str:
    """A JSON text whose `field` holds `escape` as a JSON escape sequence, as a client would send it."""
    return json.dumps({**fields, field: "PLACEHOLDER"}).replace("PLACEHOLDER", f"a{escape}b")


async def post(http, path: str, content: str):
    return await http.post(path, content=content, headers={"content-type": "application/json"})


@pytest.mark.parametrize("content", NOT_OBJECTS)
async def test_a_task_body_that_is_not_a_json_object_gets_400(http, db, content):
    before = await row_counts(db)
    response = await post(http, "/api/v1/tasks", content)
    assert response.status_code == 400
    assert response.json()["code"] == "VALIDATION" and response.json()["field"] == "body"
    assert await row_counts(db) == before


@pytest.mark.parametrize("content", NOT_OBJECTS)
async def test_a_sources_body_that_is_not_a_json_object_gets_400(http, db, services, workspace_id, content):
    task_id = await new_task(services, workspace_id, "Sources")
    before = await row_counts(db)
    response = await post(http, f"/api/v1/tasks/{task_id}/workspace-sources", content)
    assert response.status_code == 400 and response.json()["field"] == "body"
    assert await row_counts(db) == before


@pytest.mark.parametrize("kind", sorted(BAD_ESCAPES))
@pytest.mark.parametrize("field", ["title", "prompt", "external_id", "workspace_id"])
async def test_bad_text_in_a_task_body_gets_400_naming_the_field(http, db, workspace_id, kind, field):
    before = await row_counts(db)
    content = body_with({"workspace_id": workspace_id, "title": "ok"}, field, BAD_ESCAPES[kind])
    response = await post(http, "/api/v1/tasks", content)
    assert response.status_code == 400
    assert response.json()["code"] == "VALIDATION" and response.json()["field"] == field
    assert await row_counts(db) == before


@pytest.mark.parametrize("kind", sorted(BAD_ESCAPES))
async def test_bad_text_in_a_source_path_gets_400_naming_its_place(http, db, services, workspace_id, kind):
    task_id = await new_task(services, workspace_id, "Sources")
    content = json.dumps({"sources": [{"type": "folder", "path": "PLACEHOLDER"}]})
    content = content.replace("PLACEHOLDER", f"/tmp/a{BAD_ESCAPES[kind]}")
    before = await row_counts(db)
    response = await post(http, f"/api/v1/tasks/{task_id}/workspace-sources", content)
    assert response.status_code == 400 and response.json()["field"] == "sources[0].path"
    assert await row_counts(db) == before


async def test_a_nul_in_a_path_or_query_parameter_gets_400_naming_it(http, db, workspace_id):
    before = await row_counts(db)
    by_path = await http.get("/api/v1/workspaces/a%00b/tasks/by-external-id", params={"external_id": "x"})
    assert by_path.status_code == 400 and by_path.json()["field"] == "workspace_id"
    by_query = await http.get(f"/api/v1/workspaces/{workspace_id}/tasks/by-external-id?external_id=a%00b")
    assert by_query.status_code == 400 and by_query.json()["field"] == "external_id"
    released = await http.delete(f"/api/v1/workspaces/{workspace_id}/tasks/by-external-id?external_id=a%00b")
    assert released.status_code == 400 and released.json()["field"] == "external_id"
    assert await row_counts(db) == before


async def test_a_prompt_over_one_mib_gets_400_naming_it_where_the_body_cap_lets_it_through(
    settings, db, bus, redis_url, principal, jobs, workspace_id
):
    roomy = settings.model_copy(update={"max_body_bytes": 2 * MAX_PROMPT_BYTES})
    before = await row_counts(db)
    body = {"workspace_id": workspace_id, "title": "t", "prompt": "x" * (MAX_PROMPT_BYTES + 1)}
    async with rest_client(roomy, db, bus, redis_url, principal, jobs) as http:
        response = await http.post("/api/v1/tasks", json=body)
    assert response.status_code == 400 and response.json()["field"] == "prompt"
    assert await row_counts(db) == before


async def test_with_the_default_body_cap_a_prompt_over_one_mib_is_refused_as_a_413(http, db, workspace_id):
    before = await row_counts(db)
    body = {"workspace_id": workspace_id, "title": "t", "prompt": "x" * (MAX_PROMPT_BYTES + 1)}
    response = await http.post("/api/v1/tasks", json=body)
    assert response.status_code == 413 and response.json()["code"] == "BODY_TOO_LARGE"
    assert await row_counts(db) == before


BAD_BODIES = {
    "too_deep": b'{"workspace_id": "w", "title": "t", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    "invalid_utf8": b'{"workspace_id": "w", "title": "\xff\xfe"}',
    "invalid_json": b'{"workspace_id": ',
}


@pytest.mark.parametrize("reason", sorted(BAD_BODIES))
async def test_a_body_nested_100000_deep_not_utf_8_or_not_json_gets_a_typed_400_logged_nowhere(
    http, db, services, workspace_id, reason, caplog
):
    caplog.set_level(logging.INFO)
    task_id = await new_task(services, workspace_id, "Sources")
    before = await row_counts(db)
    for path in ("/api/v1/tasks", f"/api/v1/tasks/{task_id}/workspace-sources"):
        response = await http.post(path, content=BAD_BODIES[reason], headers={"content-type": "application/json"})
        assert response.status_code == 400, path
        body = response.json()
        assert (body["code"], body["field"], body["fields"]["reason"]) == ("VALIDATION", "body", reason), path
    assert await row_counts(db) == before
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
