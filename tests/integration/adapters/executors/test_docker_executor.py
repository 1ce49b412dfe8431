"""The DOCKER executor end to end: a real worker runs the scripted agent in a container of the locally built test
image (network none), the agent reaches Kandev's MCP tools only through the stdio bridge, the transcript says
where it runs, and the container goes with its session; bad settings fail the launch with their cause named and
leave nothing running."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from sqlalchemy import select

from kandev.domain.errors import ValidationError
from kandev.domain.mcp.rules import McpServerFields
from kandev.models import Message, Task
from kandev.models.enums import ExecutorKind, McpScope, McpServerKind
from tests.support.boxes import containers, needs
from tests.support.factories import new_task, started_task
from tests.support.git_repos import git, make_repository
from tests.support.waiting import wait_until
from tests.support.watch import watching

pytestmark = pytest.mark.slow

SECRET = "s3cret-value-for-the-box-7f1c"


@pytest.fixture(autouse=True)
def docker_here() -> None:
    needs("docker")


async def messages(db, session_id, kind):
    async with db.read() as s:
        query = select(Message).where(Message.session_id == session_id, Message.kind == kind).order_by(Message.seq)
        return list(await s.scalars(query))


async def test_the_agent_runs_in_a_container_says_so_and_calls_kandev_tools_through_the_stdio_bridge(
    live, services, bus, db, workspace_id, box_profile
):
    executor = await box_profile(ExecutorKind.DOCKER, memory_mb=256, pids=256)
    prompt = '/say hello from the box\n/tool create_task_kandev {"title": "made from inside a container"}'
    started = await started_task(services, workspace_id, prompt, executor_profile_id=executor)
    async with watching(bus, db, started.session_id) as watch:
        turn = await watch.next_turn_end(timeout=90)
    assert turn.state == "COMPLETED", turn.error
    [said] = await messages(db, started.session_id, "AGENT")
    assert said.text == "hello from the box"
    [call] = await messages(db, started.session_id, "TOOL_CALL")
    assert call.data["status"] == "completed", call.data.get("output")
    async with db.read() as s:
        made = await s.scalar(select(Task).where(Task.title == "made from inside a container"))
    assert made is not None and made.parent_id in (None, started.task_id)
    # The transcript names the executor, the worker and the container; the container is the session's.
    [placed] = [m for m in await messages(db, started.session_id, "SYSTEM") if "placement" in (m.data or {})]
    placement = placed.data["placement"]
    assert placement["kind"] == "docker" and placement["worker"] and placement["box"][:12] in placed.text
    [box] = await containers(**{"kandev.session": started.session_id})
    assert box.box_id == placement["box"] and box.running
    # Deleting the task ends its session: the worker closes the warm agent and its container goes.
    await services.tasks.delete(started.task_id)
    await wait_until(lambda: _gone(started.session_id), timeout=30, interval=0.2)


async def _gone(session_id: str) -> bool:
    return not await containers(**{"kandev.session": session_id})


MCP_FIXTURE = Path(__file__).parents[3] / "support" / "mcp_fixture_server.py"


async def test_a_workspace_mcp_server_the_agent_is_handed_runs_inside_the_container(
    live, services, bus, db, workspace_id, box_profile, base
):
    executor = await box_profile(ExecutorKind.DOCKER)
    folder = make_repository(base / "with-mcp")
    shutil.copyfile(MCP_FIXTURE, folder / "fixture_mcp.py")
    git(folder, "add", ".")
    git(folder, "commit", "-q", "-m", "an MCP server")
    repository = await services.repositories.create(workspace_id, "with-mcp", str(folder))
    # An admin's executable MCP server: a container runs the image's command (its Python), here on the server the
    # task's repository holds, at /workspace.
    fields = McpServerFields(
        name="local",
        kind=McpServerKind.EXECUTABLE,
        command="/usr/bin/python3",
        args=["/workspace/fixture_mcp.py"],
        env={"FIXTURE_TOKEN": "from-the-definition"},
    )
    server = await services.mcp_servers.create(None, fields)
    task_id = await new_task(
        services, workspace_id, "With MCP", executor_profile_id=executor, repositories=[str(repository.id)]
    )
    await services.mcp_selections.select(server.id, McpScope.TASK, task_id)
    session = (await services.sessions.start_task(task_id, "/tool local/whoami {}\n/tool local/where {}", None)).session
    async with watching(bus, db, session.id) as watch:
        turn = await watch.next_turn_end(timeout=90)
    assert turn.state == "COMPLETED", turn.error
    calls = await messages(db, session.id, "TOOL_CALL")
    assert [c.data["status"] for c in calls] == ["completed", "completed"], [c.data.get("output") for c in calls]
    outputs = [json.dumps(c.data.get("output")) for c in calls]
    assert "token=from-the-definition" in outputs[0]
    assert "/workspace on kandev-box" in outputs[1]  # the container's working path and host name, not the worker's
    [placed] = [m for m in await messages(db, session.id, "SYSTEM") if "placement" in (m.data or {})]
    assert placed.data["placement"]["kind"] == "docker"


async def test_the_container_has_no_network_its_limits_and_a_non_root_user(
    live, services, bus, db, workspace_id, box_profile, start_probe
):
    executor = await box_profile(ExecutorKind.DOCKER, memory_mb=128, pids=64, cpus=0.5)
    probe = {"own": True, "connect": [["1.1.1.1", 53]]}
    started = await start_probe(executor, probe)
    async with watching(bus, db, started.session_id) as watch:
        turn = await watch.next_turn_end(timeout=90)
    assert turn.state == "COMPLETED", turn.error
    [said] = await messages(db, started.session_id, "AGENT")
    report = json.loads(said.text)
    own = report["own"]
    assert own["cwd"] == "/workspace" and own["uid"] != 0 and own["hostname"] == "kandev-box"
    assert own["write_cwd"]["ok"] and own["write_tmp"]["ok"]
    assert not report["connect 1.1.1.1:53"]["ok"]  # no network at all: nothing is even sent
    assert not [name for name in own["env"] if name.startswith("KANDEV_")]
    [box] = await containers(**{"kandev.session": started.session_id})
    info = await _inspect(box.box_id)
    host = info["HostConfig"]
    assert host["NetworkMode"] == "none" and host["Memory"] == 128 << 20 and host["PidsLimit"] == 64
    assert host["CapDrop"] == ["ALL"] and "no-new-privileges" in host["SecurityOpt"]
    assert host["NanoCpus"] == 500_000_000


async def _inspect(box_id: str):
    import aiodocker

    async with aiodocker.Docker() as docker:
        return await docker.containers.container(box_id).show()


async def test_a_container_built_from_the_profiles_dockerfile_is_prepared_gets_its_secret_and_mounts_read_only(
    live, services, bus, db, workspace_id, box_profile, start_probe, base
):
    shared = base / "shared"
    shared.mkdir()
    (shared / "note.txt").write_text("shared data")
    await services.secrets.create(workspace_id, "API_TOKEN", SECRET)
    executor = await box_profile(
        ExecutorKind.DOCKER,
        image="",
        dockerfile="FROM kandev-test-agent:1\nENV BUILT_FROM=dockerfile\n",
        prepare_script="echo prepared > /tmp/prepared",
        env={"API_TOKEN": "${secret:API_TOKEN}", "PLAIN": "as given"},
        mounts=[{"source": str(shared), "target": "/shared"}],
    )
    probe = {
        "env": ["API_TOKEN", "PLAIN", "BUILT_FROM"],
        "read": ["/shared/note.txt", "/tmp/prepared"],
        "write": ["/shared/from-the-box"],
    }
    started = await start_probe(executor, probe)
    async with watching(bus, db, started.session_id) as watch:
        turn = await watch.next_turn_end(timeout=120)
    assert turn.state == "COMPLETED", turn.error
    [said] = await messages(db, started.session_id, "AGENT")
    report = json.loads(said.text)
    # The secret reached the box as its environment; what the agent says of it is redacted.
    assert report["env API_TOKEN"] == "[REDACTED]" and SECRET not in said.text
    assert (report["env PLAIN"], report["env BUILT_FROM"]) == ("as given", "dockerfile")
    assert bytes.fromhex(report["read /shared/note.txt"]["value"]) == b"shared data"
    assert bytes.fromhex(report["read /tmp/prepared"]["value"]) == b"prepared\n"
    assert not report["write /shared/from-the-box"]["ok"] and not (shared / "from-the-box").exists()
    async with db.read() as s:
        texts = [m.text or "" for m in await s.scalars(select(Message).where(Message.session_id == started.session_id))]
    assert not [t for t in texts if SECRET in t]


@pytest.mark.parametrize(
    ("config", "reason"),
    [
        ({"image": "kandev-test-missing:never"}, "is not on this worker and the profile's pull policy is NEVER"),
        ({"image": "", "dockerfile": "FROM kandev-test-agent:1\nCOPY no-such-file /x\n"}, "Dockerfile did not build"),
        ({"prepare_script": "echo preparing; exit 5"}, "the prepare script failed: preparing"),
    ],
    ids=["missing-image", "failing-build", "failing-prepare-script"],
)
async def test_a_box_that_cannot_be_made_fails_the_launch_naming_the_cause_and_leaves_nothing_running(
    live, services, bus, db, workspace_id, box_profile, config, reason
):
    executor = await box_profile(ExecutorKind.DOCKER, **config)
    started = await started_task(services, workspace_id, "/say never", executor_profile_id=executor)
    async with watching(bus, db, started.session_id) as watch:
        turn = await watch.next_turn_end(timeout=120)
    assert turn.state == "FAILED" and reason in (turn.error or ""), turn.error
    assert not await containers(**{"kandev.session": started.session_id})


async def test_a_mount_outside_the_source_roots_is_refused_when_the_profile_is_saved(services, workspace_id, settings):
    with pytest.raises(ValidationError) as refused:
        await services.executor_profiles.create(
            workspace_id,
            "Escape",
            ExecutorKind.DOCKER,
            {"image": "kandev-test-agent:1", "mounts": [{"source": str(settings.data_path), "target": "/data"}]},
        )
    assert refused.value.field == "mounts.0.source"
