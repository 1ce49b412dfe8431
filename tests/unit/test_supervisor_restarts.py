"""The Supervisor restarts a child that exits, after a backoff that grows while it keeps dying, logs why,
and stops everything (restarted children too) on stop()."""

from __future__ import annotations

import functools
import logging
import os
import re
import signal
import subprocess

import pytest

from kandev.platform.supervisor import Supervisor, describe_exit, process_alive, spawn
from tests.unit.test_supervisor import python, wait_until

SLEEPER = python("import time; time.sleep(120)")


def starter(argv: list[str]):
    return functools.partial(spawn, argv)


def delays(text: str, name: str) -> list[float]:
    return [float(d) for d in re.findall(rf"{name} \(pid \d+\) .*?; restarting it in ([\d.]+)s", text)]


def test_an_exit_is_described_by_its_code_or_its_signal():
    assert describe_exit(3) == "exited with code 3"
    assert describe_exit(-signal.SIGKILL) == "was killed by SIGKILL"
    assert describe_exit(None) == "exited (status unknown)"


def test_a_child_that_keeps_exiting_is_restarted_with_a_doubling_backoff_and_its_exit_code_logged(caplog):
    caplog.set_level(logging.INFO, "kandev.platform.supervisor")
    with Supervisor(backoff=0.1, max_backoff=0.4, stable_after=60) as supervisor:
        supervisor.add("crasher", starter(python("import sys; sys.exit(3)")))
        assert wait_until(lambda: (supervisor.check(), supervisor.restarts("crasher") >= 4)[1], 20)
    assert "crasher (pid" in caplog.text and "exited with code 3" in caplog.text
    assert delays(caplog.text, "crasher")[:4] == [0.1, 0.2, 0.4, 0.4]


def test_the_backoff_starts_over_once_a_child_ran_for_a_while(caplog):
    caplog.set_level(logging.INFO, "kandev.platform.supervisor")
    with Supervisor(backoff=0.1, stable_after=0.2) as supervisor:
        supervisor.add("steady", starter(python("import sys, time; time.sleep(0.4); sys.exit(1)")))
        assert wait_until(lambda: (supervisor.check(), supervisor.restarts("steady") >= 3)[1], 20)
    assert delays(caplog.text, "steady")[:3] == [0.1, 0.1, 0.1]


def test_a_killed_child_is_logged_with_its_signal_and_replaced_by_a_new_process(caplog):
    caplog.set_level(logging.INFO, "kandev.platform.supervisor")
    restarted: list[int] = []
    with Supervisor(backoff=0.05) as supervisor:
        first = supervisor.add("sleeper", starter(SLEEPER), after_restart=lambda: restarted.append(1))
        assert restarted == [], "after_restart runs after restarts, not the first start"
        supervisor.start_monitor()
        os.kill(first.pid, signal.SIGKILL)
        assert wait_until(lambda: supervisor.pid("sleeper") not in (None, first.pid), 10)
        assert supervisor.alive("sleeper") and restarted == [1]
    assert re.search(r"sleeper \(pid \d+\) was killed by SIGKILL", caplog.text)


def test_stop_ends_restarted_children_too_and_nothing_is_restarted_after_it():
    supervisor = Supervisor(backoff=0.05)
    first = supervisor.add("sleeper", starter(SLEEPER))
    supervisor.start_monitor()
    os.kill(first.pid, signal.SIGKILL)
    assert wait_until(lambda: supervisor.pid("sleeper") not in (None, first.pid), 10)
    second = supervisor.pid("sleeper")
    assert second is not None

    codes = supervisor.stop(timeout=5)

    assert codes == {"sleeper": -signal.SIGTERM}
    assert not process_alive(second)
    assert supervisor.names() == []


def test_a_restart_that_fails_to_start_is_tried_again_later(caplog):
    caplog.set_level(logging.INFO, "kandev.platform.supervisor")
    attempts: list[int] = []

    def flaky() -> subprocess.Popen[bytes]:
        attempts.append(1)
        if len(attempts) == 2:
            raise OSError("port in use")
        return spawn(python("import sys; sys.exit(0)") if len(attempts) == 1 else SLEEPER)

    with Supervisor(backoff=0.1) as supervisor:
        supervisor.add("flaky", flaky)
        assert wait_until(lambda: (supervisor.check(), supervisor.alive("flaky"))[1] and len(attempts) == 3, 10)
    assert "restarting flaky failed (port in use); trying again in 0.2s" in caplog.text


def test_a_second_child_of_the_same_name_is_refused():
    with Supervisor() as supervisor:
        supervisor.add("one", starter(SLEEPER))
        with pytest.raises(ValueError, match="already supervised"):
            supervisor.add("one", starter(SLEEPER))
