"""The agent subprocess: its own process group, its whole tree dies with it, stderr kept in a ring buffer.

On Linux the agent runs under a keeper (`reaper.py`, a child subreaper) that kills every descendant of
the agent when the agent exits, when we close it, and when this process dies however it dies; elsewhere
the agent's process group is all we can reach.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import signal
import socket
import sys
from collections import deque
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kandev.runtime import reaper

if TYPE_CHECKING:
    from kandev.platform.agent_host import AgentUser

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
_KEEPER = str(Path(__file__).with_name("reaper.py"))
# The keeper is a fresh interpreter on a loaded machine: generous, since a launch waits on it anyway.
_KEEPER_START_SECONDS = 30.0
# The keeper gives up on unkillable (D-state) processes after 10 s; we wait a little longer for it.
_KEEPER_EXIT_SECONDS = 12.0


def keeper_available() -> bool:
    """Whether agents run under the subreaper keeper here (Linux with /proc and a real interpreter)."""
    return sys.platform.startswith("linux") and os.path.isdir("/proc/self") and bool(sys.executable)


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
    """A spawned agent: stdio pipes for the protocol, stderr tail for error reports. It is the box of the plain
    executors (and, wrapped in bubblewrap, of the sandbox): kandev.domain.ports.Box."""

    # The executor kind that made it, and the agent's working directory as the agent sees it.
    kind = "process"
    cwd = ""

    def __init__(
        self,
        proc: asyncio.subprocess.Process,
        stderr_lines: int,
        *,
        pid: int | None = None,
        lifeline: socket.socket | None = None,
        cgroup: str | None = None,
    ) -> None:
        self._proc = proc
        # Under a keeper, `proc` is the keeper and `pid` the agent; `lifeline` closed means "kill it all".
        self._pid = proc.pid if pid is None else pid
        self._lifeline = lifeline
        # The agent's own cgroup, if the keeper could make one: our way to its tree should the keeper die.
        self.cgroup = cgroup
        self._tail: deque[str] = deque(maxlen=stderr_lines)
        self._stderr_task = asyncio.create_task(self._read_stderr(), name=f"agent-stderr-{self._pid}")

    @classmethod
    async def spawn(
        cls,
        argv: list[str],
        env: Mapping[str, str],
        cwd: str,
        *,
        user: AgentUser | None = None,
        stderr_lines: int = 200,
        limits: Mapping[str, int] | None = None,
    ) -> AgentProcess:
        """Start `argv` in a new session (own process group) whose whole tree dies with it and with us, as
        `user` when given, under the resource `limits` (`as`: address space bytes, `nproc`: processes of its
        identity; Linux only); OSError when it cannot be started, as from exec."""
        if keeper_available():
            process = await cls._spawn_kept(argv, env, cwd, user, stderr_lines, limits or {})
        else:
            process = await cls._spawn_bare(argv, env, cwd, user, stderr_lines)
        process.cwd = cwd
        return process

    @classmethod
    async def _spawn_kept(
        cls,
        argv: list[str],
        env: Mapping[str, str],
        cwd: str,
        user: AgentUser | None,
        stderr_lines: int,
        limits: Mapping[str, int],
    ) -> AgentProcess:
        environment = env_payload(env)
        ours, theirs = socket.socketpair()
        # The keeper runs as us in "/": the agent enters its working directory only once it is the agent's
        # identity, so a link the agent planted on the way is followed with the agent's rights, never ours.
        keeper = [sys.executable, "-I", "-S", _KEEPER, str(theirs.fileno()), "--cwd", cwd]
        if user is not None:
            keeper += ["--user", str(user.uid), str(user.gid), ",".join(map(str, user.groups))]
        if limits:
            keeper += ["--limits", ",".join(f"{name}={value}" for name, value in sorted(limits.items()))]
        try:
            proc = await asyncio.create_subprocess_exec(
                *keeper,
                "--",
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env={},  # the keeper runs as us: the agent's env (LD_PRELOAD...) is sent to it instead
                cwd="/",
                start_new_session=True,
                pass_fds=(theirs.fileno(),),
                limit=_STREAM_LIMIT,
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        try:
            async with asyncio.timeout(_KEEPER_START_SECONDS):
                ours.setblocking(False)
                await asyncio.get_running_loop().sock_sendall(ours, environment)
                reply = await _read_line(ours)
        except BaseException:
            ours.close()
            await _reap(proc)
            raise
        pid, _, cgroup = reply.decode("utf-8", "replace").strip().partition(" ")
        if pid.isdigit():
            return cls(proc, stderr_lines, pid=int(pid), lifeline=ours, cgroup=cgroup or None)
        ours.close()
        await _reap(proc)
        if reply.startswith(b"!"):
            code = int(reply[1:])
            # Negative: the agent could not enter its working directory; positive: exec failed.
            raise OSError(abs(code), os.strerror(abs(code)), cwd if code < 0 else argv[0])
        assert proc.stderr is not None
        last_words = (await proc.stderr.read(4096)).decode("utf-8", "replace").strip().splitlines()[-1:]
        raise OSError(f"the agent's keeper did not start: {' '.join(last_words) or 'no output'}")

    @classmethod
    async def _spawn_bare(
        cls, argv: list[str], env: Mapping[str, str], cwd: str, user: AgentUser | None, stderr_lines: int
    ) -> AgentProcess:
        """Without a keeper: own process group, parent-death signal where the OS has one."""
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
        """The agent's pid, which leads its process group."""
        return self._pid

    @property
    def box_id(self) -> str:
        return f"{self.kind}:{self._pid}"

    async def exit_reason(self) -> str | None:
        return None  # a process's own status and stderr say it all

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
            async with asyncio.timeout(settle):
                await asyncio.shield(self._stderr_task)
        return list(self._tail)[-lines:]

    async def kill_group(self, term_grace: float = 0.5) -> int | None:
        """SIGTERM the agent's group (and, under a keeper, its orphaned descendants), SIGKILL the whole tree
        after `term_grace`, reap; returns the agent's status."""
        if self._proc.returncode is None:
            if self._lifeline is not None:
                _signal(self._proc.pid, signal.SIGTERM)
            else:
                self._signal_group(signal.SIGTERM)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(term_grace):
                    await self._proc.wait()
        if self._lifeline is not None:
            # Closing the lifeline makes the keeper SIGKILL every descendant, reap them, then exit.
            self._lifeline.close()
            try:
                async with asyncio.timeout(_KEEPER_EXIT_SECONDS):
                    await self._proc.wait()
            except TimeoutError:
                # Only the keeper is safe to signal now (the agent's pid may be reaped and reused);
                # its death signal takes the agent with it.
                _signal(self._proc.pid, signal.SIGKILL)
        else:
            # Children may outlive the leader (or ignore SIGTERM): the group gets SIGKILL regardless.
            self._signal_group(signal.SIGKILL)
        code = await self._proc.wait()
        if self.cgroup is not None:
            await _end_cgroup(self.cgroup)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(1.0):
                await asyncio.shield(self._stderr_task)
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


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def env_payload(env: Mapping[str, str]) -> bytes:
    """The agent's environment as the keeper reads it; ValueError for what no environment can hold."""
    items = [os.fsencode(k) + b"=" + os.fsencode(v) for k, v in env.items()]
    if any(b"\0" in item for item in items) or any(not k or "=" in k for k in env):
        raise ValueError("environment names and values cannot contain NUL bytes, nor names '='")
    body = b"".join(item + b"\0" for item in items)
    return str(len(body)).encode() + b"\n" + body


async def _read_line(sock: socket.socket) -> bytes:
    """One line from a non-blocking socket (empty when the peer closed it first)."""
    loop = asyncio.get_running_loop()
    data = b""
    while not data.endswith(b"\n"):
        chunk = await loop.sock_recv(sock, 64)
        if not chunk:
            break
        data += chunk
    return data


async def _end_cgroup(path: str) -> None:
    """Kill what a keeper that did not finish its job left in the agent's cgroup, then remove it."""
    if not os.path.isdir(path):
        return  # the normal case: the keeper killed the tree and removed the cgroup itself
    reaper.kill_cgroup(path)
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(_KEEPER_EXIT_SECONDS):
            while not reaper.remove_cgroup(path):
                await asyncio.sleep(0.02)


async def _reap(proc: asyncio.subprocess.Process) -> None:
    """Reap a keeper whose lifeline we closed (it kills its tree first); SIGKILL it if it hangs."""
    try:
        async with asyncio.timeout(_KEEPER_EXIT_SECONDS):
            await proc.wait()
    except TimeoutError:
        _signal(proc.pid, signal.SIGKILL)
        await proc.wait()
