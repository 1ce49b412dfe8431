"""`kandev serve` says at start-up whether this host can make each kind of box, and why not."""

from __future__ import annotations

import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.support.boxes import needs
from tests.support.processes import descendants, wait_gone
from tests.support.serve import serve_env
from tests.support.server import free_port

pytestmark = pytest.mark.slow


def _lines(process: subprocess.Popen[bytes]) -> queue.Queue[str]:
    """The process's output lines, read by a thread so every wait on them can be bounded."""
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        assert process.stdout is not None
        for raw in process.stdout:
            lines.put(raw.decode("utf-8", "replace"))

    threading.Thread(target=read, daemon=True).start()
    return lines


def test_serve_reports_which_boxes_this_host_can_make_and_why_not(tmp_path: Path) -> None:
    needs("sandbox")
    missing = tmp_path / "no-docker.sock"
    env = serve_env(tmp_path / "data", DOCKER_HOST=f"unix://{missing}")
    process = subprocess.Popen(
        [sys.executable, "-m", "kandev.cli", "serve", "--port", str(free_port())],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    lines = _lines(process)
    wanted = {
        "sandbox": "executor sandbox: boxes can be made on this host",
        "docker": f"executor docker: unavailable on this host: the Docker daemon does not answer at {missing}",
    }
    seen: list[str] = []
    try:
        deadline = time.monotonic() + 60
        while any(not any(w in line for line in seen) for w in wanted.values()):
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"kandev serve did not report its executors; it said: {''.join(seen)}"
            try:
                seen.append(lines.get(timeout=remaining))
            except queue.Empty:
                continue
    finally:
        tree = descendants(process.pid)
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
        assert not wait_gone(tree), "kandev serve left processes behind"
    [docker] = [line for line in seen if wanted["docker"] in line]
    assert "WARNING" in docker
