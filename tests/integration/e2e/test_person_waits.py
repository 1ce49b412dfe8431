"""A clarification ends the asking turn's job (its agent stays alive with the MCP call open); the worker
runs other turns meanwhile, and the answer reaches the same agent, which finishes the same turn."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from sqlalchemy import select

from kandev.domain.sessions.clarifications import Answer
from kandev.models import Message
from tests.support.factories import started_task
from tests.support.processes import alive, descendants, wait_gone
from tests.support.server import running_server
from tests.support.watch import watching
from tests.support.workers import running_scheduler, running_worker

pytestmark = pytest.mark.slow

QUESTION = {"questions": [{"prompt": "Which database?", "options": [{"label": "sqlite"}, {"label": "postgres"}]}]}


async def messages(db: Any, session_id: str, kind: str) -> list[Message]:
    async with db.read() as s:
        query = select(Message).where(Message.session_id == session_id, Message.kind == kind).order_by(Message.seq)
        return list(await s.scalars(query))


async def until_workers_idle(bus: Any, timeout: float = 30) -> None:
    """Until every live rq worker process (registrations of killed ones linger) runs no job."""
    async with asyncio.timeout(timeout):
        while True:
            states = []
            for key in await bus.redis.smembers("rq:workers"):
                pid, state = await bus.redis.hmget(key, "pid", "state")
                if pid is not None and alive(int(pid)):
                    states.append(state)
            if states and all(s in (b"idle", "idle") for s in states):
                return
            await asyncio.sleep(0.05)


async def test_a_clarification_frees_the_worker_and_its_answer_finishes_the_same_turn_on_the_same_agent(
    services, live, bus, db, workspace_id
):
    script = f"/tool ask_user_question_kandev {json.dumps(QUESTION)}\n/say after the answer"
    asking = (await started_task(services, workspace_id, script, "Asks")).session_id
    async with asyncio.timeout(60):
        while not (rows := (await services.clarifications.pending(workspace_id)).rows):
            await asyncio.sleep(0.1)
    [question] = rows
    # The one worker is free while the question waits: another task's turn runs to its end.
    other = (await started_task(services, workspace_id, "/say meanwhile", "Meanwhile")).session_id
    async with watching(bus, db, other) as watch:
        [turn] = await watch.turns_ended(1, timeout=60)
    assert turn.state == "COMPLETED"
    assert (await services.sessions.get(asking)).state == "RUNNING"
    await until_workers_idle(bus)
    async with watching(bus, db, asking) as watch:
        answer = Answer(question_id=question.questions[0]["id"], selected_options=["postgres"])
        await services.clarifications.answer(question.id, [answer])
        turns = await watch.turns_ended(1, timeout=60)
    assert [t.state for t in turns] == ["COMPLETED"], "the asking turn itself finished, once"
    [call] = await messages(db, asking, "TOOL_CALL")
    assert call.data["raw_output"]["status"] == "answered"
    assert [m.text for m in await messages(db, asking, "AGENT")] == ["after the answer"]


async def test_an_answer_to_a_question_whose_worker_died_continues_the_session_on_another_worker(
    services, settings, bus, db, workspace_id
):
    script = f"/tool ask_user_question_kandev {json.dumps(QUESTION)}\n/say after the answer"
    async with running_server(settings) as address:
        wired = settings.model_copy(update={"public_url": f"http://{address}"})
        with running_worker(wired) as doomed:
            asking = (await started_task(services, workspace_id, script, "Asks")).session_id
            async with asyncio.timeout(60):
                while not (rows := (await services.clarifications.pending(workspace_id)).rows):
                    await asyncio.sleep(0.1)
            [question] = rows
            tree = descendants(doomed.pid)
            doomed.kill()
            assert wait_gone(tree | {doomed.pid}, timeout=10) == set()
        async with watching(bus, db, asking) as watch:
            with running_worker(wired), running_scheduler(wired):
                [reaped] = await watch.turns_ended(1, timeout=30)  # its lease expired: the turn failed
                answer = Answer(question_id=question.questions[0]["id"], selected_options=["postgres"])
                await services.clarifications.answer(question.id, [answer])
                turns = await watch.turns_ended(2, timeout=60)
    assert reaped.state == "FAILED"
    assert [t.state for t in turns] == ["FAILED", "COMPLETED"]
    users = [m.text for m in await messages(db, asking, "USER")]
    assert users[-1].startswith("The user answered your question(s):") and "postgres" in users[-1]
