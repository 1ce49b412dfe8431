"""The zygote behind tests.support.cli_processes: one interpreter that has imported the CLI, the worker, the
scheduler and the app once, and forks a child per `kandev` command a test runs.

Run as `python -m tests.support.cli_zygote SOCKET`. Each request is one SOCK_SEQPACKET message: JSON
{args, env, cwd, new_session} with the child's stdin, stdout and stderr passed as descriptors (SCM_RIGHTS). The
zygote answers `pid N`, and `exit CODE` (subprocess's convention: -N for a signal) when it reaps the child. It
stays single-threaded and runs no event loop, so a fork copies nothing half-done; it ends within a second of its
parent, the test process (PR_SET_PDEATHSIG would end it with the parent's thread that started it).
"""

from __future__ import annotations

import array
import atexit
import json
import os
import selectors
import signal
import socket
import sys
import traceback

import kandev.app  # noqa: F401  (imported for the children: `serve`)
import kandev.cli
import kandev.edge.dashboard  # noqa: F401  (imported for the children: `dashboard`)
import kandev.jobs.scheduler  # noqa: F401  (imported for the children: `scheduler`)
import kandev.jobs.worker  # noqa: F401  (imported for the children: `worker`)
import kandev.migrations  # noqa: F401  (imported for the children: `db upgrade`)

MAX_REQUEST = 1 << 20


def _receive(conn: socket.socket) -> tuple[dict[str, object], list[int]] | None:
    fds = array.array("i")
    data, ancillary, _flags, _address = conn.recvmsg(MAX_REQUEST, socket.CMSG_SPACE(3 * fds.itemsize))
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
    if not data or len(fds) != 3:
        for fd in fds:
            os.close(fd)
        return None
    return json.loads(data), list(fds)


def _run_child(request: dict[str, object], fds: list[int]) -> None:
    """In the forked child: become `python -m kandev.cli ARGS` with the request's environment, then exit."""
    code: object = 0
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        if request["new_session"]:
            os.setsid()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        os.chdir(str(request["cwd"]))
        os.environ.clear()
        os.environ.update(request["env"])  # type: ignore[arg-type]
        sys.argv = [kandev.cli.__file__, *request["args"]]  # type: ignore[misc]
        try:
            kandev.cli.main()
        except SystemExit as stop:
            code = stop.code
        atexit._run_exitfuncs()
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        if isinstance(code, str):
            print(code, file=sys.stderr)
            code = 1
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(code if isinstance(code, int) else 0)


def serve(path: str, parent: int) -> None:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path)
    listener.listen(64)
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_read, False)
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    children: dict[int, socket.socket] = {}
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    selector.register(wake_read, selectors.EVENT_READ)
    print("ready", flush=True)
    while os.getppid() == parent:
        for key, _events in selector.select(timeout=1.0):
            if key.fileobj is listener:
                conn, _ = listener.accept()
                received = _receive(conn)
                if received is None:
                    conn.close()
                    continue
                request, fds = received
                pid = os.fork()
                if pid == 0:
                    listener.close()
                    selector.close()
                    for open_conn in (conn, *children.values()):
                        open_conn.close()
                    _run_child(request, fds)
                for fd in fds:
                    os.close(fd)
                children[pid] = conn
                conn.sendall(f"pid {pid}".encode())
            else:
                try:
                    os.read(wake_read, 4096)
                except BlockingIOError:
                    pass
                _reap(children)


def _reap(children: dict[int, socket.socket]) -> None:
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = children.pop(pid, None)
        if conn is not None:
            try:
                conn.sendall(f"exit {os.waitstatus_to_exitcode(status)}".encode())
            except OSError:
                pass  # the test stopped listening
            conn.close()


if __name__ == "__main__":
    serve(sys.argv[1], os.getppid())
