"""The SANDBOX executor end to end, with the server's own identity (root here: the box alone confines it): the
built-in scripted agent runs in bubblewrap on the worker's interpreter, reaches Kandev's MCP tools only through the
stdio bridge, and the transcript says where it runs; combined with KANDEV_AGENT_UIDS it runs as the owner's
identity. A workspace MCP server handed to the agent runs in the sandbox with it, and kill -9 of the worker takes
the sandbox and everything in it along."""

from __future__ import annotations

import json
import os
import signal

import pytest
from redis import Redis
from sqlalchemy import select

from kandev.domain.mcp.rules import McpServerFields
from kandev.models import Message, Session, Task
from kandev.models.enums import ExecutorKind, McpScope, McpServerKind
from kandev.platform.job_queues import capabilities_key
from tests.support.boxes import needs
from tests.support.factories import new_task, started_task
from tests.support.fake_mcp import FIXTURE_PACKAGE
from tests.support.processes import descendants, wait_gone
from tests.support.waiting import wait_until
from tests.support.watch import watching

pytestmark = pytest.mark.slow


@pytest.fixture
def identities() -> bool:
    return False


@pytest.fixture(autouse=True)
def sandbox_here() -> None:
    needs("sandbox")


async def test_the_scripted_agent_runs_in_a_sandbox_and_calls_kandev_tools_through_the_stdio_bridge(
    live, services, bus, db, workspace_id, box_profile
):
    executor = await box_profile(ExecutorKind.SANDBOX)
    prompt = '/say hello from the sandbox\n/tool create_task_kandev {"title": "made from inside a sandbox"}'
    started = await started_task(services, workspace_id, prompt, executor_profile_id=executor)
    async with watching(bus, db, started.session_id) as watch:
        turn = await watch.next_turn_end(timeout=60)
    assert turn.state == "COMPLETED", turn.error
    async with db.read() as s:
        rows = list(await s.scalars(select(Message).where(Message.session_id == started.session_id)))
        made = await s.scalar(select(Task).where(Task.title == "made from inside a sandbox"))
    assert [m.text for m in rows if m.kind == "AGENT"] == ["hello from the sandbox"]
    [call] = [m for m in rows if m.kind == "TOOL_CALL"]
    assert call.data["status"] == "completed", call.data.get("output")
    assert made is not None
    [placed] = [m for m in rows if m.kind == "SYSTEM" and "placement" in (m.data or {})]
    assert placed.data["placement"]["kind"] == "sandbox" and "in a sandbox" in placed.text


async def test_with_network_full_the_sandbox_keeps_the_hosts_network_and_with_none_only_its_loopback(
    live, services, bus, db, workspace_id, box_profile, start_probe
):
    reports = {}
    for network in ("NONE", "FULL"):
        executor = await box_profile(ExecutorKind.SANDBOX, network=network)
        started = await start_probe(executor, {"own": True, "read": ["/proc/net/dev"]})
        async with watching(bus, db, started.session_id) as watch:
            turn = await watch.next_turn_end(timeout=60)
        assert turn.state == "COMPLETED", turn.error
        async with db.read() as s:
            said = await s.scalar(
                select(Message.text).where(Message.session_id == started.session_id, Message.kind == "AGENT")
            )
        reports[network] = json.loads(said)
    for network, report in reports.items():
        devices = bytes.fromhex(report["read /proc/net/dev"]["value"]).decode()
        assert ("lo:" in devices) and (devices.count(":") > 1) == (network == "FULL"), (network, devices)
        assert report["own"]["uid"] == 0 and report["own"]["hostname"] == "kandev-box"


async def test_a_workspace_mcp_server_the_agent_is_handed_runs_inside_the_sandbox(
    live, services, bus, db, workspace_id, box_profile
):
    executor = await box_profile(ExecutorKind.SANDBOX)
    # An admin's executable MCP server: its command file is all of its folder the sandbox sees.
    fields = McpServerFields(
        name="local",
        kind=McpServerKind.EXECUTABLE,
        command=str(FIXTURE_PACKAGE / "server.js"),
        env={"FIXTURE_TOKEN": "from-the-definition"},
    )
    server = await services.mcp_servers.create(None, fields)
    task_id = await new_task(services, workspace_id, "With MCP", executor_profile_id=executor)
    await services.mcp_selections.select(server.id, McpScope.TASK, task_id)
    session = (await services.sessions.start_task(task_id, "/tool local/whoami {}\n/tool local/where {}", None)).session
    async with watching(bus, db, session.id) as watch:
        turn = await watch.next_turn_end(timeout=60)
    assert turn.state == "COMPLETED", turn.error
    async with db.read() as s:
        rows = list(await s.scalars(select(Message).where(Message.session_id == session.id).order_by(Message.seq)))
        working_dir = (await s.get(Session, session.id)).working_dir
    calls = [m for m in rows if m.kind == "TOOL_CALL"]
    assert [c.data["status"] for c in calls] == ["completed", "completed"], [c.data.get("output") for c in calls]
    outputs = [json.dumps(c.data.get("output")) for c in calls]
    assert "token=from-the-definition" in outputs[0] and working_dir in outputs[1]
    [placed] = [m for m in rows if m.kind == "SYSTEM" and "placement" in (m.data or {})]
    assert placed.data["placement"]["kind"] == "sandbox"


async def test_the_sandbox_and_everything_in_it_die_with_its_killed_worker(
    live, services, db, workspace_id, box_profile
):
    executor = await box_profile(ExecutorKind.SANDBOX)
    started = await started_task(services, workspace_id, "/sleep 300", executor_profile_id=executor)
    boxes: list[str] = []

    async def placed() -> bool:
        async with db.read() as s:
            rows = await s.scalars(select(Message).where(Message.session_id == started.session_id))
            boxes.extend(m.data["placement"]["box"] for m in rows if "placement" in (m.data or {}))
        return bool(boxes)

    await wait_until(placed, timeout=60, interval=0.2)
    pid = int(boxes[0].removeprefix("sandbox:"))
    inside = {pid, *descendants(pid)}
    assert len(inside) >= 2, "the sandbox and the agent in it"
    os.kill(live.worker_pid, signal.SIGKILL)
    assert not wait_gone(inside, timeout=30), "a process of the sandbox outlived its worker"
    forget_killed_worker(live)


def forget_killed_worker(live) -> None:
    """What expiry does within seconds, at once: later tests on this Redis see no offer of the killed worker."""
    redis = Redis.from_url(live.settings.redis_url)
    try:
        for key in redis.scan_iter(capabilities_key("*")):
            if live.capability in (redis.get(key) or b"").decode():
                redis.delete(key)
    finally:
        redis.close()
