"""While the agent works, taskEvents carries the task's change stats within a second of a file change seen at a
tool call or a turn end; Task.changeStats reads what was stored (a board never recomputes it)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from kandev.domain.tasks.service import CreateTask
from kandev.domain.workspace.repositories import RepositoryChoice
from kandev.domain.workspace.workdirs import task_directory
from kandev.platform.event_bus import session_channel, task_channel
from kandev.platform.settings import Settings
from tests.support.factories import settings_for
from tests.support.git_repos import make_repository
from tests.support.workers import running_worker

pytestmark = pytest.mark.slow

STATS = "query($id: ID!) { task(id: $id) { changeStats { files additions deletions } } }"


@pytest.fixture
def settings(database_url: str, redis_url: str, tmp_path: Path) -> Settings:
    return settings_for(database_url, redis_url, tmp_path, turn_lease_seconds=5)


async def task_on_repository(services, workspace_id: str, tmp_path: Path) -> str:
    repository = await services.repositories.create(workspace_id, "repo", str(make_repository(tmp_path / "repo")))
    made = await services.tasks.create(
        CreateTask(workspace_id=workspace_id, title="Live", repositories=[RepositoryChoice(repository.id)])
    )
    return made.task.id


class Clock:
    """When each kind of event was first heard, from the task's and the session's channels."""

    def __init__(self) -> None:
        self.heard: list[tuple[float, str, dict]] = []
        self.subscribed = asyncio.Event()

    async def listen(self, bus, workspace_id: str, session_id: str) -> None:
        async with bus.subscribe_all(task_channel(workspace_id), session_channel(session_id)) as events:
            self.subscribed.set()
            async for payload in events:
                self.heard.append((time.monotonic(), payload["kind"], payload))

    def first(self, kind: str, check=lambda p: True) -> tuple[float, dict] | None:
        return next(((at, p) for at, k, p in self.heard if k == kind and check(p)), None)

    async def until(self, kind: str, check=lambda p: True, timeout: float = 60) -> tuple[float, dict]:
        async with asyncio.timeout(timeout):
            while (found := self.first(kind, check)) is None:
                await asyncio.sleep(0.02)
        return found


def tool_call_done(payload: dict) -> bool:
    message = payload.get("message") or {}
    return message.get("kind") == "TOOL_CALL" and message.get("data", {}).get("status") == "completed"


async def test_a_file_written_at_a_tool_call_reaches_task_events_within_a_second(
    services, gql, settings, bus, workspace_id, tmp_path
):
    task_id = await task_on_repository(services, workspace_id, tmp_path)
    assert (await gql(STATS, id=task_id))["task"]["changeStats"] is None  # not measured yet
    clock = Clock()
    # Subscribed before a worker starts (in milliseconds, and could finish the tool call first); the worker's
    # start-up recovery enqueues the session's waiting prompt again.
    started = await services.sessions.start_task(
        task_id, "/write notes.txt\none\ntwo\nthree\n/end-write\n/sleep 30", None
    )
    listener = asyncio.create_task(clock.listen(bus, workspace_id, started.session.id))
    await asyncio.wait_for(clock.subscribed.wait(), 10)
    with running_worker(settings):
        try:
            done_at, _ = await clock.until("MESSAGE_UPDATED", tool_call_done)
            changes_at, changes = await clock.until("CHANGES")
            assert changes_at - done_at < 1.0
            assert changes["task"]["id"] == task_id
            assert [f["path"] for f in changes["changed_files"]] == ["notes.txt"]
            assert (await gql(STATS, id=task_id))["task"]["changeStats"] == {"files": 1, "additions": 3, "deletions": 0}
            await services.sessions.stop_task(task_id)
        finally:
            listener.cancel()


async def test_a_change_seen_at_a_turn_end_reaches_task_events_within_a_second(
    services, gql, settings, bus, db, workspace_id, tmp_path
):
    task_id = await task_on_repository(services, workspace_id, tmp_path)
    clock = Clock()
    started = await services.sessions.start_task(task_id, "/sleep 2", None)
    listener = asyncio.create_task(clock.listen(bus, workspace_id, started.session.id))
    await asyncio.wait_for(clock.subscribed.wait(), 10)
    with running_worker(settings):
        try:
            folder = task_directory(settings.work_path, task_id) / "repo"
            async with asyncio.timeout(60):
                while not (folder / ".git").exists():
                    await asyncio.sleep(0.05)
            (folder / "made_by_hand.txt").write_text("x\ny\n")  # no tool call saw this
            ended_at, _ = await clock.until("TURN_ENDED")
            changes_at, changes = await clock.until("CHANGES")
            assert changes_at - ended_at < 1.0
            assert [f["path"] for f in changes["changed_files"]] == ["made_by_hand.txt"]
            stats = (await gql(STATS, id=task_id))["task"]["changeStats"]
            assert stats == {"files": 1, "additions": 2, "deletions": 0}
        finally:
            listener.cancel()


async def test_a_task_without_repository_has_no_change_stats(gql, services, workspace_id):
    from tests.support.factories import new_task

    task_id = await new_task(services, workspace_id)
    assert (await gql(STATS, id=task_id))["task"]["changeStats"] is None
