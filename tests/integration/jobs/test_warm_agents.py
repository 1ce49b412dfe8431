"""Warm agents: a session's agent stays alive in the worker between turns, and is closed (the next turn
launching fresh and resuming) when idle, evicted, its profile changed, or its worker died."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest
from rq import Worker

from kandev.domain.tasks.service import CreateTask
from kandev.domain.workflow.service import final_step_of
from kandev.domain.workspace.agent_profiles import AgentProfileFields
from kandev.platform.job_queues import agent_key, worker_queue_name
from kandev.platform.settings import Settings
from tests.support.factories import new_agent_profile, settings_for, started_task
from tests.support.processes import alive, descendants, wait_gone
from tests.support.watch import watching
from tests.support.workers import running_scheduler, running_worker

pytestmark = pytest.mark.slow


@pytest.fixture
def settings(database_url: str, redis_url: str, tmp_path: Path) -> Settings:
    return settings_for(database_url, redis_url, tmp_path, turn_lease_seconds=3)


async def logged_session(services: Any, workspace_id: str, log: Path, prompt: str, title: str = "Warm") -> str:
    """A started session whose scripted agent logs every prompt with its process id. The profile is its own and
    has the log before the task starts: with a worker already running, the first turn may launch at once."""
    profile = await new_agent_profile(services, workspace_id, f"{title} agent", env={"KANDEV_SCRIPTED_LOG": str(log)})
    return (await started_task(services, workspace_id, prompt, title, agent_profile_id=profile.id)).session_id


def prompts(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


async def task_of(services: Any, session_id: str) -> str:
    return (await services.sessions.get(session_id)).task_id


async def test_two_turns_of_one_session_run_on_one_agent_process(services, settings, bus, db, workspace_id, tmp_path):
    log = tmp_path / "prompts.jsonl"
    session_id = await logged_session(services, workspace_id, log, "/say one")
    task_id = await task_of(services, session_id)
    with running_worker(settings) as worker:
        async with watching(bus, db, session_id) as watch:
            for count, text in enumerate(("/say two", "/say three"), start=1):
                await watch.turns_ended(count)
                await services.sessions.send_message(task_id, text)
            turns = await watch.turns_ended(3)
        agents = descendants(worker.pid)
    first, second, third = prompts(log)
    assert first["pid"] == second["pid"] == third["pid"] and first["pid"] in agents, "one agent process ran them"
    assert "<kandev-context>" in first["prompt"]
    # The first turn moved the task to Review: the changed context precedes the next prompt, once.
    assert second["prompt"].startswith("<kandev-context>") and "Workflow step: Review" in second["prompt"]
    assert third["prompt"] == "/say three", "nothing in the context changed since, so no block is repeated"
    assert [t.state for t in turns] == ["COMPLETED"] * 3
    assert "launch_ms" in (turns[0].timings or {})
    assert all("launch_ms" not in (t.timings or {}) for t in turns[1:])
    assert {t.worker_name for t in turns} == {turns[0].worker_name}


async def test_a_warm_agent_is_closed_when_its_profile_env_changes(services, settings, bus, db, workspace_id, tmp_path):
    log = tmp_path / "prompts.jsonl"
    session_id = await logged_session(services, workspace_id, log, "/say one")
    with running_worker(settings):
        async with watching(bus, db, session_id) as watch:
            await watch.turns_ended(1)
            [first] = prompts(log)
            profile_id = (await services.sessions.get(session_id)).agent_profile_id
            env = {"KANDEV_SCRIPTED_LOG": str(log), "EXTRA": "changed"}
            await services.agent_profiles.update(profile_id, AgentProfileFields(env=env))
            await services.sessions.send_message(await task_of(services, session_id), "/say two")
            await watch.turns_ended(2)
            assert wait_gone({first["pid"]}, timeout=10) == set(), "the stale agent was closed"
    _, second = prompts(log)
    assert second["pid"] != first["pid"]
    # A fresh ACP session: the context block (with the synthesized history) precedes its first prompt.
    assert second["prompt"].startswith("<kandev-context>") and "[You] one" in second["prompt"]


async def test_an_idle_agent_is_closed_after_the_idle_time(services, settings, bus, db, workspace_id, tmp_path):
    log = tmp_path / "prompts.jsonl"
    session_id = await logged_session(services, workspace_id, log, "/say one")
    with running_worker(settings, KANDEV_AGENT_IDLE_SECONDS="1"):
        async with watching(bus, db, session_id) as watch:
            await watch.turns_ended(1)
            [first] = prompts(log)
            assert wait_gone({first["pid"]}, timeout=15) == set(), "the idle agent was closed"
            await services.sessions.send_message(await task_of(services, session_id), "/say two")
            turns = await watch.turns_ended(2)
    assert prompts(log)[1]["pid"] != first["pid"]
    assert turns[1].state == "COMPLETED"


async def test_a_warm_agent_is_closed_when_its_session_ends(services, settings, bus, db, workspace_id, tmp_path):
    log = tmp_path / "prompts.jsonl"
    session_id = await logged_session(services, workspace_id, log, "/say one")
    with running_worker(settings):
        async with watching(bus, db, session_id) as watch:
            await watch.turns_ended(1)
        [first] = prompts(log)
        assert alive(first["pid"]), "warm after its turn"
        task = await services.tasks.get(await task_of(services, session_id))
        await services.tasks.move(task.id, final_step_of(await services.workflows.steps(task.workflow_id)).id)
        assert (await services.sessions.get(session_id)).state == "COMPLETED"
        assert wait_gone({first["pid"]}, timeout=10) == set(), "the ended session's agent was closed"


async def test_the_least_recently_used_agent_is_closed_beyond_the_warm_limit(
    services, settings, bus, db, workspace_id, tmp_path
):
    logs = [tmp_path / "a.jsonl", tmp_path / "b.jsonl"]
    sessions = [await logged_session(services, workspace_id, logs[0], "/say a", title="A")]
    with running_worker(settings, KANDEV_WARM_AGENTS="1"):
        async with watching(bus, db, sessions[0]) as watch:
            await watch.turns_ended(1)
        [older] = prompts(logs[0])
        assert alive(older["pid"])
        sessions.append(await logged_session(services, workspace_id, logs[1], "/say b", title="B"))
        async with watching(bus, db, sessions[1]) as watch:
            await watch.turns_ended(1)
        [newer] = prompts(logs[1])
        assert wait_gone({older["pid"]}, timeout=10) == set(), "the least recently used agent was closed"
        assert alive(newer["pid"]), "the most recent one stays warm"


async def test_a_killed_workers_next_turn_launches_fresh_on_another_worker_and_resumes(
    services, settings, bus, db, workspace_id, tmp_path
):
    log = tmp_path / "prompts.jsonl"
    session_id = await logged_session(services, workspace_id, log, "/say before the kill")
    with running_worker(settings) as worker:
        async with watching(bus, db, session_id) as watch:
            await watch.turns_ended(1)
        [first] = prompts(log)
        os.kill(worker.pid, signal.SIGKILL)
        assert wait_gone({worker.pid, first["pid"]}, timeout=10) == set(), "the warm agent died with its worker"
    async with watching(bus, db, session_id) as watch:
        with running_worker(settings) as other, running_scheduler(settings):
            await services.sessions.send_message(await task_of(services, session_id), "/say after the kill")
            turns = await watch.turns_ended(2, timeout=45)
            agents = descendants(other.pid)
    _, second = prompts(log)
    assert second["pid"] != first["pid"] and second["pid"] in agents
    assert "[You] before the kill" in second["prompt"], "the fresh agent resumed the session's history"
    assert second["prompt"].rstrip().endswith("/say after the kill")
    assert [t.state for t in turns] == ["COMPLETED", "COMPLETED"]
    assert turns[1].worker_name != turns[0].worker_name


async def test_follow_up_turns_go_to_the_idle_worker_holding_the_warm_agent(
    services, settings, bus, db, workspace_id, tmp_path
):
    log = tmp_path / "prompts.jsonl"
    session_id = await logged_session(services, workspace_id, log, "/say one")
    task_id = await task_of(services, session_id)
    with running_worker(settings), running_worker(settings):
        async with watching(bus, db, session_id) as watch:
            for count in range(1, 5):
                await watch.turns_ended(count)
                await watch.until(lambda: warm_somewhere(bus, session_id), timeout=10)
                await services.sessions.send_message(task_id, f"/say follow-up {count}")
            turns = await watch.turns_ended(5)
    assert len({t.worker_name for t in turns}) == 1, "every follow-up ran on the worker holding the agent"
    assert len({p["pid"] for p in prompts(log)}) == 1


async def test_a_turn_job_taken_by_a_worker_without_the_agent_goes_to_the_idle_worker_holding_it(
    services, settings, bus, db, workspace_id, tmp_path, monkeypatch
):
    """Dispatch routes a follow-up to the warm agent's worker, but not every turn job is routed: a starting
    worker's recovery enqueues one for every session with queued prompts, and any worker may take it."""
    log = tmp_path / "prompts.jsonl"
    session_id = await logged_session(services, workspace_id, log, "/say one")
    task_id = await task_of(services, session_id)
    with running_worker(settings) as owner:
        async with watching(bus, db, session_id) as watch:
            await watch.turns_ended(1)
            await until_idle(bus, owner.pid)
            with running_worker(settings) as other:
                other_name = (await worker_key(bus, other.pid)).removeprefix(Worker.redis_worker_namespace_prefix)
                # The follow-up's job lands where only the other worker takes it.
                route = services.ctx.jobs._enqueue_turn
                monkeypatch.setattr(
                    services.ctx.jobs,
                    "_enqueue_turn",
                    lambda session, _queue, description, needed: route(
                        session, worker_queue_name(other_name), description, needed
                    ),
                )
                await services.sessions.send_message(task_id, "/say two")
                turns = await watch.turns_ended(2)
    assert turns[1].worker_name == turns[0].worker_name, "the turn ran on the worker holding the agent"
    assert len({p["pid"] for p in prompts(log)}) == 1, "no agent was launched afresh"


async def test_a_follow_up_for_a_busy_workers_agent_launches_fresh_elsewhere_and_the_owner_closes_its_agent(
    services, settings, bus, db, workspace_id, tmp_path
):
    log = tmp_path / "prompts.jsonl"
    session_id = await logged_session(services, workspace_id, log, "/say one")
    with running_worker(settings):
        async with watching(bus, db, session_id) as watch:
            await watch.turns_ended(1)
        [first] = prompts(log)
        other_task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Busy"))).task
        busy = await services.sessions.start_task(other_task.id, "/say busy\n/sleep 60", None)
        async with watching(bus, db, busy.session.id) as busy_watch:
            await busy_watch.message("AGENT", "busy")
        with running_worker(settings) as other:
            await until_listening(bus, other.pid)
            async with watching(bus, db, session_id) as watch:
                await services.sessions.send_message(await task_of(services, session_id), "/say two")
                turns = await watch.turns_ended(2)
                agents = descendants(other.pid)
            # The owner, still busy with its other job, sees the session ran elsewhere and closes its own agent.
            assert wait_gone({first["pid"]}, timeout=20) == set()
        await services.sessions.stop_task(other_task.id)
    # The busy task's agent shares the profile, so it logs there too.
    second = next(p for p in prompts(log) if "/say two" in p["prompt"])
    assert second["pid"] != first["pid"] and second["pid"] in agents
    assert "[You] one" in second["prompt"], "the fresh agent resumed the session"
    assert turns[1].worker_name != turns[0].worker_name


async def warm_somewhere(bus: Any, session_id: str) -> bool:
    return bool(await bus.redis.exists(agent_key(session_id)))


async def worker_key(bus: Any, pid: int, timeout: float = 30) -> str:
    """The rq registration key of the worker process `pid`, once it has registered (it takes jobs then)."""
    async with asyncio.timeout(timeout):
        while True:
            for key in await bus.redis.smembers("rq:workers"):
                name = key.decode() if isinstance(key, bytes) else key
                if name.endswith(f"-{pid}"):
                    return name
            await asyncio.sleep(0.1)


async def until_listening(bus: Any, pid: int, timeout: float = 30) -> None:
    await worker_key(bus, pid, timeout)


async def until_idle(bus: Any, pid: int, timeout: float = 30) -> None:
    """Until the worker process `pid` runs no job."""
    key = await worker_key(bus, pid, timeout)
    async with asyncio.timeout(timeout):
        while await bus.redis.hget(key, "state") not in (b"idle", "idle"):
            await asyncio.sleep(0.05)


async def test_a_stopping_worker_withdraws_its_warm_agents_at_once_while_its_running_job_finishes(
    services, settings, bus, db, workspace_id, tmp_path
):
    log = tmp_path / "prompts.jsonl"
    session_id = await logged_session(services, workspace_id, log, "/say one")
    with running_worker(settings) as worker:
        async with watching(bus, db, session_id) as watch:
            await watch.turns_ended(1)
            await watch.until(lambda: warm_somewhere(bus, session_id), timeout=10)
        other_task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Busy"))).task
        busy = await services.sessions.start_task(other_task.id, "/say busy\n/sleep 60", None)
        async with watching(bus, db, busy.session.id) as busy_watch:
            await busy_watch.message("AGENT", "busy")
            worker.send_signal(signal.SIGTERM)
            # A follow-up sent now must not be routed to a worker that takes no new job.
            await busy_watch.until(lambda: gone(bus, session_id), timeout=5)
            assert worker.poll() is None, "the worker is still within its running job's grace"


async def gone(bus: Any, session_id: str) -> bool:
    return not await warm_somewhere(bus, session_id)
