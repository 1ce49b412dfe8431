"""How turns end, end to end on a real worker running scripted agents over ACP: one message per `/say`,
stops that say who stopped, launch failures that fail the task, and failed turns that fail their RQ job."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path
from typing import Any

import pytest
from rq.job import Job
from rq.registry import FailedJobRegistry
from sqlalchemy import select

from kandev.domain.sessions.service import DeliveryMode
from kandev.models import Message
from kandev.models.enums import AgentKind
from kandev.platform.job_queues import TURNS
from kandev.platform.redis_client import sync_redis
from kandev.platform.settings import Settings
from tests.support.factories import new_agent_profile, new_task, settings_for
from tests.support.watch import watching
from tests.support.workers import running_worker

pytestmark = pytest.mark.slow

LAST_ERROR = "query($id: ID!) { task(id: $id) { state lastTurnError { message stopReason endedAt } } }"


@pytest.fixture
def settings(database_url: str, redis_url: str, tmp_path: Path) -> Settings:
    return settings_for(database_url, redis_url, tmp_path, turn_lease_seconds=3)


async def messages(db: Any, session_id: str, kind: str) -> list[str]:
    async with db.read() as s:
        rows = await s.scalars(
            select(Message.text).where(Message.session_id == session_id, Message.kind == kind).order_by(Message.seq)
        )
        return list(rows)


async def job_failed(redis_url: str, job_id: str, timeout: float = 15) -> Job:
    """The job once RQ has filed it as failed (it ends just after the turn's state is committed)."""
    connection = sync_redis(redis_url)
    registry = FailedJobRegistry(TURNS, connection=connection)
    async with asyncio.timeout(timeout):
        while job_id not in registry.get_job_ids():
            await asyncio.sleep(0.1)
    return Job.fetch(job_id, connection=connection)


async def test_two_say_lines_are_two_agent_messages(services, settings, bus, db, workspace_id):
    task_id = await new_task(services, workspace_id)
    started = await services.sessions.start_task(task_id, "/say still here after 2 seconds\n/say done", None)
    async with watching(bus, db, started.session.id) as watch:
        with running_worker(settings):
            [turn] = await watch.turns_ended(1, timeout=60)
    assert turn.state == "COMPLETED", turn.error
    assert await messages(db, started.session.id, "AGENT") == ["still here after 2 seconds", "done"]


async def test_stop_and_interrupt_leave_system_messages_naming_who(services, settings, bus, db, workspace_id):
    task_id = await new_task(services, workspace_id)
    actor = services.ctx.principal.actor
    with running_worker(settings):
        started = await services.sessions.start_task(task_id, "/say working\n/sleep 30", None)
        session_id = started.session.id
        async with watching(bus, db, session_id) as watch:
            await watch.message("AGENT", "working")
            await services.sessions.send_message(task_id, "/say next\n/sleep 30", delivery_mode=DeliveryMode.INTERRUPT)
            await watch.message("AGENT", "next")
            await services.sessions.stop_task(task_id)
            turns = await watch.turns_ended(2, timeout=30)
    assert [t.state for t in turns] == ["CANCELLED", "CANCELLED"]
    assert await messages(db, session_id, "SYSTEM") == [
        f"Interrupted by {actor}: the running turn was cancelled for a new prompt.",
        f"Stopped by {actor}: the running turn was cancelled and the session ended.",
    ]


async def test_a_profile_whose_command_does_not_exist_fails_the_session_and_the_task(
    services, settings, bus, db, gql, workspace_id, tmp_path
):
    # The command exists where the task is started, and is gone by the time the worker launches it.
    agent = tmp_path / "kandev-no-such-agent-binary"
    agent.write_text("#!/bin/sh\nexit 1\n")
    agent.chmod(0o755)
    profile = await new_agent_profile(services, workspace_id, "Missing", AgentKind.ACP, command=[str(agent)])
    task_id = await new_task(services, workspace_id)
    started = await services.sessions.start_task(task_id, "hello", profile.id)
    agent.unlink()
    async with watching(bus, db, started.session.id) as watch:
        with running_worker(settings):
            [turn] = await watch.turns_ended(1, timeout=60)
            job = await job_failed(settings.redis_url, turn.job_id or "")
    assert turn.state == "FAILED" and "kandev-no-such-agent-binary" in (turn.error or "")
    assert (await services.sessions.get(started.session.id)).state == "FAILED"
    task = (await gql(LAST_ERROR, id=task_id))["task"]
    assert task["state"] == "FAILED"
    assert "kandev-no-such-agent-binary" in task["lastTurnError"]["message"]
    assert "kandev-no-such-agent-binary" in (job.exc_info or "")


async def test_a_failing_turn_waits_for_input_with_its_error_fails_its_job_and_a_good_turn_clears_it(
    services, settings, bus, db, gql, workspace_id
):
    task_id = await new_task(services, workspace_id)
    started = await services.sessions.start_task(task_id, "/fail the model is overloaded", None)
    async with watching(bus, db, started.session.id) as watch:
        with running_worker(settings):
            failed = await watch.next_turn_end(timeout=60)
            job = await job_failed(settings.redis_url, failed.job_id or "")
            task = (await gql(LAST_ERROR, id=task_id))["task"]
            assert task["state"] == "WAITING_FOR_INPUT"
            assert (await services.sessions.get(started.session.id)).state == "WAITING_FOR_INPUT"
            error = task["lastTurnError"]
            assert "the model is overloaded" in error["message"] and error["stopReason"] == "failed"
            assert error["endedAt"]
            await services.sessions.send_message(task_id, "/say better now")
            good = await watch.next_turn_end(timeout=60)
    assert failed.state == "FAILED" and good.state == "COMPLETED"
    assert job.get_status() == "failed" and "the model is overloaded" in (job.exc_info or "")
    assert "TurnFailed" in (job.exc_info or "")
    task = (await gql(LAST_ERROR, id=task_id))["task"]
    assert task["state"] == "REVIEW" and task["lastTurnError"] is None


async def test_a_turn_cut_short_by_a_worker_shutdown_says_so(services, settings, bus, db, workspace_id):
    task_id = await new_task(services, workspace_id)
    started = await services.sessions.start_task(task_id, "/say started\n/sleep 60", None)
    async with watching(bus, db, started.session.id) as watch:
        with running_worker(settings) as worker:
            await watch.message("AGENT", "started")
            worker.send_signal(signal.SIGTERM)
            [turn] = await watch.turns_ended(1, timeout=15)
            assert await asyncio.to_thread(worker.wait, 15) == 0
    assert turn.state == "FAILED" and "was shut down" in (turn.error or "")
    errors = await messages(db, started.session.id, "ERROR")
    assert errors == [turn.error] and not any("stopped responding" in e for e in errors)
    assert (await services.sessions.get(started.session.id)).state == "WAITING_FOR_INPUT"


async def signed_out_agent(services: Any, workspace_id: str, when: str) -> str:
    """A scripted ACP agent that answers like Claude Code without a login (at launch) or with an expired one."""
    return (
        await new_agent_profile(services, workspace_id, f"Signed out ({when})", env={"KANDEV_SCRIPTED_AUTH": when})
    ).id


async def test_an_agent_that_is_not_signed_in_fails_its_launch_naming_the_cause(
    services, settings, bus, db, gql, workspace_id
):
    profile_id = await signed_out_agent(services, workspace_id, "launch")
    task_id = await new_task(services, workspace_id)
    started = await services.sessions.start_task(task_id, "hello", profile_id)
    async with watching(bus, db, started.session.id) as watch:
        with running_worker(settings):
            [turn] = await watch.turns_ended(1, timeout=60)
    assert turn.state == "FAILED"
    assert (await services.sessions.get(started.session.id)).state == "FAILED"
    task = (await gql(LAST_ERROR, id=task_id))["task"]
    message = task["lastTurnError"]["message"]
    assert task["state"] == "FAILED"
    assert "not signed in" in message and "claude /login" in message and "Scripted login" in message, message


async def test_an_agent_whose_sign_in_expired_fails_the_turn_and_waits_for_input_naming_the_cause(
    services, settings, bus, db, gql, workspace_id
):
    profile_id = await signed_out_agent(services, workspace_id, "prompt")
    task_id = await new_task(services, workspace_id)
    started = await services.sessions.start_task(task_id, "hello", profile_id)
    async with watching(bus, db, started.session.id) as watch:
        with running_worker(settings):
            [turn] = await watch.turns_ended(1, timeout=60)
    assert turn.state == "FAILED" and "not signed in" in (turn.error or "")
    assert (await services.sessions.get(started.session.id)).state == "WAITING_FOR_INPUT"
    task = (await gql(LAST_ERROR, id=task_id))["task"]
    assert task["state"] == "WAITING_FOR_INPUT"
    assert "Please run /login" in task["lastTurnError"]["message"], task
    assert await messages(db, started.session.id, "ERROR") == [turn.error]
