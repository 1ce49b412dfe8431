"""Fifty concurrent createTask calls with one externalId through /graphql on a real server."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from kandev.models import Session, Task
from tests.support.server import running_server

pytestmark = [pytest.mark.reliability, pytest.mark.slow]

CALLS = 50
CREATE = """mutation($input: CreateTaskInput!) { createTask(input: $input) { __typename
  ... on CreateTaskPayload { deduplicated creationComplete task { id externalId } }
  ... on Error { code message } } }"""


async def test_fifty_concurrent_same_external_id_creates_make_one_task_that_every_answer_names(
    settings, db, workspace_id
):
    body = {
        "query": CREATE,
        "variables": {
            "input": {"workspaceId": workspace_id, "title": "Burst", "prompt": "/say once", "externalId": "rel-burst"}
        },
    }
    async with running_server(settings) as address:
        limits = httpx.Limits(max_connections=CALLS)
        async with httpx.AsyncClient(base_url=f"http://{address}", timeout=60, limits=limits) as http:
            began = time.monotonic()
            responses = await asyncio.wait_for(
                asyncio.gather(*(http.post("/graphql", json=body) for _ in range(CALLS))), timeout=120
            )
            elapsed = time.monotonic() - began
    assert [r.status_code for r in responses] == [200] * CALLS, [r.text for r in responses if r.status_code != 200]
    payloads: list[dict[str, Any]] = []
    for response in responses:
        answer = response.json()
        assert "errors" not in answer, answer["errors"]
        payloads.append(answer["data"]["createTask"])
    created = [p for p in payloads if p["__typename"] == "CreateTaskPayload"]
    conflicts = [p for p in payloads if p["__typename"] != "CreateTaskPayload"]
    assert all(p["__typename"] == "ConflictError" and p["code"] for p in conflicts), conflicts
    assert created, "no call was answered with the task"
    assert len({p["task"]["id"] for p in created}) == 1
    assert sum(not p["deduplicated"] for p in created) == 1
    async with db.read() as s:
        tasks = list(await s.scalars(select(Task).where(Task.external_id == "rel-burst")))
        assert len(tasks) == 1 and tasks[0].id == created[0]["task"]["id"]
        sessions = await s.scalar(select(func.count()).select_from(Session).where(Session.task_id == tasks[0].id))
    assert sessions == 1  # one agent start, not fifty
    print(
        f"\n[reliability] {CALLS} concurrent createTask: {len(created)} named the task, "
        f"{len(conflicts)} typed conflicts, {elapsed:.2f}s"
    )
