"""The scripted agent changes files (`/write`, `/delete`) and runs commands (`/run`, under the permission
policy), each reported as a tool call, so a task's changes can be tried offline."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from kandev.runtime.base import PermissionRequest
from tests.integration.runtime.conftest import Launch

pytestmark = pytest.mark.slow


def tool_updates(agent) -> list[dict]:
    return [u.data for u in agent.updates if u.kind in ("tool_call", "tool_call_update")]


async def test_write_creates_the_file_with_its_lines_as_an_edit_tool_call(launch: Launch, tmp_path: Path) -> None:
    agent = await launch()
    async with asyncio.timeout(10):
        result = await agent.runtime.prompt("/write src/hello.py\nprint('hi')\n  # kept as is\n/end-write")
    assert result.stop_reason == "end_turn"
    assert (tmp_path / "src" / "hello.py").read_text() == "print('hi')\n  # kept as is\n"
    start, done = tool_updates(agent)
    assert (start["kind"], start["title"], start["status"]) == ("edit", "Write src/hello.py", "pending")
    assert done["status"] == "completed"


async def test_delete_removes_the_file_and_a_missing_one_fails_the_tool_call(launch: Launch, tmp_path: Path) -> None:
    (tmp_path / "old.txt").write_text("old\n")
    agent = await launch()
    async with asyncio.timeout(10):
        await agent.runtime.prompt("/delete old.txt\n/delete old.txt")
    assert not (tmp_path / "old.txt").exists()
    statuses = [u["status"] for u in tool_updates(agent) if u.get("status") != "pending"]
    assert statuses == ["completed", "failed"]


async def test_run_allowed_by_the_policy_runs_in_the_working_directory(launch: Launch, tmp_path: Path) -> None:
    agent = await launch(permission_policy="ALLOW")
    async with asyncio.timeout(10):
        await agent.runtime.prompt("/run pwd > where.txt && echo made")
    assert (tmp_path / "where.txt").read_text().strip() == str(tmp_path)
    done = tool_updates(agent)[-1]
    assert done["status"] == "completed" and "made" in str(done) and "exit status 0" in str(done)


async def test_run_denied_by_the_policy_runs_nothing(launch: Launch, tmp_path: Path) -> None:
    agent = await launch(permission_policy="DENY")
    async with asyncio.timeout(10):
        await agent.runtime.prompt("/run touch ran.txt")
    assert not (tmp_path / "ran.txt").exists()
    assert tool_updates(agent)[-1]["status"] == "failed"


async def test_run_under_ask_waits_for_the_persons_answer(launch: Launch, tmp_path: Path) -> None:
    asked: list[PermissionRequest] = []

    async def person(request: PermissionRequest) -> str | None:
        asked.append(request)
        return "allow"

    agent = await launch(permission_policy="ASK", on_permission=person)
    async with asyncio.timeout(10):
        await agent.runtime.prompt("/run touch ran.txt")
    assert (tmp_path / "ran.txt").exists()
    [request] = asked
    assert request.title == "Run: touch ran.txt" and request.raw_input == {"command": "touch ran.txt"}


async def test_a_failing_command_fails_its_tool_call_with_its_exit_status(launch: Launch) -> None:
    agent = await launch(permission_policy="ALLOW")
    async with asyncio.timeout(10):
        result = await agent.runtime.prompt("/run echo broken >&2; exit 3\n/say after")
    assert result.stop_reason == "end_turn" and agent.texts() == ["after"]
    done = tool_updates(agent)[-1]
    assert done["status"] == "failed" and "exit status 3" in str(done) and "broken" in str(done)


async def test_cancel_stops_a_running_command(launch: Launch, tmp_path: Path) -> None:
    agent = await launch(permission_policy="ALLOW")
    turn = asyncio.create_task(agent.runtime.prompt("/run sleep 30; touch late.txt"))
    await asyncio.sleep(1)
    async with asyncio.timeout(5):
        await agent.runtime.cancel()
        assert (await turn).stop_reason == "cancelled"
    assert not (tmp_path / "late.txt").exists()
