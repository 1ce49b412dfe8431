"""A child waiting on its parent survives a restart of the server and the worker."""

from __future__ import annotations

import json

import httpx
import pytest
from sqlalchemy import select

from kandev.domain.tasks.service import CreateTask
from kandev.models import Message, QueuedPrompt
from tests.support.server import running_server
from tests.support.watch import watching
from tests.support.workers import running_worker

pytestmark = pytest.mark.slow
ASK = {"questions": [{"prompt": "Keep the old API?"}], "context": "Deciding the migration path"}


async def test_a_waiting_child_is_still_waiting_after_a_restart_with_one_parent_prompt(
    settings, services, bus, db, workspace_id
):
    parent = (
        await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Parent", start_agent=False))
    ).task
    child = (
        await services.tasks.create(
            CreateTask(
                workspace_id=workspace_id,
                title="Child",
                parent_id=parent.id,
                autopilot=True,
                start_agent=False,
            )
        )
    ).task
    async with running_server(settings) as address:
        wired = settings.model_copy(update={"public_url": f"http://{address}"})
        with running_worker(wired):
            parent_session = (await services.sessions.start_task(parent.id, "/say ready", None)).session
            child_session = (
                await services.sessions.start_task(
                    child.id, f"/tool ask_parent_question_kandev {json.dumps(ASK)}", None
                )
            ).session
            async with (
                watching(bus, db, child_session.id) as child_watch,
                watching(bus, db, parent_session.id) as parent_watch,
            ):
                await child_watch.turns_ended(1, timeout=60)
                await parent_watch.turns_ended(2, timeout=60)  # "ready", then the question
    # Everything stopped. Start again: recovery runs, nothing is delivered twice, the wait holds.
    async with running_server(settings) as address:
        wired = settings.model_copy(update={"public_url": f"http://{address}"})
        with running_worker(wired):
            query = """query($id: ID!) { task(id: $id) { pendingAction pendingParentQuestion { status questions }
              sessions { state } } }"""
            async with httpx.AsyncClient(base_url=f"http://{address}", timeout=10) as http:
                data = (await http.post("/graphql", json={"query": query, "variables": {"id": child.id}})).json()[
                    "data"
                ]
    task = data["task"]
    assert task["pendingAction"] == "CLARIFICATION"
    assert task["pendingParentQuestion"]["status"] == "PENDING"
    assert task["pendingParentQuestion"]["questions"][0]["prompt"] == "Keep the old API?"
    assert task["sessions"][0]["state"] == "WAITING_FOR_INPUT"
    async with db.read() as s:
        queued = list(
            await s.scalars(
                select(QueuedPrompt).where(
                    QueuedPrompt.session_id == parent_session.id, QueuedPrompt.source == "parent_question"
                )
            )
        )
        delivered = list(
            await s.scalars(select(Message).where(Message.session_id == parent_session.id, Message.kind == "USER"))
        )
    assert len(queued) == 1
    sources = [m.data.get("source") for m in delivered]
    assert len(sources) == 2 and sources.count("parent_question") == 1  # the start prompt, then the question once
