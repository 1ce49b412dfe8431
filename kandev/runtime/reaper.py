"""The agent's keeper: `python -I -S reaper.py FD --cwd DIR [--user UID GID GROUPS] [--limits as=N,nproc=N] --
ARGV...` (Linux, stdlib only).

It starts with an empty environment and reads the agent's from FD (`SIZE\n` then `NAME=VALUE\0`...):
it runs as the worker's user, so loader variables meant for the agent (LD_PRELOAD, LD_LIBRARY_PATH,
possibly pointing into the agent user's files) must never reach it.

It runs between a worker and its agent so that the agent's whole process tree dies with it: it makes
itself a child subreaper (every orphaned descendant of the agent, even one that called setsid or
double-forked, is reparented to it), starts the agent in its own session, and then kills every
descendant when the agent exits, when it gets SIGTERM (the agent's group and the orphans get SIGTERM
first) or when FD, a socket whose other end only the worker holds, reaches EOF: the worker closed it
or died, however it died. It writes the agent's pid (or `!errno` when exec failed) on FD once, and
exits with the agent's status, re-raising the signal that killed it.

Where a cgroup v2 hierarchy is writable (root, or a delegated subtree) the agent also gets a cgroup of its
own, below the keeper's, reported on FD after the pid: should the keeper itself be SIGKILLed, its worker
can still end the whole tree with `cgroup.kill`. Without one the subreaper alone does the work.

Run as a script (the worker imports it only for its cgroup helpers), it must start in milliseconds, so
it imports only C modules (`_signal`
rather than `signal`, which pulls in enum; `_ctypes` rather than ctypes, when it has what prctl needs;
no socket module: the lifeline is a plain fd).
"""

from __future__ import annotations

import errno
import os
import select
import sys
import time

TYPE_CHECKING = False  # importing typing would cost the keeper's whole start-up time again
if TYPE_CHECKING:
    import signal  # what `_signal` offers, as typeshed describes it
    from collections.abc import Callable
else:
    import _signal as signal

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
# A process stuck in uninterruptible sleep must not keep the keeper (and its worker) waiting forever.
_REAP_SECONDS = 10.0
_CGROUP_PREFIX = "kandev-agent-"


def _prctl(option: int, value: int) -> bool:
    try:
        import _ctypes

        prctl = _ctypes.dlsym(_ctypes.dlopen(None), "prctl")  # type: ignore[arg-type]  # None: this process
        return bool(_ctypes.call_function(prctl, (option, value, 0, 0, 0)) == 0)
    except (ImportError, AttributeError, OSError):
        import ctypes

        return bool(ctypes.CDLL(None).prctl(option, value, 0, 0, 0) == 0)


def children(ppid: int) -> list[int]:
    """Live processes whose parent is `ppid` (a scan of /proc: /proc/PID/task/TID/children may be absent)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(b")") + 2 :].split()
        if int(fields[1]) == ppid and fields[0] not in (b"Z", b"X"):
            found.append(int(entry))
    return found


def _signal_all(group: int | None, sig: int) -> None:
    """`sig` to the agent's group (None once the agent is reaped: its id may then be reused) and to every
    child of ours outside it (the orphans reparented to us)."""
    if group is not None:
        try:
            os.killpg(group, sig)
        except OSError:
            pass
    for pid in children(os.getpid()):
        # Once only: a second SIGTERM can land while the first one's handler is exiting and kill it.
        try:
            if group is None or os.getpgid(pid) != group:
                os.kill(pid, sig)
        except OSError:
            pass


def kill_tree(agent: int, status: int | None) -> int | None:
    """SIGKILL every descendant until none is left, reaping each; returns the agent's wait status (`status`
    when it was reaped already, None if it never was)."""
    # waitpid blocks on a process stuck in uninterruptible sleep: the alarm's default action ends us then.
    signal.alarm(int(_REAP_SECONDS))
    deadline = time.monotonic() + _REAP_SECONDS
    while time.monotonic() < deadline:
        # A killed process's own children are reparented to us before we can reap it, so rescanning
        # after every reap reaches them; nothing SIGKILLed can fork again, so this ends.
        _signal_all(agent if status is None else None, signal.SIGKILL)
        try:
            pid, code = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        if pid == agent:
            status = code
    return status


def make_cgroup() -> str | None:
    """A new cgroup v2 below ours for the agent (with `cgroup.kill`), or None where that is not possible."""
    try:
        with open("/proc/self/cgroup") as f:
            ours = next(line[3:].strip() for line in f if line.startswith("0::"))
        with open("/proc/self/mountinfo") as f:
            mounts = [line.split() for line in f if " - cgroup2 " in line]
        if not mounts:
            return None
        root, mount_point = mounts[0][3], mounts[0][4]
        relative = ours[len(root) :] if root != "/" and ours.startswith(root) else ours
        parent = os.path.join(mount_point, relative.lstrip("/"))
        path = os.path.join(parent, f"{_CGROUP_PREFIX}{os.getpid()}")
        os.mkdir(path)
    except (OSError, StopIteration, IndexError):
        return None
    _sweep(parent)
    if os.path.exists(os.path.join(path, "cgroup.kill")):
        return path
    remove_cgroup(path)  # a kernel before 5.14: no cgroup.kill, so the cgroup would add nothing
    return None


def _sweep(parent: str) -> None:
    """Remove the empty cgroups of keepers that were killed along with their worker (rmdir refuses a
    populated one, so nothing running is touched)."""
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        keeper = name[len(_CGROUP_PREFIX) :]
        if name.startswith(_CGROUP_PREFIX) and keeper.isdigit() and not os.path.exists(f"/proc/{keeper}"):
            remove_cgroup(os.path.join(parent, name))


def join_cgroup(path: str, pid: int) -> None:
    try:
        with open(os.path.join(path, "cgroup.procs"), "w") as f:
            f.write(str(pid))
    except OSError:
        pass  # the subreaper still holds the tree


def kill_cgroup(path: str) -> None:
    try:
        with open(os.path.join(path, "cgroup.kill"), "w") as f:
            f.write("1")
    except OSError:
        pass


def remove_cgroup(path: str) -> bool:
    try:
        os.rmdir(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False  # still populated (EBUSY): its processes have not exited yet
    return True


def _limit_setter(limits: dict[str, int]) -> Callable[[], None]:
    """What sets the agent's resource limits (a sandbox profile's memory and processes) in the child before exec;
    made here, as the keeper's user: the agent's identity may not read the interpreter's modules."""
    import resource

    names = {"as": resource.RLIMIT_AS, "nproc": resource.RLIMIT_NPROC}
    pairs = [(names[name], value) for name, value in limits.items()]

    def set_limits() -> None:
        for limit, value in pairs:
            resource.setrlimit(limit, (value, value))

    return set_limits


def _start_agent(
    argv: list[str],
    env: dict[bytes, bytes],
    cwd: str,
    identity: tuple[int, int, list[int]] | None,
    cgroup: str | None,
    set_limits: Callable[[], None] | None = None,
) -> tuple[int, int]:
    """Fork and exec the agent in its own session; returns (pid, 0) or (0, errno of the failed exec)."""
    report_r, report_w = os.pipe()  # close-on-exec: EOF without data means exec succeeded
    go_r, go_w = os.pipe()  # the keeper's word that the child is in the agent's cgroup
    keeper = os.getpid()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(report_r)
            os.close(go_w)
            os.setsid()
            for sig in (signal.SIGTERM, signal.SIGCHLD, signal.SIGINT, signal.SIGHUP):
                signal.signal(sig, signal.SIG_DFL)
            signal.set_wakeup_fd(-1)
            if identity is not None:
                uid, gid, groups = identity
                os.setgroups(groups)
                os.setresgid(gid, gid, gid)
                os.setresuid(uid, uid, uid)
                # What it creates anywhere (a shared /tmp included) is its own to read: other identities' agents
                # must not read what this one leaves behind.
                os.umask(0o077)
            if set_limits is not None:
                set_limits()
            # Entered as the agent: the path is the agent's, and so are the rights it is followed with.
            try:
                os.chdir(cwd)
            except OSError as exc:
                os.write(report_w, f"-{exc.errno or errno.EIO}".encode())  # negative: the directory failed
                os._exit(127)
            # Armed after the uid switch (which would clear it): the agent dies if its keeper is killed.
            _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
            if os.getppid() != keeper:
                os._exit(1)
            # Not before the keeper has moved us into the agent's cgroup: a keeper starved of CPU after the
            # fork let the agent start and fork its helpers outside it.
            if not os.read(go_r, 1):
                os._exit(1)
            os.execvpe(argv[0], argv, env)  # PATH is looked up in the agent's environment
        except OSError as exc:
            os.write(report_w, str(exc.errno or errno.EIO).encode())
        except Exception:  # a limit the kernel refused: reported, never a silent exit
            os.write(report_w, str(errno.EINVAL).encode())
        finally:
            os._exit(127)
    os.close(report_w)
    os.close(go_r)
    if cgroup is not None:
        join_cgroup(cgroup, pid)  # the child waits for it before exec: nothing it forks can be outside
    try:
        os.write(go_w, b"1")
    except BrokenPipeError:
        pass  # the child failed before exec (its identity switch, say) and exited: its report says why
    os.close(go_w)
    with os.fdopen(report_r, "rb") as report:
        failure = report.read()
    if failure:
        os.waitpid(pid, 0)
        return 0, int(failure)
    return pid, 0


def _read_until(fd: int, data: bytes, done: Callable[[bytes], bool]) -> bytes:
    while not done(data):
        chunk = os.read(fd, 65536)
        if not chunk:
            os._exit(1)  # the worker went away before it told us what to run
        data += chunk
    return data


def read_env(fd: int) -> dict[bytes, bytes]:
    """The agent's environment, as the worker sends it on the lifeline."""
    data = _read_until(fd, b"", lambda d: b"\n" in d)
    head, _, data = data.partition(b"\n")
    size = int(head)
    data = _read_until(fd, data, lambda d: len(d) >= size)
    return dict(item.partition(b"=")[::2] for item in data[:size].split(b"\0") if item)


def _still_held(lifeline: int) -> bool:
    try:
        return bool(os.read(lifeline, 64))
    except OSError:
        return False


def _exit_like(status: int | None) -> None:
    if status is None:
        os._exit(1)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        try:
            signal.signal(sig, signal.SIG_DFL)
        except OSError:
            pass  # SIGKILL and SIGSTOP have no handler to reset
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)
    os._exit(os.waitstatus_to_exitcode(status))


def main(args: list[str]) -> None:
    lifeline = int(args[0])
    os.set_inheritable(lifeline, False)
    rest = args[1:]
    cwd = "/"
    if rest[0] == "--cwd":
        cwd, rest = rest[1], rest[2:]
    identity = None
    if rest[0] == "--user":
        identity = (int(rest[1]), int(rest[2]), [int(g) for g in rest[3].split(",") if g])
        rest = rest[4:]
    limits = None
    if rest[0] == "--limits":
        limits = {k: int(v) for k, _, v in (item.partition("=") for item in rest[1].split(",") if item)}
        rest = rest[2:]
    argv = rest[1:]  # after "--"
    env = read_env(lifeline)
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    cgroup = make_cgroup()
    agent, failure = _start_agent(argv, env, cwd, identity, cgroup, _limit_setter(limits) if limits else None)
    os.write(lifeline, f"!{failure}\n".encode() if failure else f"{agent} {cgroup or ''}\n".encode())
    if failure:
        if cgroup is not None:
            remove_cgroup(cgroup)
        os._exit(127)
    # The agent has the stdio pipes; we keep only stderr, for our own last words.
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    status = None
    termed = False
    while status is None:
        ready, _, _ = select.select([lifeline, wake_r], [], [])
        if wake_r in ready:
            os.read(wake_r, 512)
        if stopping and not termed:
            termed = True
            _signal_all(agent, signal.SIGTERM)
        if lifeline in ready and not _still_held(lifeline):
            break  # the worker closed it, or died
        while True:
            try:
                pid, code = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            if pid == agent:
                status = code
    if cgroup is not None:
        kill_cgroup(cgroup)  # atomically, before the sweep: nothing in it can fork any more
    status = kill_tree(agent, status)
    if cgroup is not None:
        remove_cgroup(cgroup)  # empty now: every member was our descendant and has been reaped
    _exit_like(status)


if __name__ == "__main__":
    main(sys.argv[1:])
