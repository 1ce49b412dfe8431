"""The keeper's view of the process table: which processes are a pid's live children."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from kandev.runtime.reaper import children

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the keeper reads Linux's /proc")


def test_children_lists_the_live_children_of_a_pid_and_not_its_zombies_or_grandchildren() -> None:
    code = "import subprocess, sys, time; subprocess.Popen(['sleep', '30']); print('up', flush=True); time.sleep(30)"
    live = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    dead = subprocess.Popen(["true"])
    grandchildren: list[int] = []
    try:
        assert live.stdout is not None and live.stdout.readline() == b"up\n"
        os.waitid(os.P_PID, dead.pid, os.WEXITED | os.WNOWAIT)  # a zombie until reaped
        mine = children(os.getpid())
        assert live.pid in mine and dead.pid not in mine
        grandchildren = children(live.pid)
        assert len(grandchildren) == 1 and grandchildren[0] not in mine
    finally:
        for pid in grandchildren:
            os.kill(pid, signal.SIGKILL)
        live.kill()
        live.wait()
        dead.wait()
