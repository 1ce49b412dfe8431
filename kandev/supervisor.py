"""Child-process supervision: parent-death signals, own process groups, a stop that leaves nothing behind."""

from __future__ import annotations

import contextlib
import ctypes
import functools
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from types import TracebackType

log = logging.getLogger("kandev.supervisor")

_PR_SET_PDEATHSIG = 1
_POLL_SECONDS = 0.05
# Loaded once at import, in the parent: dlopen() inside a child forked from a threaded parent can deadlock.
_libc: ctypes.CDLL | None = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None


def set_parent_death_signal(sig: int = signal.SIGTERM) -> bool:
    """Have Linux send `sig` to this process when its parent thread exits; False where unsupported."""
    if _libc is None:
        return False
    if _libc.prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return True


def _child_preexec(parent_pid: int, sig: int) -> None:
    """Runs in the forked child before exec: arm the death signal, then catch a parent that died first."""
    set_parent_death_signal(sig)
    # prctl only covers deaths after it ran; if the parent is already gone we were reparented, so go too.
    if os.getppid() != parent_pid:
        os.kill(os.getpid(), signal.SIGKILL)


def spawn(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    death_signal: int = signal.SIGTERM,
    **popen_kwargs: object,
) -> subprocess.Popen[bytes]:
    """Start argv in its own session/process group, armed to get `death_signal` when this process dies.

    `env` holds extra variables merged over this process's environment. The death signal is tied to the
    calling *thread* (Linux semantics), so call this from a thread that lives as long as the child should,
    normally the main thread.
    """
    if threading.current_thread() is not threading.main_thread():
        log.warning("spawning %s off the main thread: its death signal fires when this thread exits", argv)
    full_env = {**os.environ, **env} if env is not None else None
    return subprocess.Popen(  # type: ignore[call-overload,no-any-return]
        list(argv),
        env=full_env,
        # Own group: a terminal's Ctrl-C reaches only us (we stop children once, in order), and we can
        # signal the child together with whatever it forks into its group.
        start_new_session=True,
        preexec_fn=functools.partial(_child_preexec, os.getpid(), int(death_signal)),
        **popen_kwargs,
    )


def process_alive(pid: int) -> bool:
    """True while `pid` exists and is not a zombie (a zombie has exited; it only awaits reaping)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except FileNotFoundError:
        return False
    except OSError:
        # No /proc (not Linux): fall back to signal 0, which counts zombies as alive.
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    # The state letter follows the parenthesised command name, which may itself contain spaces or ')'.
    state = stat[stat.rindex(b")") + 2 : stat.rindex(b")") + 3]
    return state not in (b"Z", b"X")


def _has_exited(proc: subprocess.Popen[bytes]) -> bool:
    """Whether the child exited, without reaping it: an unreaped leader keeps its group id reserved."""
    if proc.returncode is not None:
        return True
    if not hasattr(os, "waitid"):  # macOS: no WNOWAIT, so reap (the group sweep then is skipped)
        return proc.poll() is not None
    try:
        info = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        # Someone else reaped it; let Popen find out.
        proc.poll()
        return True
    return info is not None


def _signal_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    """Send `sig` to the child's process group; no-op once the child was reaped (its id may be reused)."""
    if proc.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


def _finish(proc: subprocess.Popen[bytes], reap_timeout: float) -> int | None:
    """SIGKILL what is left of the group (the unreaped leader pins its id), then reap the leader."""
    _signal_group(proc, signal.SIGKILL)
    try:
        return proc.wait(timeout=reap_timeout)
    except subprocess.TimeoutExpired:
        log.error("process %s did not die after SIGKILL (uninterruptible sleep?)", proc.pid)
        return None


def stop_process_group(proc: subprocess.Popen[bytes], timeout: float = 10.0, sig: int = signal.SIGTERM) -> int | None:
    """Send `sig` to the child's group, SIGKILL the group after `timeout`, reap; returns the exit code."""
    _signal_group(proc, sig)
    deadline = time.monotonic() + timeout
    while not _has_exited(proc) and time.monotonic() < deadline:
        time.sleep(_POLL_SECONDS)
    return _finish(proc, reap_timeout=5.0)


class ChildProcesses:
    """Named child commands, each in its own process group with a parent-death signal; stop_all ends all."""

    def __init__(self, death_signal: int = signal.SIGTERM) -> None:
        self._death_signal = death_signal
        self._children: dict[str, subprocess.Popen[bytes]] = {}

    def start(
        self,
        name: str,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        **popen_kwargs: object,
    ) -> subprocess.Popen[bytes]:
        """Start `argv` as child `name`; `env` is merged over this process's environment."""
        old = self._children.get(name)
        if old is not None and not _has_exited(old):
            raise ValueError(f"child {name!r} is already running (pid {old.pid})")
        if old is not None:
            _finish(old, reap_timeout=5.0)
        proc = spawn(argv, env=env, death_signal=self._death_signal, **popen_kwargs)
        self._children[name] = proc
        log.info("started %s (pid %s): %s", name, proc.pid, " ".join(argv))
        return proc

    def __getitem__(self, name: str) -> subprocess.Popen[bytes]:
        return self._children[name]

    def __contains__(self, name: object) -> bool:
        return name in self._children

    def names(self) -> list[str]:
        """Names of the children started so far, in start order."""
        return list(self._children)

    def exited(self) -> list[str]:
        """Names of children that have exited (not reaped, so stop_all can still sweep their groups)."""
        return [name for name, proc in self._children.items() if _has_exited(proc)]

    def stop(self, name: str, timeout: float = 10.0) -> int | None:
        """Stop one child and its group (SIGTERM, then SIGKILL after `timeout`); returns its exit code."""
        proc = self._children.pop(name)
        return stop_process_group(proc, timeout)

    def stop_all(self, timeout: float = 10.0) -> dict[str, int | None]:
        """SIGTERM all child groups at once, SIGKILL the rest after `timeout`, reap; returns exit codes."""
        children = list(self._children.items())
        for name, proc in children:
            log.info("stopping %s (pid %s)", name, proc.pid)
            _signal_group(proc, signal.SIGTERM)
        # One shared deadline: stopping N children takes at most `timeout`, not N times it.
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not all(_has_exited(p) for _, p in children):
            time.sleep(_POLL_SECONDS)
        codes: dict[str, int | None] = {}
        for name, proc in children:
            if not _has_exited(proc):
                log.warning("%s (pid %s) ignored SIGTERM for %.1fs; killing it", name, proc.pid, timeout)
            codes[name] = _finish(proc, reap_timeout=5.0)
        self._children.clear()
        return codes

    def __enter__(self) -> ChildProcesses:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop_all()
