"""Agents cannot reach the server's secrets: a real worker runs a stdlib agent (tests/agents/peek_agent.py)
that tries to read the server key and the environment of the server and worker processes."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from kandev.domain.tasks.service import CreateTask
from kandev.domain.workspace.workdirs import add_worktree
from kandev.models import Message, Repository
from kandev.models.enums import AgentKind
from kandev.platform.agent_host import resolve_agent_user
from kandev.platform.settings import Settings
from kandev.runtime.process import INHERITED_ENV
from tests.support.factories import new_agent_profile, settings_for
from tests.support.git_repos import make_repository
from tests.support.watch import watching
from tests.support.workers import running_worker

pytestmark = pytest.mark.slow

PEEK_AGENT = Path(__file__).parents[2] / "agents" / "peek_agent.py"
AGENT_USER = "kandev-agent-test"


def agent_user() -> pwd.struct_passwd:
    """The unprivileged test account, created once (CI runs as root)."""
    if os.geteuid() != 0:
        pytest.skip("launching agents as another user needs root (CI runs the suite as root)")
    try:
        return pwd.getpwnam(AGENT_USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", AGENT_USER], check=True, timeout=30)
        return pwd.getpwnam(AGENT_USER)


@pytest.fixture
def base() -> Iterator[Path]:
    """A world-traversable folder for the data dir, the work dir beside it and the agent: only kandev's
    own modes keep the agent out, not an unreachable pytest temp dir."""
    folder = Path(tempfile.mkdtemp(prefix="kandev-confine-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def settings(database_url: str, redis_url: str, base: Path) -> Settings:
    return settings_for(database_url, redis_url, base, turn_lease_seconds=5)


def world_readable_copy(base: Path, source: Path) -> Path:
    folder = base / "agents"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    target = folder / source.name
    shutil.copyfile(source, target)
    target.chmod(0o644)
    return target


def interpreter() -> str:
    """Debian's system python is world-readable; a virtualenv's may sit under /root."""
    return "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


async def peek(services: Any, settings: Settings, bus: Any, db: Any, workspace_id: str, base: Path, **env: str):
    """Run the peek agent for one turn on a real worker; returns its report and the session."""
    agent = world_readable_copy(base, PEEK_AGENT)
    profile = await new_agent_profile(
        services, workspace_id, "Peek", AgentKind.ACP, command=[interpreter(), str(agent)]
    )
    created = await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Peek"))
    key = settings.data_path / "server.key"
    with running_worker(settings, **env) as worker:
        wanted = {"key": str(key), "pids": {"server": os.getpid(), "worker": worker.pid}}
        started = await services.sessions.start_task(created.task.id, f"PEEK {json.dumps(wanted)}", profile.id)
        async with watching(bus, db, started.session.id) as watch:
            [turn] = await watch.turns_ended(1, timeout=60)
    assert turn.state == "COMPLETED", turn.error
    async with db.read() as s:
        [text] = await s.scalars(
            select(Message.text).where(Message.session_id == started.session.id, Message.kind == "AGENT")
        )
    return json.loads(text), await services.sessions.get(started.session.id)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def assert_scrubbed(env: dict[str, str], settings: Settings) -> None:
    assert set(env) <= set(INHERITED_ENV), sorted(set(env) - set(INHERITED_ENV))
    assert not [name for name in env if name.startswith("KANDEV_")]
    secrets = [settings.server_key.decode(), settings.resolved_database_url(), settings.redis_url]
    assert not [value for value in env.values() for secret in secrets if secret and secret in value]


async def test_an_agent_gets_a_scrubbed_environment_and_the_data_dir_is_private(
    services, settings, bus, db, workspace_id, base
):
    assert settings.server_key  # the key file is in place before the worker starts
    report, session = await peek(services, settings, bus, db, workspace_id, base)
    assert_scrubbed(report["env"], settings)
    assert report["reads"]["key_relative"]["path"].startswith("../")
    assert mode(settings.data_path) == 0o700
    assert mode(settings.data_path / "server.key") == 0o600
    assert mode(settings.work_path) == 0o700
    assert Path(session.working_dir).is_relative_to(settings.work_path)
    assert not Path(session.working_dir).is_relative_to(settings.data_path)


async def test_an_agent_running_as_the_agent_user_cannot_read_the_key_or_any_process_environment(
    services, settings, bus, db, workspace_id, base
):
    account = agent_user()
    assert settings.server_key
    report, session = await peek(services, settings, bus, db, workspace_id, base, KANDEV_AGENT_USER=AGENT_USER)
    assert (report["uid"], report["gid"]) == (account.pw_uid, account.pw_gid)
    assert report["env"]["HOME"] == account.pw_dir and report["env"]["USER"] == AGENT_USER
    assert_scrubbed(report["env"], settings)
    reads = report["reads"]
    assert set(reads) == {
        "key_relative",
        "key_absolute",
        "environ_parent",
        "environ_server",
        "environ_worker",
    }
    # Refused, not missing: every path was right and only the permissions kept the agent out.
    assert {name: read["ok"] for name, read in reads.items()} == dict.fromkeys(reads, False)
    assert all(read["error"].startswith("PermissionError") for read in reads.values()), reads
    workdir = Path(session.working_dir)
    assert workdir.stat().st_uid == account.pw_uid
    assert mode(settings.work_path) == 0o711


async def test_an_agent_user_that_cannot_reach_the_agent_command_fails_the_turn_naming_the_path(
    services, settings, bus, db, workspace_id, base
):
    agent_user()
    private = base / "private"
    private.mkdir(mode=0o700)
    private.chmod(0o700)
    agent = private / "peek_agent.py"
    shutil.copyfile(PEEK_AGENT, agent)
    agent.chmod(0o755)
    profile = await new_agent_profile(services, workspace_id, "Hidden", AgentKind.ACP, command=[str(agent)])
    created = await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Hidden"))
    with running_worker(settings, KANDEV_AGENT_USER=AGENT_USER):
        started = await services.sessions.start_task(created.task.id, "hello", profile.id)
        async with watching(bus, db, started.session.id) as watch:
            [turn] = await watch.turns_ended(1, timeout=60)
    assert turn.state == "FAILED"
    assert f"agent user '{AGENT_USER}' cannot reach {agent}" in turn.error
    assert f"the permissions of {private} keep it out" in turn.error


def test_a_worktree_created_for_the_agent_user_is_owned_by_it_but_its_task_directory_and_repository_are_not(
    base, tmp_path
):
    account = agent_user()
    owner = resolve_agent_user(AGENT_USER)
    repository = make_repository(tmp_path / "project")
    folder = base / "data-work" / "worktrees" / "task-1" / "project"
    row = Repository(id="r1", workspace_id="w1", name="project", path=str(repository), default_branch="main")
    assert add_worktree(row, folder, "kandev/task-1", "main", owner)
    owned = [folder, folder / "README", repository / ".git" / "worktrees" / "project" / "HEAD"]
    assert [p.stat().st_uid for p in owned] == [account.pw_uid] * len(owned)
    assert mode(folder) == 0o700
    # The task directory is the server's: the agent may look in (its group), never add or swap an entry.
    assert (folder.parent.stat().st_uid, folder.parent.stat().st_gid, mode(folder.parent)) == (0, account.pw_gid, 0o750)
    assert (repository / ".git").stat().st_uid == os.geteuid()
    assert (repository / "README").stat().st_uid == os.geteuid()
