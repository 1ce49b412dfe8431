"""The agent subprocess: environment, stderr ring buffer and process-group kill."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from kandev.runtime.process import AgentProcess, minimal_env
from tests.integration.runtime.conftest import group_members, until

pytestmark = pytest.mark.slow


async def test_stderr_keeps_only_the_tail_and_caps_long_lines(tmp_path: Path) -> None:
    noise = "import sys\nfor n in range(300): print(f'line {n}', file=sys.stderr)\nprint('x' * 10000, file=sys.stderr)"
    proc = await AgentProcess.spawn([sys.executable, "-c", noise], minimal_env(), str(tmp_path), stderr_lines=50)
    async with asyncio.timeout(10):
        assert await proc.wait() == 0
        tail = await proc.stderr_tail(3)
    assert tail[:2] == ["line 298", "line 299"] and tail[2] == "x" * 4096


async def test_the_agent_gets_only_the_minimal_environment_plus_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KANDEV_SECRET_KEY", "server-only")
    code = "import os, sys; print(sorted(k for k in os.environ if k.startswith('KANDEV')), file=sys.stderr)"
    env = minimal_env({"KANDEV_SCRIPTED_LOG": "x"})
    proc = await AgentProcess.spawn([sys.executable, "-c", code], env, str(tmp_path))
    async with asyncio.timeout(10):
        await proc.wait()
        assert await proc.stderr_tail() == ["['KANDEV_SCRIPTED_LOG']"]


async def test_kill_group_takes_down_the_agent_and_its_children(tmp_path: Path) -> None:
    code = "import subprocess, time; subprocess.Popen(['sleep', '60']); print('ready', flush=True); time.sleep(60)"
    proc = await AgentProcess.spawn([sys.executable, "-c", code], minimal_env(), str(tmp_path))
    async with asyncio.timeout(10):
        assert await proc.stdout.readline() == b"ready\n"
        assert len(group_members(proc.pid)) == 2 and os.getpgid(proc.pid) == proc.pid
        await proc.kill_group()
    # The leader is reaped on return; SIGKILLed children may take a moment to vanish.
    await until(lambda: group_members(proc.pid) == [])
