"""POST /api/v1/tasks/{id}/workspace-sources over HTTP: statuses, the no-op retry and its events."""

from __future__ import annotations

import asyncio

from sqlalchemy import select, update

from kandev.models import ExecutorProfile, Session
from kandev.platform.event_bus import session_channel, task_channel
from tests.support.factories import new_task
from tests.support.git_repos import make_repository


def sources_url(task_id: str) -> str:
    return f"/api/v1/tasks/{task_id}/workspace-sources"


async def test_a_batch_is_adopted_with_200_events_and_an_exact_retry_is_a_no_op(
    http, services, bus, workspace_id, tmp_path
):
    task_id = await new_task(services, workspace_id)
    session_id = (await services.sessions.start_task(task_id, "hi", None)).session.id
    project = make_repository(tmp_path / "project")
    notes = tmp_path / "notes"
    notes.mkdir()
    body = {"sources": [{"type": "repository", "local_path": str(project)}, {"type": "folder", "path": str(notes)}]}
    async with bus.subscribe(task_channel(workspace_id)) as tasks, bus.subscribe(session_channel(session_id)) as live:
        response = await http.post(sources_url(task_id), json=body)
        assert response.status_code == 200, response.text
        task_event = await asyncio.wait_for(anext(tasks), timeout=10)
        session_event = await asyncio.wait_for(anext(live), timeout=10)
    payload = response.json()
    assert payload["changed"] is True and payload["task"]["id"] == task_id
    assert [(s["type"], s["name"], s["added"]) for s in payload["sources"]] == [
        ("repository", "project", True),
        ("folder", "notes", True),
    ]
    assert task_event["kind"] == "UPDATED" and task_event["task"]["id"] == task_id
    assert session_event["kind"] == "WORKSPACE_SOURCES_UPDATED"
    retry = await http.post(sources_url(task_id), json=body)
    assert retry.status_code == 200 and retry.json()["changed"] is False


async def test_each_failure_has_its_status_and_changes_nothing(http, services, db, workspace_id, tmp_path):
    task_id = await new_task(services, workspace_id)
    project = make_repository(tmp_path / "project")
    good = {"type": "repository", "local_path": str(project)}
    cases = [
        ({"sources": []}, 400, "VALIDATION"),
        ({"sources": [{"type": "repository", "local_path": "relative"}]}, 400, "VALIDATION"),
        ({"sources": [good], "extra": 1}, 400, "VALIDATION"),
        ({"sources": [{"type": "folder", "path": "/tmp", "colour": "red"}]}, 400, "VALIDATION"),
        ({"sources": [good, {"type": "repository", "repository_id": "nope"}]}, 404, "NOT_FOUND"),
        ({"sources": [good, {**good, "base_branch": "main", "branch": "x"}]}, 409, "CONFLICT"),
        ({"sources": [good, {"type": "folder", "path": str(tmp_path / "missing")}]}, 422, "UNPROCESSABLE"),
    ]
    for body, status, code in cases:
        response = await http.post(sources_url(task_id), json=body)
        assert (response.status_code, response.json()["code"]) == (status, code), (body, response.text)
    missing = await http.post(sources_url("no-such-task"), json={"sources": [good]})
    assert missing.status_code == 404
    async with db.read() as s:
        scratch = await s.scalar(
            select(ExecutorProfile.id).where(
                ExecutorProfile.workspace_id == workspace_id, ExecutorProfile.name == "scratch"
            )
        )
    scratch_task = await new_task(services, workspace_id, executor_profile_id=scratch)
    assert (await http.post(sources_url(scratch_task), json={"sources": [good]})).status_code == 422
    session_id = (await services.sessions.start_task(task_id, "hi", None)).session.id
    async with db.transaction() as s:
        await s.execute(update(Session).where(Session.id == session_id).values(state="RUNNING"))
    busy = await http.post(sources_url(task_id), json={"sources": [good]})
    assert busy.status_code == 409 and "active turn" in busy.json()["error"]
    async with db.transaction() as s:
        await s.execute(update(Session).where(Session.id == session_id).values(state="WAITING_FOR_INPUT"))
    # Nothing from the failed attempts stuck: the first successful batch still adds the repository.
    response = await http.post(sources_url(task_id), json={"sources": [good]})
    assert response.status_code == 200 and response.json()["changed"] is True
