"""REST error bodies carry the domain error's code and structured fields beside the message, never a
submitted value."""

from __future__ import annotations

UNKNOWN_WORKSPACE_ID = "kdv_looks-like-a-secret"


async def test_a_not_found_body_names_the_entity_but_never_echoes_the_id(http):
    response = await http.post("/api/v1/tasks", json={"workspace_id": UNKNOWN_WORKSPACE_ID, "title": "x"})
    assert response.status_code == 404
    assert response.json() == {"error": "workspace not found", "code": "NOT_FOUND", "fields": {"entity": "workspace"}}
    assert UNKNOWN_WORKSPACE_ID not in response.text


async def test_a_validation_body_names_the_field_in_its_fields(http, workspace_id):
    response = await http.post("/api/v1/tasks", json={"workspace_id": workspace_id, "title": "   "})
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "VALIDATION" and body["field"] and body["fields"] == {"field": body["field"]}
