"""No orphans: an agent's whole process tree (a helper, a grandchild in its own session, a double-forked
daemon) dies on close, on cancel, when the agent crashes and when the process owning the runtime is killed."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import shutil
import signal
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from kandev.platform.agent_host import resolve_agent_user
from kandev.runtime import process
from kandev.runtime.process import AgentProcess, keeper_available, minimal_env
from tests.integration.jobs.test_confinement import AGENT_USER, agent_user, interpreter, world_readable_copy
from tests.integration.runtime.conftest import Agent, Launch, group_members, pid_alive, until

# Only the keeper (Linux) reaches descendants that left the agent's group; elsewhere only the group dies.
pytestmark = [pytest.mark.slow, pytest.mark.skipif(not keeper_available(), reason="no subreaper keeper here")]

FORKING = str(Path(__file__).parents[2] / "agents" / "forking_agent.py")


def tree_of(agent: Agent) -> list[int]:
    """The pids the forking agent reported: itself, then its four descendants."""
    [text] = [t for t in agent.texts() if t.startswith("tree ")]
    return [int(pid) for pid in text.split()[1:]]


def assert_escaping(tree: list[int]) -> None:
    """The tree is alive and really tries to escape: some of it left the agent's group and session."""
    assert len(tree) == 5 and all(pid_alive(pid) for pid in tree)
    agent = tree[0]
    assert {os.getsid(pid) for pid in tree[1:]} - {os.getsid(agent)}, "no descendant left the agent's session"
    assert [pid for pid in tree[1:] if os.getpgid(pid) != agent], "no descendant left the agent's group"


async def gone(tree: list[int], timeout: float = 5.0) -> list[int]:
    """The members of `tree` still alive after a bounded wait (killed then, so a failure leaves nothing)."""
    with contextlib.suppress(TimeoutError):
        await until(lambda: not any(pid_alive(pid) for pid in tree), timeout)
    survivors = [pid for pid in tree if pid_alive(pid)]
    for pid in survivors:
        os.kill(pid, signal.SIGKILL)
    return survivors


async def launched_tree(launch: Launch, argv: list[str] | None = None, **spec: object) -> tuple[Agent, list[int]]:
    agent = await launch(argv or [sys.executable, FORKING], **spec)
    async with asyncio.timeout(10):
        result = await agent.runtime.prompt("who are you")
    assert result.stop_reason == "end_turn"
    tree = tree_of(agent)
    assert tree[0] == agent.runtime.pid
    assert_escaping(tree)
    return agent, tree


def cgroup_of(pid: int) -> Path | None:
    """The agent's own cgroup directory, when the keeper could make one here (cgroup v2 writable)."""
    line = next(x for x in Path(f"/proc/{pid}/cgroup").read_text().splitlines() if x.startswith("0::"))
    if "kandev-agent-" not in line:
        return None
    mounts = [x.split() for x in Path("/proc/self/mountinfo").read_text().splitlines() if " - cgroup2 " in x]
    return Path(mounts[0][4]) / line[3:].lstrip("/")


def parent_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


async def test_close_kills_the_agent_and_every_process_it_spawned(launch: Launch) -> None:
    agent, tree = await launched_tree(launch)
    cgroup = cgroup_of(tree[0])
    async with asyncio.timeout(15):
        await agent.runtime.close()
    assert await gone(tree) == []
    assert cgroup is None or not cgroup.exists(), "the agent's cgroup was left behind"


async def test_when_the_keeper_itself_is_sigkilled_close_still_kills_the_tree_through_its_cgroup(
    launch: Launch,
) -> None:
    agent, tree = await launched_tree(launch)
    cgroup = cgroup_of(tree[0])
    if cgroup is None:
        pytest.skip("no writable cgroup v2 hierarchy here: a killed keeper's orphans go to init")
    assert {int(pid) for pid in (cgroup / "cgroup.procs").read_text().split()} == set(tree)
    os.kill(parent_of(tree[0]), signal.SIGKILL)
    # The agent's death signal takes it; its escaped descendants are orphans of init now.
    await until(lambda: not pid_alive(tree[0]))
    assert [pid for pid in tree[1:] if pid_alive(pid)]
    async with asyncio.timeout(15):
        await agent.runtime.close()
    assert await gone(tree) == []
    assert not cgroup.exists()


async def test_cancelling_a_turn_that_ignores_cancel_kills_the_whole_tree(launch: Launch) -> None:
    agent, tree = await launched_tree(launch)
    turn = asyncio.create_task(agent.runtime.prompt("/hang"))
    await until(lambda: len(agent.texts()) == 2)
    async with asyncio.timeout(15):
        await agent.runtime.cancel(grace_seconds=0.3)
        result = await turn
    assert result.stop_reason == "cancelled"
    assert await gone(tree) == []


async def test_an_agent_that_crashes_mid_turn_takes_its_whole_tree_along(launch: Launch) -> None:
    agent, tree = await launched_tree(launch)
    async with asyncio.timeout(15):
        result = await agent.runtime.prompt("/crash")
    assert result.stop_reason == "failed" and result.exit_code == 3
    # Nobody closed the runtime: the keeper noticed the agent's exit and killed the rest itself.
    assert await gone(tree) == []


@pytest.fixture
def base() -> Iterator[Path]:
    """A world-traversable folder: the agent user must reach the agent and its working directory."""
    folder = Path(tempfile.mkdtemp(prefix="kandev-reaper-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


async def test_an_agent_running_as_the_agent_user_has_its_whole_tree_killed_on_close(
    launch: Launch, base: Path
) -> None:
    account = agent_user()
    work = base / "work"
    work.mkdir()
    os.chown(work, account.pw_uid, account.pw_gid)
    script = world_readable_copy(base, Path(FORKING))
    agent, tree = await launched_tree(
        launch, [interpreter(), str(script)], cwd=str(work), run_as=resolve_agent_user(AGENT_USER)
    )
    assert {Path(f"/proc/{pid}").stat().st_uid for pid in tree} == {account.pw_uid}
    async with asyncio.timeout(15):
        await agent.runtime.close()
    assert await gone(tree) == []


OWNER = textwrap.dedent(
    """
    import asyncio, sys
    from kandev.runtime.acp_adapter import AcpRuntime
    from kandev.runtime.base import LaunchSpec

    async def main():
        texts = []
        async def on_update(update):
            texts.append(update.text)
        runtime = AcpRuntime()
        await runtime.launch(LaunchSpec(argv={argv!r}, cwd={cwd!r}), on_update)
        await runtime.prompt("who are you")
        print(texts[0], flush=True)
        await asyncio.sleep(3600)

    asyncio.run(main())
    """
)


async def test_sigkill_of_the_process_owning_the_runtime_kills_the_whole_tree(tmp_path: Path) -> None:
    code = OWNER.format(argv=[sys.executable, FORKING], cwd=str(tmp_path))
    owner = await asyncio.create_subprocess_exec(sys.executable, "-c", code, stdout=asyncio.subprocess.PIPE)
    tree: list[int] = []
    try:
        assert owner.stdout is not None
        async with asyncio.timeout(20):
            tree = [int(pid) for pid in (await owner.stdout.readline()).split()[1:]]
        assert_escaping(tree)
        owner.send_signal(signal.SIGKILL)
        async with asyncio.timeout(5):
            await owner.wait()
        assert await gone(tree) == []
    finally:
        if owner.returncode is None:
            owner.kill()
            await owner.wait()
        for pid in tree:
            if pid_alive(pid):
                os.kill(pid, signal.SIGKILL)


async def test_a_command_that_cannot_be_executed_raises_the_exec_error(tmp_path: Path) -> None:
    with pytest.raises(OSError) as raised:
        await AgentProcess.spawn([str(tmp_path / "no-such-agent")], minimal_env(), str(tmp_path))
    assert raised.value.errno == errno.ENOENT


async def test_without_a_keeper_the_agents_group_still_dies_with_kill_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(process, "keeper_available", lambda: False)
    code = "import subprocess, time; subprocess.Popen(['sleep', '60']); print('ready', flush=True); time.sleep(60)"
    proc = await AgentProcess.spawn([sys.executable, "-c", code], minimal_env(), str(tmp_path))
    async with asyncio.timeout(10):
        assert await proc.stdout.readline() == b"ready\n"
        assert os.getppid() != proc.pid and len(group_members(proc.pid)) == 2
        await proc.kill_group()
    await until(lambda: group_members(proc.pid) == [])


async def test_kill_group_lets_an_agent_that_handles_sigterm_exit_cleanly_first(tmp_path: Path) -> None:
    code = (
        "import signal, sys, time\n"
        "def bye(*_):\n    print('terminated', file=sys.stderr, flush=True)\n    sys.exit(0)\n"
        "signal.signal(signal.SIGTERM, bye)\nprint('ready', flush=True)\ntime.sleep(60)"
    )
    proc = await AgentProcess.spawn([sys.executable, "-c", code], minimal_env(), str(tmp_path))
    async with asyncio.timeout(10):
        assert await proc.stdout.readline() == b"ready\n"
        assert await proc.kill_group(term_grace=5) == 0
        assert await proc.stderr_tail() == ["terminated"]


async def test_the_next_agent_removes_the_empty_cgroup_of_a_keeper_killed_with_its_worker(launch: Launch) -> None:
    agent, tree = await launched_tree(launch)
    cgroup = cgroup_of(tree[0])
    if cgroup is None:
        pytest.skip("no writable cgroup v2 hierarchy here")
    finished = await asyncio.create_subprocess_exec("true")
    await finished.wait()
    stale = cgroup.parent / f"kandev-agent-{finished.pid}"  # a keeper that is gone left this behind
    stale.mkdir()
    try:
        await launch([sys.executable, FORKING])
        assert not stale.exists()
        assert cgroup.exists(), "a live keeper's cgroup was swept"
    finally:
        with contextlib.suppress(FileNotFoundError):
            stale.rmdir()


async def test_the_agent_gets_its_whole_environment_and_its_keeper_none_of_it(tmp_path: Path) -> None:
    code = (
        "import os, sys\n"
        "keeper = open(f'/proc/{os.getppid()}/environ', 'rb').read()\n"
        "print(os.environ.get('LD_LIBRARY_PATH'), os.environ.get('MARK'), repr(keeper), file=sys.stderr)"
    )
    env = minimal_env({"LD_LIBRARY_PATH": str(tmp_path / "agent-libs"), "MARK": "a b=c"})
    proc = await AgentProcess.spawn([sys.executable, "-c", code], env, str(tmp_path))
    async with asyncio.timeout(10):
        assert await proc.wait() == 0
        assert await proc.stderr_tail() == [f"{tmp_path / 'agent-libs'} a b=c b''"]


async def test_kill_group_reports_an_agent_that_ignored_sigterm_as_killed_by_sigkill(tmp_path: Path) -> None:
    ignore_sigterm = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    code = ignore_sigterm + "print('ready', flush=True)\ntime.sleep(60)"
    proc = await AgentProcess.spawn([sys.executable, "-c", code], minimal_env(), str(tmp_path))
    async with asyncio.timeout(10):
        assert await proc.stdout.readline() == b"ready\n"
        assert await proc.kill_group(term_grace=0.2) == -signal.SIGKILL
        assert await proc.stderr_tail() == []  # the keeper itself has nothing to say
