"""Agents that crash, refuse to start, ignore cancel or outlive their launcher."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import textwrap
import time
from pathlib import Path

import pytest

from kandev.runtime.base import REDACTED, AgentLaunchError, AgentProcessExited
from tests.integration.runtime.conftest import Launch, group_members, pid_alive, until

pytestmark = pytest.mark.slow

FAKE = str(Path(__file__).with_name("fake_agent.py"))
SECRET = "sk-live-7f3a9c"


async def test_an_agent_exiting_mid_turn_fails_the_turn_with_status_and_redacted_stderr(
    launch: Launch,
) -> None:
    agent = await launch([sys.executable, FAKE, "crash-on-prompt"], env={"API_KEY": SECRET}, secrets=[SECRET])
    async with asyncio.timeout(10):
        result = await agent.runtime.prompt("/say hi")
    assert result.stop_reason == "failed" and result.exit_code == 3
    assert result.error is not None
    assert "exited with status 3" in result.error
    assert "Segmentation fault" in result.error and f"using key {REDACTED}" in result.error
    assert SECRET not in result.error
    # Only the tail: the last ~20 lines, not the early trace.
    assert "trace line 29" in result.error and "trace line 5\n" not in result.error


async def test_prompting_after_the_agent_died_fails_instead_of_hanging(launch: Launch) -> None:
    agent = await launch([sys.executable, FAKE, "crash-on-prompt"])
    async with asyncio.timeout(10):
        await agent.runtime.prompt("first")
        result = await agent.runtime.prompt("second")
    assert result.stop_reason == "failed" and "exited with status 3" in (result.error or "")


async def test_an_agent_exiting_during_initialize_is_a_launch_error_with_its_stderr(launch: Launch) -> None:
    with pytest.raises(AgentLaunchError, match="exited with status 2") as caught:
        await launch([sys.executable, FAKE, "exit-on-initialize"])
    assert "fatal: no credentials configured" in str(caught.value)
    cause = caught.value.__cause__
    assert isinstance(cause, AgentProcessExited) and cause.exit_code == 2
    assert cause.stderr_tail == ["fatal: no credentials configured"]


async def test_a_missing_command_is_a_launch_error(launch: Launch) -> None:
    with pytest.raises(AgentLaunchError, match="kandev-no-such-agent"):
        await launch(["kandev-no-such-agent-binary"])


async def test_a_missing_working_directory_is_a_launch_error(launch: Launch, tmp_path: Path) -> None:
    with pytest.raises(AgentLaunchError, match="working directory"):
        await launch(cwd=str(tmp_path / "gone"))


async def test_an_agent_silent_on_initialize_hits_the_startup_timeout(launch: Launch, tmp_path: Path) -> None:
    silent = [sys.executable, "-c", "import time; time.sleep(60)"]
    started = time.monotonic()
    with pytest.raises(AgentLaunchError, match="handshake"):
        await launch(silent, startup_timeout=0.5)
    assert time.monotonic() - started < 3


async def test_cancel_kills_an_agent_that_ignores_cancel_and_sigterm_with_its_children(
    launch: Launch,
) -> None:
    agent = await launch([sys.executable, FAKE, "hang"])
    pid = agent.runtime.pid
    assert pid is not None
    await until(lambda: len(group_members(pid)) == 2)
    turn = asyncio.create_task(agent.runtime.prompt("anything"))
    await asyncio.sleep(0)  # let the prompt register its turn
    started = time.monotonic()
    async with asyncio.timeout(3):
        await agent.runtime.cancel(grace_seconds=0.3)
        result = await turn
    assert result.stop_reason == "cancelled"
    assert time.monotonic() - started < 2
    await until(lambda: group_members(pid) == [], timeout=2)


HELPER = textwrap.dedent(
    """
    import asyncio, sys
    from kandev.runtime.acp_adapter import AcpRuntime
    from kandev.runtime.base import LaunchSpec

    # The agent must not outlive the launcher by noticing stdin EOF: it ignores EOF and SIGTERM.

    async def main():
        async def on_update(update):
            pass
        runtime = AcpRuntime()
        info = await runtime.launch(LaunchSpec(argv={argv!r}, cwd={cwd!r}), on_update)
        print(info.pid, flush=True)
        await asyncio.sleep(3600)

    asyncio.run(main())
    """
)


async def test_the_agent_dies_when_the_process_that_launched_it_is_killed(tmp_path: Path) -> None:
    code = HELPER.format(argv=[sys.executable, FAKE, "deaf"], cwd=str(tmp_path))
    helper = await asyncio.create_subprocess_exec(sys.executable, "-c", code, stdout=asyncio.subprocess.PIPE)
    agent_pid = 0
    try:
        assert helper.stdout is not None
        async with asyncio.timeout(20):
            agent_pid = int(await helper.stdout.readline())
        assert pid_alive(agent_pid)
        helper.send_signal(signal.SIGKILL)
        async with asyncio.timeout(5):
            await helper.wait()
        await until(lambda: not pid_alive(agent_pid), timeout=5)
    finally:
        if helper.returncode is None:
            helper.kill()
            await helper.wait()
        if agent_pid and pid_alive(agent_pid):
            os.kill(agent_pid, signal.SIGKILL)
