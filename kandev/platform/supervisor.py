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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType

log = logging.getLogger("kandev.platform.supervisor")

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
    thread = threading.current_thread()
    if thread is not threading.main_thread() and not getattr(thread, "owns_children", False):
        log.warning("spawning %s off the main thread: its death signal fires when this thread exits", argv)
    full_env = {**os.environ, **env} if env is not None else None
    return subprocess.Popen(  # type: ignore[call-overload]  # **popen_kwargs: callers pass Popen's own options
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
        codes = _stop_together(list(self._children.items()), timeout)
        self._children.clear()
        return codes

    def __enter__(self) -> ChildProcesses:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop_all()


def describe_exit(code: int | None) -> str:
    """How a child ended, for the log: its exit code or the signal that killed it."""
    if code is None:
        return "exited (status unknown)"
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


@dataclass
class _Supervised:
    name: str
    start: Callable[[], subprocess.Popen[bytes]]
    after_restart: Callable[[], object] | None
    stop_last: bool
    proc: subprocess.Popen[bytes] | None = None
    started_at: float = 0.0
    failures: int = 0
    restart_at: float | None = None
    restarts: int = 0


class _MonitorThread(threading.Thread):
    # Children it restarts get their parent-death signal from this thread, which lives until stop().
    owns_children = True


class Supervisor:
    """Keeps named children running: one that exits is restarted after a backoff, and why is logged.

    The backoff doubles from `backoff` up to `max_backoff` while a child keeps dying, and starts over once
    a child has run for `stable_after` seconds.
    """

    def __init__(
        self, *, backoff: float = 0.5, max_backoff: float = 30.0, stable_after: float = 10.0, poll: float = 0.1
    ) -> None:
        self._backoff = backoff
        self._max_backoff = max_backoff
        self._stable_after = stable_after
        self._poll = poll
        self._children: dict[str, _Supervised] = {}
        self._stopping = threading.Event()  # no more restarts
        self._done = threading.Event()  # the monitor thread may end
        self._pass = threading.Lock()  # held during a monitoring pass
        self._thread: _MonitorThread | None = None

    def add(
        self,
        name: str,
        start: Callable[[], subprocess.Popen[bytes]],
        *,
        running: subprocess.Popen[bytes] | None = None,
        after_restart: Callable[[], object] | None = None,
        stop_last: bool = False,
    ) -> subprocess.Popen[bytes]:
        """Start child `name` with `start` now (its errors propagate), or adopt `running`, which `start` made;
        from then on restart it with `start` whenever it exits.

        `after_restart` runs after each restart (not the first start); `stop_last` children are stopped
        after all others (a server the others talk to on their way out).
        """
        if name in self._children:
            raise ValueError(f"child {name!r} is already supervised")
        child = _Supervised(name, start, after_restart, stop_last)
        child.proc = running if running is not None else start()
        child.started_at = time.monotonic()
        self._children[name] = child
        log.info("started %s (pid %s)", name, child.proc.pid)
        return child.proc

    def start_monitor(self) -> None:
        """Watch the children from a background thread until stop()."""
        if self._thread is None:
            self._thread = _MonitorThread(target=self._monitor, name="kandev-supervisor", daemon=True)
            self._thread.start()

    def pid(self, name: str) -> int | None:
        """The running child's pid, or None while it is down (or after stop())."""
        child = self._children.get(name)
        proc = child.proc if child is not None else None
        return proc.pid if proc is not None and self._is_alive(proc) else None

    def alive(self, name: str) -> bool:
        return self.pid(name) is not None

    def restarts(self, name: str) -> int:
        return self._children[name].restarts

    def names(self) -> list[str]:
        return list(self._children)

    @staticmethod
    def _is_alive(proc: subprocess.Popen[bytes]) -> bool:
        # Read-only (no waitid): safe from any thread while the monitor reaps.
        return proc.returncode is None and process_alive(proc.pid)

    def _monitor(self) -> None:
        while not self._done.wait(self._poll):
            try:
                self.check()
            except Exception:  # the monitor must outlive any one failure, or nothing is restarted again
                log.exception("supervisor pass failed")

    def check(self) -> None:
        """One pass: reap children that exited (logging why), restart those whose backoff is over."""
        with self._pass:
            if not self._stopping.is_set():
                self._check()

    def _check(self) -> None:
        for child in list(self._children.values()):
            proc = child.proc
            if proc is not None and _has_exited(proc):
                self._reap(child, proc)
            if child.proc is None and child.restart_at is not None and time.monotonic() >= child.restart_at:
                self._restart(child)

    def _delay(self, child: _Supervised) -> float:
        delay = min(self._max_backoff, self._backoff * 2**child.failures)
        child.failures += 1
        return delay

    def _reap(self, child: _Supervised, proc: subprocess.Popen[bytes]) -> None:
        code = _finish(proc, reap_timeout=5.0)  # also kills what the child left in its group
        ran = time.monotonic() - child.started_at
        if ran >= self._stable_after:
            child.failures = 0
        delay = self._delay(child)
        child.proc = None
        child.restart_at = time.monotonic() + delay
        log.warning(
            "%s (pid %s) %s after %.1fs; restarting it in %.1fs", child.name, proc.pid, describe_exit(code), ran, delay
        )

    def _restart(self, child: _Supervised) -> None:
        try:
            proc = child.start()
        except Exception as exc:
            delay = self._delay(child)
            child.restart_at = time.monotonic() + delay
            log.warning("restarting %s failed (%s); trying again in %.1fs", child.name, exc, delay)
            return
        child.proc, child.started_at, child.restart_at = proc, time.monotonic(), None
        child.restarts += 1
        log.info("restarted %s (pid %s), restart %d", child.name, proc.pid, child.restarts)
        if child.after_restart is not None:
            try:
                child.after_restart()
            except Exception:
                log.exception("after restarting %s", child.name)

    def stop(self, timeout: float = 10.0) -> dict[str, int | None]:
        """Stop restarting, then stop the children (stop_last ones after the rest); returns exit codes."""
        self._stopping.set()
        # A restart in progress (an embedded Redis waits for its port) finishes first.
        with self._pass:
            codes: dict[str, int | None] = {}
            for last in (False, True):
                tier = [c for c in self._children.values() if c.stop_last is last and c.proc is not None]
                codes.update(_stop_together([(c.name, c.proc) for c in tier if c.proc is not None], timeout))
            self._children.clear()
        # Only now: children it restarted get their parent-death signal when this thread ends.
        self._done.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        return codes

    def __enter__(self) -> Supervisor:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def _stop_together(children: Sequence[tuple[str, subprocess.Popen[bytes]]], timeout: float) -> dict[str, int | None]:
    """SIGTERM every child's group at once, SIGKILL the rest after `timeout`, reap; returns exit codes."""
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
    return codes
