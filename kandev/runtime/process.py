"""The agent subprocess: its own process group, dies with its parent, stderr kept in a ring buffer."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import signal
import sys
from collections import deque
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kandev.runtime.confinement import AgentUser

# Variables an agent needs to find its tools and home; everything else must be passed explicitly,
# so the server's own settings and credentials never leak into an agent.
INHERITED_ENV = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TERM",
    "TMPDIR",
    "TZ",
)
_PR_SET_PDEATHSIG = 1
_STREAM_LIMIT = 16 * 1024 * 1024
_LINE_CAP = 4096


def minimal_env(extra: Mapping[str, str] | None = None, user: AgentUser | None = None) -> dict[str, str]:
    """The inherited minimum, with `user`'s identity when agents run as another user, and `extra` (the
    profile's env, which an admin controls) merged over it. Nothing else of the server's env passes."""
    env = {k: v for k in INHERITED_ENV if (v := os.environ.get(k)) is not None}
    if user is not None:
        env.update(user.env())
    env.update(extra or {})
    return env


def _death_signal_setter() -> Callable[[], None] | None:
    """A preexec_fn that makes the child get SIGKILL when its parent dies (Linux only)."""
    if not sys.platform.startswith("linux"):
        return None
    # Resolve libc before fork: the child should only make the syscall.
    libc = ctypes.CDLL(None, use_errno=True)
    parent = os.getpid()

    def preexec() -> None:
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        # The parent may have died between fork and prctl; then no signal would ever come.
        if os.getppid() != parent:
            os._exit(1)

    return preexec


class AgentProcess:
    """A spawned agent: stdio pipes for the protocol, stderr tail for error reports."""

    def __init__(self, proc: asyncio.subprocess.Process, stderr_lines: int) -> None:
        self._proc = proc
        self._tail: deque[str] = deque(maxlen=stderr_lines)
        self._stderr_task = asyncio.create_task(self._read_stderr(), name=f"agent-stderr-{proc.pid}")

    @classmethod
    async def spawn(
        cls,
        argv: list[str],
        env: Mapping[str, str],
        cwd: str,
        *,
        user: AgentUser | None = None,
        stderr_lines: int = 200,
    ) -> AgentProcess:
        """Start `argv` in a new session (own process group) with the parent-death signal set, as `user`
        when given (the death signal is armed after the switch: changing uid would clear it)."""
        identity: dict[str, Any] = (
            {} if user is None else {"user": user.uid, "group": user.gid, "extra_groups": list(user.groups)}
        )
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=dict(env),
            cwd=cwd,
            start_new_session=True,
            preexec_fn=_death_signal_setter(),
            limit=_STREAM_LIMIT,
            **identity,
        )
        return cls(proc, stderr_lines)

    @property
    def pid(self) -> int:
        return self._proc.pid

    @property
    def returncode(self) -> int | None:
        return self._proc.returncode

    @property
    def stdin(self) -> asyncio.StreamWriter:
        assert self._proc.stdin is not None
        return self._proc.stdin

    @property
    def stdout(self) -> asyncio.StreamReader:
        assert self._proc.stdout is not None
        return self._proc.stdout

    async def wait(self) -> int:
        return await self._proc.wait()

    async def stderr_tail(self, lines: int = 20, settle: float = 0.5) -> list[str]:
        """The last `lines` of stderr, after giving the reader `settle` seconds to reach EOF."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._stderr_task), settle)
        return list(self._tail)[-lines:]

    async def kill_group(self, term_grace: float = 0.5) -> int | None:
        """SIGTERM the whole group, SIGKILL it after `term_grace`, reap the leader; returns its status."""
        if self._proc.returncode is None:
            self._signal_group(signal.SIGTERM)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._proc.wait(), term_grace)
        # Children may outlive the leader (or ignore SIGTERM): the group gets SIGKILL regardless.
        self._signal_group(signal.SIGKILL)
        code = await self._proc.wait()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._stderr_task), 1.0)
        self._stderr_task.cancel()
        return code

    def _signal_group(self, sig: int) -> None:
        # start_new_session makes the leader's pid the group id.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._proc.pid, sig)

    async def _read_stderr(self) -> None:
        stream = self._proc.stderr
        assert stream is not None
        partial = ""
        while chunk := await stream.read(65536):
            lines = (partial + chunk.decode("utf-8", "replace")).split("\n")
            partial = lines.pop()[-_LINE_CAP:]
            self._tail.extend(line[-_LINE_CAP:] for line in lines)
        if partial:
            self._tail.append(partial)
