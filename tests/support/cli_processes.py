"""`kandev` commands as real processes, forked from an interpreter that has already imported the CLI (the zygote,
tests/support/cli_zygote.py) instead of started afresh.

Each `python -m kandev.cli worker` spends about 1.2 s importing before it does anything, and the suite starts a
few hundred workers, schedulers and one-shot commands: the workers alone were about a quarter of a pass's CPU.
A forked child runs the same `kandev.cli.main()` with the test's arguments, environment, working directory
and standard streams, in its own session when asked, as a child of the zygote: signals, process groups and its
own children work as for a started process. `KandevProcess` answers what the suite asks of a `subprocess.Popen`.

The real entry point (`python -m kandev.cli`, what a person and `kandev serve`'s supervisor start) is still started
afresh by the version test of tests/integration/test_cli_startup_errors.py, the `kandev serve` processes of
tests/integration/test_serve.py, the browser tests and test_no_orphans, `serving()` with interpreter flags, and
every child a `kandev serve` supervises.
"""

from __future__ import annotations

import array
import atexit
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

_ROOT = Path(__file__).resolve().parents[2]
_START_TIMEOUT = 120.0


class _Zygote:
    """The one zygote of this test process, started on first use and stopped at exit."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._path = ""

    def path(self) -> str:
        with self._lock:
            if self._process is None or self._process.poll() is not None:
                self._start()
            return self._path

    def _start(self) -> None:
        folder = tempfile.mkdtemp(prefix="kandev-zygote-")
        self._path = os.path.join(folder, "socket")
        self._process = subprocess.Popen(
            [sys.executable, "-m", "tests.support.cli_zygote", self._path],
            cwd=_ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
        )
        assert self._process.stdout is not None
        selector = selectors.DefaultSelector()
        selector.register(self._process.stdout, selectors.EVENT_READ)
        ready = selector.select(_START_TIMEOUT)
        selector.close()
        line = self._process.stdout.readline() if ready else b""
        assert line == b"ready\n", f"the CLI zygote did not start in {_START_TIMEOUT}s (said {line!r})"
        atexit.register(self.stop)

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            self._process.wait(timeout=15)


_ZYGOTE = _Zygote()


def _fd(stream: int | IO[Any] | None, default: int) -> tuple[int, bool]:
    """The descriptor a child stream goes to, and whether it was opened here (to close once handed over)."""
    if stream is None:
        return default, False
    if stream == subprocess.DEVNULL:
        return os.open(os.devnull, os.O_RDWR), True
    if isinstance(stream, int):
        return stream, False
    return stream.fileno(), False


class KandevProcess:
    """A forked `kandev` command: pid, poll, wait, signals and, when asked for, pipes of its output."""

    def __init__(
        self,
        args: Sequence[str],
        env: Mapping[str, str],
        *,
        cwd: str | os.PathLike[str] | None = None,
        stdin: int | IO[Any] | None = None,
        stdout: int | IO[Any] | None = None,
        stderr: int | IO[Any] | None = None,
        start_new_session: bool = False,
        text: bool = False,
    ) -> None:
        self.args = list(args)
        self.returncode: int | None = None
        self.stdout: IO[Any] | None = None
        self.stderr: IO[Any] | None = None
        handed: list[int] = []  # descriptors to close here once the zygote has them
        streams: list[int] = []
        for number, stream in ((0, stdin), (1, stdout), (2, stderr)):
            if stream == subprocess.PIPE:
                assert number > 0, "no test writes to a command's standard input"
                read_end, write_end = os.pipe()
                pipe = os.fdopen(read_end, "r" if text else "rb")
                if number == 1:
                    self.stdout = pipe
                else:
                    self.stderr = pipe
                streams.append(write_end)
                handed.append(write_end)
            elif stream == subprocess.STDOUT and number == 2:
                streams.append(streams[1])
            else:
                fd, opened = _fd(stream, number)
                streams.append(fd)
                if opened:
                    handed.append(fd)
        cwd = str(cwd or os.getcwd())
        request = {"args": self.args, "env": dict(env), "cwd": cwd, "new_session": start_new_session}
        self._conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self._conn.connect(_ZYGOTE.path())
            self._conn.sendmsg(
                [json.dumps(request).encode()],
                [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", streams).tobytes())],
            )
            answer = self._receive(_START_TIMEOUT)
        finally:
            for fd in handed:
                os.close(fd)
        assert answer is not None and answer.startswith("pid "), f"the CLI zygote did not fork: {answer!r}"
        self.pid = int(answer.split()[1])

    def _receive(self, timeout: float | None) -> str | None:
        self._conn.settimeout(timeout)
        try:
            data = self._conn.recv(256)
        except (TimeoutError, BlockingIOError):
            return None
        return data.decode()

    def poll(self) -> int | None:
        if self.returncode is None:
            answer = self._receive(0)
            if answer is not None:
                self._finish(answer)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            answer = self._receive(timeout)
            if answer is None:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
            self._finish(answer)
        assert self.returncode is not None
        return self.returncode

    def _finish(self, answer: str) -> None:
        assert answer.startswith("exit "), f"the CLI zygote ended before its child {self.pid}: {answer!r}"
        self.returncode = int(answer.split()[1])
        self._conn.close()

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def communicate(self, timeout: float | None = None) -> tuple[Any, Any]:
        """Everything it writes to its piped streams until it exits (bounded by `timeout`), like Popen's."""
        deadline = None if timeout is None else time.monotonic() + timeout
        chunks: dict[IO[Any], list[Any]] = {pipe: [] for pipe in (self.stdout, self.stderr) if pipe is not None}
        selector = selectors.DefaultSelector()
        for pipe in chunks:
            selector.register(pipe, selectors.EVENT_READ)
        try:
            while selector.get_map():
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise subprocess.TimeoutExpired(self.args, timeout or 0)
                for key, _ in selector.select(left):
                    pipe = key.fileobj
                    assert not isinstance(pipe, int)
                    data = os.read(pipe.fileno(), 65536)
                    if data:
                        chunks[pipe].append(data)
                    else:
                        selector.unregister(pipe)
        finally:
            selector.close()
        self.wait(None if deadline is None else max(deadline - time.monotonic(), 0.01))
        outputs = []
        for pipe in (self.stdout, self.stderr):
            if pipe is None:
                outputs.append(None)
                continue
            data = b"".join(chunks[pipe])
            outputs.append(data.decode() if "b" not in pipe.mode else data)
            pipe.close()
        return outputs[0], outputs[1]


def spawn(args: Sequence[str], env: Mapping[str, str], **options: Any) -> KandevProcess:
    """`kandev ARGS` as a running process (options: cwd, stdin, stdout, stderr, start_new_session, text)."""
    return KandevProcess(args, env, **options)


def run(
    args: Sequence[str], env: Mapping[str, str], *, timeout: float, cwd: str | os.PathLike[str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`kandev ARGS` to its end, its output captured as text, like `subprocess.run(..., capture_output=True,
    text=True, timeout=timeout)`; the process is killed if it outlives `timeout`."""
    process = KandevProcess(
        args, env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(15)
        raise
    assert process.returncode is not None
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)
