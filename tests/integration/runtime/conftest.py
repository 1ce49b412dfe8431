"""Fixtures for runtime tests: a launcher for real agent processes and process-table helpers."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from kandev.runtime.acp_adapter import AcpRuntime
from kandev.runtime.base import AgentRuntime, AgentUpdate, LaunchSpec, PermissionHandler, scripted_command

pytestmark = pytest.mark.slow


@dataclass
class Agent:
    """A launched runtime plus every update it reported."""

    runtime: AcpRuntime
    updates: list[AgentUpdate] = field(default_factory=list)

    def texts(self, kind: str = "agent_text") -> list[str]:
        return [u.text for u in self.updates if u.kind == kind]


Launch = Callable[..., Awaitable[Agent]]


def pid_alive(pid: int) -> bool:
    """True while `pid` is a live (not zombie) process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def group_members(pgid: int) -> list[int]:
    """Live processes whose process group is `pgid`."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            members.append(int(entry))
    return members


async def until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    """Poll a condition that has no event to await, within `timeout`."""
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.02)


@pytest.fixture
async def launch(tmp_path: Path) -> AsyncIterator[Launch]:
    """Launch agents (the scripted one by default) in tmp_path; all are closed at teardown."""
    started: list[AcpRuntime] = []

    async def _launch(
        argv: list[str] | None = None,
        *,
        on_permission: PermissionHandler | None = None,
        **spec_fields: object,
    ) -> Agent:
        runtime = AcpRuntime()
        _: AgentRuntime = runtime  # mypy checks that AcpRuntime satisfies the protocol
        started.append(runtime)
        agent = Agent(runtime)

        async def on_update(update: AgentUpdate) -> None:
            agent.updates.append(update)

        spec_fields.setdefault("cwd", str(tmp_path))
        spec = LaunchSpec(argv=argv or scripted_command(), **spec_fields)  # type: ignore[arg-type]
        async with asyncio.timeout(20):
            await runtime.launch(spec, on_update, on_permission)
        return agent

    yield _launch
    for runtime in started:
        async with asyncio.timeout(10):
            await runtime.close()
