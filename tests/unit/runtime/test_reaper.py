"""The keeper's view of the process table, and the environment the worker hands it for the agent."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from kandev.runtime.process import env_payload
from kandev.runtime.reaper import children, read_env

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


def test_the_keeper_reads_back_exactly_the_environment_the_worker_sends() -> None:
    env = {"PATH": "/usr/bin", "EMPTY": "", "EQUALS": "a=b=c", "SPACES": "x y", "UNICODE": "café"}
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, env_payload(env) + b"ignored: the lifeline stays open")
        received = read_env(read_end)
    finally:
        os.close(read_end)
        os.close(write_end)
    assert {k.decode(): v.decode() for k, v in received.items()} == env


@pytest.mark.parametrize("env", [{"A": "nul\0byte"}, {"A\0B": "x"}, {"": "x"}, {"A=B": "x"}])
def test_an_environment_no_process_can_hold_is_refused_before_anything_starts(env: dict[str, str]) -> None:
    with pytest.raises(ValueError):
        env_payload(env)
