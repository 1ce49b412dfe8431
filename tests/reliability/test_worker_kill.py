"""kill -9 of the worker mid-turn, twice in one session, with the scheduler running throughout: each killed turn is
reaped as failed with a transcript note, its prompt is never sent again, and the prompt queued behind it runs."""

from __future__ import annotations

import os
import signal
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from kandev.platform.settings import Settings
from tests.integration.jobs.test_turns import transcript
from tests.support.factories import new_task, settings_for
from tests.support.processes import alive, descendants, wait_gone
from tests.support.watch import watching
from tests.support.workers import running_scheduler, running_worker

pytestmark = [pytest.mark.reliability, pytest.mark.slow]

KILLS = 2


@pytest.fixture
def settings(database_url: str, redis_url: str, tmp_path: Path) -> Settings:
    # A short lease so a dead worker's turn is reaped quickly.
    return settings_for(database_url, redis_url, tmp_path, turn_lease_seconds=3)


def kill_tree(worker: Any) -> None:
    """SIGKILL the worker and everything below it (its job and agent processes) at once."""
    tree = descendants(worker.pid) | {worker.pid}
    for pid in tree:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)
    assert wait_gone(tree, timeout=10) == set(), "a worker, job or agent process survived SIGKILL"


async def test_each_worker_killed_mid_turn_leaves_a_failed_turn_and_the_next_prompt_runs_once(
    services, settings, bus, db, workspace_id
):
    prompts = [f"/say working {n}\n/sleep 60" for n in range(1, KILLS + 1)] + ["/say final"]
    task_id = await new_task(services, workspace_id)
    session_id = (await services.sessions.start_task(task_id, prompts[0], None)).session.id
    recoveries: list[float] = []
    with running_scheduler(settings), ExitStack() as workers:
        worker = workers.enter_context(running_worker(settings))
        async with watching(bus, db, session_id) as watch:
            for n in range(1, KILLS + 1):
                await watch.message("AGENT", f"working {n}", timeout=60)
                await services.sessions.send_message(task_id, prompts[n])
                kill_tree(worker)
                killed_at = time.monotonic()
                worker = workers.enter_context(running_worker(settings))  # recovers, then runs the next prompt
                await watch.turns_ended(n, timeout=30)
                recoveries.append(time.monotonic() - killed_at)
            await watch.turns_ended(KILLS + 1, timeout=30)
    turns = await watch.turns_ended(KILLS + 1, timeout=5)
    assert [(t.state, t.stop_reason) for t in turns] == [("FAILED", "failed")] * KILLS + [("COMPLETED", "end_turn")]
    texts = await transcript(db, session_id)
    for prompt in prompts:
        assert texts.count(("USER", prompt)) == 1, prompt  # never re-sent, never lost
    notes = [t for k, t in texts if k == "ERROR"]
    assert len(notes) == KILLS and all("stopped responding" in note for note in notes)
    assert [t for k, t in texts if k == "AGENT"] == [f"working {n}" for n in range(1, KILLS + 1)] + ["final"]
    assert (await services.sessions.get(session_id)).state == "WAITING_FOR_INPUT"
    reaped = [round(r, 1) for r in recoveries]
    print(f"\n[reliability] worker kill -9 x{KILLS}: each killed turn reaped as failed after {reaped}s")
