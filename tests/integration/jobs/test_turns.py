"""Agent turns end to end: a real `kandev worker` (RQ) runs the scripted agent over ACP."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from kandev.domain.sessions.service import DeliveryMode
from kandev.domain.workspace.agent_profiles import AgentProfileFields
from kandev.models import Message, QueuedPrompt, Turn
from kandev.platform.event_bus import session_channel
from kandev.platform.settings import Settings
from tests.support.factories import new_task, settings_for
from tests.support.processes import alive, descendants, wait_gone
from tests.support.watch import watching
from tests.support.workers import running_scheduler, running_worker

pytestmark = pytest.mark.slow


@pytest.fixture
def settings(database_url: str, redis_url: str, tmp_path: Path) -> Settings:
    # A short lease so a dead worker's turn is reaped quickly.
    return settings_for(database_url, redis_url, tmp_path, turn_lease_seconds=3)


async def until_event(events: Any, predicate: Any, timeout: float = 30) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []
    async with asyncio.timeout(timeout):
        async for event in events:
            seen.append(event)
            if predicate(event):
                return seen
    raise AssertionError("event stream ended")


def turn_ended(event: dict[str, Any]) -> bool:
    return event["kind"] == "TURN_ENDED"


async def transcript(db: Any, session_id: str) -> list[tuple[str, str]]:
    async with db.read() as s:
        rows = await s.scalars(select(Message).where(Message.session_id == session_id).order_by(Message.seq))
        return [(m.kind, m.text) for m in rows]


async def turns_of(db: Any, session_id: str) -> list[Turn]:
    async with db.read() as s:
        return list(await s.scalars(select(Turn).where(Turn.session_id == session_id).order_by(Turn.seq)))


async def test_a_say_turn_streams_into_the_transcript_and_the_subscription(services, settings, bus, db, workspace_id):
    task_id = await new_task(services, workspace_id)
    started = await services.sessions.start_task(task_id, "/say Hello from the agent", None)
    session_id = started.session.id
    async with bus.subscribe(session_channel(session_id)) as events:
        with running_worker(settings):  # after subscribing, so no event can be missed
            seen = await until_event(events, turn_ended)
    kinds = [e["kind"] for e in seen]
    assert "TURN_STARTED" in kinds and kinds[-1] == "TURN_ENDED"
    appended = [e["message"] for e in seen if e["kind"] == "MESSAGE_APPENDED"]
    assert [(m["kind"], m["text"]) for m in appended] == [
        ("USER", "/say Hello from the agent"),
        ("AGENT", "Hello from the agent"),
    ]
    assert seen[-1]["turn"]["stop_reason"] == "end_turn" and seen[-1]["turn"]["state"] == "COMPLETED"
    assert await transcript(db, session_id) == [
        ("USER", "/say Hello from the agent"),
        ("AGENT", "Hello from the agent"),
    ]
    session = await services.sessions.get(session_id)
    assert session.state == "WAITING_FOR_INPUT"
    task = await services.tasks.get(task_id)
    assert task.state == "REVIEW"


async def test_three_queued_prompts_run_in_order_one_turn_at_a_time(services, settings, bus, db, workspace_id):
    task_id = await new_task(services, workspace_id)
    started = await services.sessions.start_task(task_id, "/sleep 0.3\n/say one", None)
    session_id = started.session.id
    await services.sessions.send_message(task_id, "/say two")
    await services.sessions.send_message(task_id, "/say three")
    async with bus.subscribe(session_channel(session_id)) as events:
        with running_worker(settings):
            ended = 0

            def third_end(event: dict[str, Any]) -> bool:
                nonlocal ended
                ended += turn_ended(event)
                return ended == 3

            seen = await until_event(events, third_end, timeout=60)
    agent_texts = [m for k, m in await transcript(db, session_id) if k == "AGENT"]
    assert agent_texts == ["one", "two", "three"]
    turns = await turns_of(db, session_id)
    assert [t.seq for t in turns] == [1, 2, 3]
    assert all(t.state == "COMPLETED" for t in turns)
    # one at a time: each turn started after the previous one ended
    for earlier, later in zip(turns, turns[1:], strict=False):
        assert earlier.ended_at is not None and earlier.ended_at <= later.started_at
    starts_and_ends = [e["kind"] for e in seen if e["kind"] in ("TURN_STARTED", "TURN_ENDED")]
    assert starts_and_ends == ["TURN_STARTED", "TURN_ENDED"] * 3


async def test_stop_task_cancels_a_sleeping_turn_within_two_seconds(services, settings, bus, db, workspace_id):
    task_id = await new_task(services, workspace_id)
    with running_worker(settings) as worker:
        started = await services.sessions.start_task(task_id, "/say going to sleep\n/sleep 30", None)
        session_id = started.session.id
        async with watching(bus, db, session_id) as watch:
            await watch.message("AGENT", "going to sleep")
            agents = descendants(worker.pid)
            loop = asyncio.get_running_loop()
            began = loop.time()
            result = await services.sessions.stop_task(task_id)
            [turn] = await watch.turns_ended(1, timeout=10)
            elapsed = loop.time() - began
    assert result.status == "stopped"
    assert elapsed < 2.0, f"cancellation took {elapsed:.2f}s"
    assert turn.state == "CANCELLED" and turn.stop_reason == "cancelled"
    assert (await services.sessions.get(session_id)).state == "CANCELLED"
    assert wait_gone(agents - {worker.pid}, timeout=10) == set()


async def test_an_interrupt_cancels_the_running_turn_and_delivers_the_new_prompt(
    services, settings, bus, db, workspace_id
):
    task_id = await new_task(services, workspace_id)
    with running_worker(settings):
        started = await services.sessions.start_task(task_id, "/say working\n/sleep 30", None)
        session_id = started.session.id
        async with watching(bus, db, session_id) as watch:
            await watch.message("AGENT", "working")
            await services.sessions.send_message(task_id, "/say interrupted you", delivery_mode=DeliveryMode.INTERRUPT)
            turns = await watch.turns_ended(2, timeout=20)
    assert [(t.state, t.stop_reason) for t in turns] == [
        ("CANCELLED", "cancelled"),
        ("COMPLETED", "end_turn"),
    ]
    assert [m for k, m in await transcript(db, session_id) if k == "AGENT"] == ["working", "interrupted you"]


async def test_killing_the_worker_and_its_job_mid_turn_fails_the_turn_and_delivers_the_next_prompt_once(
    services, settings, bus, db, workspace_id
):
    task_id = await new_task(services, workspace_id)
    with running_worker(settings) as worker:
        started = await services.sessions.start_task(task_id, "/say started\n/sleep 60", None)
        session_id = started.session.id
        async with watching(bus, db, session_id) as watch:
            await watch.message("AGENT", "started")
        tree = descendants(worker.pid)
        await services.sessions.send_message(task_id, "/say after the crash")
        for pid in [worker.pid, *tree]:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        assert wait_gone(tree | {worker.pid}, timeout=10) == set(), "an agent or job process survived"
    async with watching(bus, db, session_id) as watch:
        # The scheduler's recovery reaps the turn once its lease expires and re-enqueues the queued prompt.
        with running_worker(settings), running_scheduler(settings):
            turns = await watch.turns_ended(2, timeout=30)
    assert [(t.state, t.stop_reason) for t in turns] == [("FAILED", "failed"), ("COMPLETED", "end_turn")]
    texts = await transcript(db, session_id)
    assert texts.count(("USER", "/say after the crash")) == 1
    assert texts.count(("USER", "/say started\n/sleep 60")) == 1  # never re-sent
    assert any(k == "ERROR" and "stopped responding" in t for k, t in texts)
    assert [t for k, t in texts if k == "AGENT"] == ["started", "after the crash"]
    assert (await services.sessions.get(session_id)).state == "WAITING_FOR_INPUT"
    async with db.read() as s:
        states = list(await s.scalars(select(QueuedPrompt.state).where(QueuedPrompt.session_id == session_id)))
    assert states == ["CLAIMED", "CLAIMED"]


async def test_a_resumed_session_without_native_load_receives_the_last_50_messages(
    services, settings, bus, db, workspace_id, tmp_path
):
    log_file = tmp_path / "prompts.jsonl"
    task_id = await new_task(services, workspace_id)
    started = await services.sessions.start_task(task_id, "/say reply 0", None)
    session_id = started.session.id
    for i in range(1, 30):
        await services.sessions.send_message(task_id, f"/say reply {i}")
    async with bus.subscribe(session_channel(session_id)) as events:
        with running_worker(settings):
            count = 0

            def all_done(event: dict[str, Any]) -> bool:
                nonlocal count
                count += turn_ended(event)
                return count == 30

            await until_event(events, all_done, timeout=120)
        await services.sessions.send_message(task_id, "/say resumed")
        # Have the scripted agent log the prompts it receives (through its profile's env).
        profile_id = (await services.sessions.get(session_id)).agent_profile_id
        await services.agent_profiles.update(profile_id, AgentProfileFields(env={"KANDEV_SCRIPTED_LOG": str(log_file)}))
        # A fresh worker process means a fresh agent process: the scripted agent can't load sessions.
        with running_worker(settings):
            await until_event(events, turn_ended, timeout=30)
    prompts = [json.loads(line)["prompt"] for line in log_file.read_text().splitlines()]
    assert len(prompts) == 1
    resumed = prompts[0]
    history = resumed.split("<kandev-context>", 1)[1].split("</kandev-context>", 1)[0]
    lines = [line for line in history.splitlines() if line.startswith("[")]
    assert len(lines) == 50
    # 60 user/agent messages exist; the newest 50 are kept, oldest first
    assert lines[0] == "[User] /say reply 5" and lines[-1] == "[You] reply 29"
    assert resumed.rstrip().endswith("/say resumed")
