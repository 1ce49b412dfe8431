"""A turn waiting on a person ends its job: the worker runs other turns meanwhile, and the answer is
delivered back to the waiting agent, or continues the session elsewhere when its worker is busy."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from redis import Redis
from rq.job import Job
from rq.registry import FinishedJobRegistry
from sqlalchemy import select

from kandev.domain.workspace.agent_profiles import AgentProfileFields
from kandev.models import Message
from kandev.models.enums import PermissionPolicy
from kandev.platform.job_queues import DELIVER_JOB, worker_queue_name
from kandev.platform.settings import Settings
from tests.integration.jobs.test_warm_agents import until_idle, until_listening, worker_key
from tests.support.factories import settings_for, started_task
from tests.support.processes import descendants, wait_gone
from tests.support.watch import watching
from tests.support.workers import running_worker

pytestmark = pytest.mark.slow

ASK = "/permission rm -rf build"


@pytest.fixture
def settings(database_url: str, redis_url: str, tmp_path: Path) -> Settings:
    return settings_for(database_url, redis_url, tmp_path, turn_lease_seconds=3)


async def asking_session(services: Any, workspace_id: str) -> str:
    session_id = (await started_task(services, workspace_id, ASK, "Asks")).session_id
    profile_id = (await services.sessions.get(session_id)).agent_profile_id
    await services.agent_profiles.update(profile_id, AgentProfileFields(permission_policy=PermissionPolicy.ASK))
    return session_id


async def pending_request(services: Any, workspace_id: str, session_id: str, timeout: float = 30) -> str:
    async with asyncio.timeout(timeout):
        while not (rows := await services.permissions.pending(workspace_id, session_id=session_id)):
            await asyncio.sleep(0.1)
    return rows[0].id


async def delivered(settings: Settings, key: str, timeout: float = 20) -> list[Any]:
    """The results of the answer-delivery jobs the worker registered as `key` finished on its own queue."""
    connection = Redis.from_url(settings.redis_url or "")
    registry = FinishedJobRegistry(worker_queue_name(key.removeprefix("rq:worker:")), connection=connection)
    try:
        async with asyncio.timeout(timeout):
            while not (ids := registry.get_job_ids()):
                await asyncio.sleep(0.1)
        jobs = [Job.fetch(job_id, connection=connection) for job_id in ids]
        return [job.return_value() for job in jobs if job.func_name == DELIVER_JOB]
    finally:
        connection.close()


async def texts(db: Any, session_id: str) -> list[tuple[str, str]]:
    async with db.read() as s:
        rows = await s.scalars(select(Message).where(Message.session_id == session_id).order_by(Message.seq))
        return [(m.kind, m.text) for m in rows]


async def test_a_permission_wait_on_one_task_lets_five_other_tasks_turns_complete_on_one_worker(
    services, settings, bus, db, workspace_id
):
    waiting = await asking_session(services, workspace_id)
    with running_worker(settings) as worker:
        request_id = await pending_request(services, workspace_id, waiting)
        agent = descendants(worker.pid)  # the agent and its keeper
        others = [
            (await started_task(services, workspace_id, f"/say done {i}", f"Other {i}")).session_id for i in range(5)
        ]
        for i, session_id in enumerate(others):
            async with watching(bus, db, session_id) as watch:
                [turn] = await watch.turns_ended(1, timeout=60)
            assert turn.state == "COMPLETED"
            assert ("AGENT", f"done {i}") in await texts(db, session_id)
        assert (await services.sessions.get(waiting)).state == "RUNNING", "the waiting turn is still open"
        await until_idle(bus, worker.pid)  # a busy owner would hand the answer over (the next test)
        async with watching(bus, db, waiting) as watch:
            await services.permissions.resolve(request_id, "allow")
            [turn] = await watch.turns_ended(1)
        assert agent <= descendants(worker.pid), "the same agent process got the answer"
        # A job on the worker's own queue took the answer and followed the turn to its end.
        assert await delivered(settings, await worker_key(bus, worker.pid)) == ["ran 1 turn(s)"]
    assert turn.state == "COMPLETED"
    transcript = await texts(db, waiting)
    assert ("AGENT", f"permission {ASK.split(' ', 1)[1]}: allow") in transcript
    # The conversation keeps what was asked and who answered what, in order.
    asked = transcript.index(("SYSTEM", "Permission asked: rm -rf build"))
    answered = transcript.index(("SYSTEM", "Permission answered: Allow (by local)"))
    assert asked < answered < transcript.index(("AGENT", "permission rm -rf build: allow"))


async def test_an_answer_for_a_busy_worker_ends_the_wait_and_continues_the_session_on_a_free_worker(
    services, settings, bus, db, workspace_id
):
    waiting = await asking_session(services, workspace_id)
    with running_worker(settings) as owner:
        request_id = await pending_request(services, workspace_id, waiting)
        agent = descendants(owner.pid)
        busy = (await started_task(services, workspace_id, "/say busy\n/sleep 60", "Busy")).session_id
        async with watching(bus, db, busy) as watch:
            await watch.message("AGENT", "busy")
        with running_worker(settings) as other:
            await until_listening(bus, other.pid)
            async with watching(bus, db, waiting) as watch:
                await services.permissions.resolve(request_id, "allow")
                turns = await watch.turns_ended(2, timeout=60)
            assert wait_gone(agent, timeout=10) == set(), "the waiting agent was closed"
        await services.sessions.stop_task((await services.sessions.get(busy)).task_id)
    assert [t.state for t in turns] == ["CANCELLED", "COMPLETED"]
    assert turns[1].worker_name != turns[0].worker_name
    transcript = await texts(db, waiting)
    assert any(k == "USER" and 'permission request "rm -rf build": Allow' in t for k, t in transcript)


async def test_stopping_a_task_whose_turn_waits_on_a_permission_cancels_it_over_redis_and_closes_its_agent(
    services, settings, bus, db, workspace_id
):
    waiting = await asking_session(services, workspace_id)
    with running_worker(settings) as worker:
        request_id = await pending_request(services, workspace_id, waiting)
        agent = descendants(worker.pid)
        async with watching(bus, db, waiting) as watch:
            result = await services.sessions.stop_task((await services.sessions.get(waiting)).task_id)
            [turn] = await watch.turns_ended(1, timeout=15)
        assert wait_gone(agent, timeout=10) == set(), "the waiting agent was closed"
        assert worker.poll() is None
    assert result.status == "stopped"
    assert turn.state == "CANCELLED"
    assert not await services.permissions.pending(workspace_id, session_id=waiting)
    transcript = await texts(db, waiting)
    asked = transcript.index(("SYSTEM", "Permission asked: rm -rf build"))
    assert transcript.index(("SYSTEM", "Permission request withdrawn: the turn ended before an answer")) > asked
    async with db.read() as s:
        notes = (await s.scalars(select(Message).where(Message.session_id == waiting, Message.kind == "SYSTEM"))).all()
    assert {n.data["permission"]["id"] for n in notes if "permission" in n.data} == {request_id}
