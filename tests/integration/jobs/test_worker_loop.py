"""The non-forking worker: a turn job that runs past its rq timeout is ended on the worker's loop (the turn
failed, saying so; its agent closed) and the same worker goes on to the next turn."""

from __future__ import annotations

from pathlib import Path

import pytest

from kandev.domain.tasks.service import CreateTask
from kandev.platform.settings import Settings
from tests.support.factories import settings_for
from tests.support.processes import alive, descendants, wait_gone
from tests.support.watch import watching
from tests.support.workers import running_worker

pytestmark = pytest.mark.slow


@pytest.fixture
def settings(database_url: str, redis_url: str, tmp_path: Path) -> Settings:
    # The enqueuing side sets the rq job timeout: 10 s here (a loaded machine may take seconds to launch).
    return settings_for(database_url, redis_url, tmp_path, turn_lease_seconds=3, turn_timeout_seconds=10)


async def test_a_turn_past_its_job_timeout_fails_saying_so_and_the_worker_runs_the_next_turn(
    services, settings, bus, db, workspace_id
):
    task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Slow"))).task
    # The worker's own start-up recovery may enqueue the turn too: with the same timeout.
    with running_worker(settings, KANDEV_TURN_TIMEOUT_SECONDS=str(settings.turn_timeout_seconds)) as worker:
        session_id = (await services.sessions.start_task(task.id, "/say started\n/sleep 60", None)).session.id
        async with watching(bus, db, session_id) as watch:
            await watch.message("AGENT", "started")
            agents = descendants(worker.pid)
            [turn] = await watch.turns_ended(1, timeout=30)
            assert turn.state == "FAILED" and "ran past its timeout" in (turn.error or "")
            assert wait_gone(agents, timeout=10) == set(), "the timed-out turn's agent was closed"
            await services.sessions.send_message(task.id, "/say next")
            turns = await watch.turns_ended(2, timeout=30)
        assert alive(worker.pid), "the worker itself survived the job timeout"
    assert turns[1].state == "COMPLETED"
