"""Children die with their parent, stop_all leaves nothing behind, and the scheduler loop stops on cue."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from kandev.jobs import scheduler
from kandev.platform.settings import Settings
from kandev.platform.supervisor import ChildProcesses, process_alive, set_parent_death_signal, stop_process_group

ROOT = Path(__file__).resolve().parents[2]


def wait_until(condition: Callable[[], bool], timeout: float = 10.0, interval: float = 0.02) -> bool:
    """Poll `condition` until it holds or `timeout` passes; returns its last value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(interval)
    return condition()


def read_pids(path: Path, count: int, timeout: float = 10.0) -> list[int]:
    """Wait (bounded) until `path` holds `count` pids, one per line, and return them."""

    def ready() -> bool:
        return path.exists() and len(path.read_text().split()) >= count

    assert wait_until(ready, timeout), f"{path} did not get {count} pid(s) in time"
    return [int(p) for p in path.read_text().split()[:count]]


def python(code: str) -> list[str]:
    return [sys.executable, "-c", textwrap.dedent(code)]


# A process that ignores SIGTERM, forks a grandchild (same process group, also ignoring SIGTERM),
# writes both pids to argv[1] and waits: only SIGKILL to the whole group ends both.
STUBBORN_WITH_GRANDCHILD = """
    import os, signal, sys, time
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    child = os.fork()
    if child == 0:
        time.sleep(120)
        os._exit(0)
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write(f"{os.getpid()}\\n{child}\\n")
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    time.sleep(120)
"""


def test_set_parent_death_signal_is_supported_on_linux():
    if not sys.platform.startswith("linux"):
        pytest.skip("PR_SET_PDEATHSIG is Linux-only")
    # Arming it in the test process itself is harmless: pytest's parent outlives the test run.
    assert set_parent_death_signal(0) is True


def test_child_processes_are_all_gone_after_stop_all(tmp_path: Path):
    pids_file = tmp_path / "pids"
    children = ChildProcesses()
    polite = children.start("polite", python("import time; time.sleep(120)"))
    children.start("stubborn", [*python(STUBBORN_WITH_GRANDCHILD), str(pids_file)])
    stubborn_pid, grandchild_pid = read_pids(pids_file, 2)

    started = time.monotonic()
    codes = children.stop_all(timeout=1.0)

    assert time.monotonic() - started < 8, "stop_all must be bounded by its timeout plus reaping"
    assert codes == {"polite": -signal.SIGTERM, "stubborn": -signal.SIGKILL}
    assert wait_until(lambda: not any(process_alive(p) for p in (polite.pid, stubborn_pid, grandchild_pid)), 5)
    assert children.names() == []


def test_stop_all_sends_sigterm_first_so_children_can_exit_cleanly(tmp_path: Path):
    marker = tmp_path / "cleaned-up"
    ready = tmp_path / "ready"
    code = f"""
        import pathlib, signal, sys, time
        def bye(*_):
            pathlib.Path({str(marker)!r}).write_text("bye")
            sys.exit(0)
        signal.signal(signal.SIGTERM, bye)
        pathlib.Path({str(ready)!r}).write_text("ready")
        time.sleep(120)
    """
    children = ChildProcesses()
    children.start("graceful", python(code))
    assert wait_until(ready.exists)

    assert children.stop_all(timeout=10) == {"graceful": 0}
    assert marker.read_text() == "bye"


def test_a_grandchild_left_behind_by_a_child_that_exited_is_killed_with_its_group(tmp_path: Path):
    pids_file = tmp_path / "pids"
    # The child exits on SIGTERM, but its grandchild (same group) ignores SIGTERM and would linger.
    code = f"""
        import os, signal, sys, time
        child = os.fork()
        if child == 0:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            time.sleep(120)
            os._exit(0)
        with open({str(pids_file)!r} + ".tmp", "w") as f:
            f.write(f"{{child}}\\n")
        os.rename({str(pids_file)!r} + ".tmp", {str(pids_file)!r})
        time.sleep(120)
    """
    children = ChildProcesses()
    children.start("leaky", python(code))
    (grandchild,) = read_pids(pids_file, 1)

    assert children.stop_all(timeout=5) == {"leaky": -signal.SIGTERM}
    assert wait_until(lambda: not process_alive(grandchild), 5)


def test_children_die_when_their_parent_is_killed(tmp_path: Path):
    pids_file = tmp_path / "pids"
    # An intermediate process supervises a child, reports the child's pid, then waits to be killed.
    intermediate_code = f"""
        import os, sys, time
        from kandev.platform.supervisor import ChildProcesses
        children = ChildProcesses()
        child = children.start("sleeper", [sys.executable, "-c", "import time; time.sleep(120)"])
        with open({str(pids_file)!r} + ".tmp", "w") as f:
            f.write(f"{{child.pid}}\\n")
        os.rename({str(pids_file)!r} + ".tmp", {str(pids_file)!r})
        time.sleep(120)
    """
    intermediate = subprocess.Popen(python(intermediate_code), cwd=ROOT, start_new_session=True)
    try:
        (child,) = read_pids(pids_file, 1, timeout=20)
        assert process_alive(child)

        intermediate.kill()
        intermediate.wait(timeout=10)

        assert wait_until(lambda: not process_alive(child), 5), "the child outlived its SIGKILLed parent"
    finally:
        stop_process_group(intermediate, timeout=1)


def test_a_child_is_refused_a_second_start_while_it_runs():
    children = ChildProcesses()
    children.start("one", python("import time; time.sleep(120)"))
    try:
        with pytest.raises(ValueError, match="already running"):
            children.start("one", python("pass"))
    finally:
        children.stop_all(timeout=5)


def test_exited_children_are_reported_and_still_stopped_cleanly():
    children = ChildProcesses()
    children.start("quick", python("import sys; sys.exit(3)"))
    children.start("slow", python("import time; time.sleep(120)"))

    assert wait_until(lambda: children.exited() == ["quick"], 10)
    assert children.stop_all(timeout=5) == {"quick": 3, "slow": -signal.SIGTERM}


def test_scheduler_runs_every_tick_hook_on_each_tick_until_max_ticks(monkeypatch, caplog):
    seen: list[str] = []

    async def async_hook(settings: Settings) -> None:
        seen.append("async")

    monkeypatch.setattr(scheduler, "tick_hooks", [lambda s: seen.append("sync"), async_hook])
    caplog.set_level(logging.DEBUG, logger="kandev.scheduler")

    ticks = scheduler.run_scheduler(Settings(scheduler_interval_seconds=0.01), max_ticks=3)

    assert ticks == 3
    assert seen == ["sync", "async"] * 3
    assert [r.getMessage() for r in caplog.records if "tick" in r.getMessage() and "stopped" not in r.getMessage()] == [
        "scheduler tick 1",
        "scheduler tick 2",
        "scheduler tick 3",
    ]


def test_scheduler_keeps_ticking_when_a_hook_fails(monkeypatch):
    seen: list[int] = []

    def broken(settings: Settings) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(scheduler, "tick_hooks", [broken, lambda s: seen.append(1)])

    assert scheduler.run_scheduler(Settings(scheduler_interval_seconds=0.01), max_ticks=2) == 2
    assert seen == [1, 1]


def test_scheduler_stops_promptly_when_its_stop_event_is_set(monkeypatch):
    ticked = threading.Event()
    monkeypatch.setattr(scheduler, "tick_hooks", [lambda s: ticked.set()])
    stop = threading.Event()
    result: list[int] = []
    thread = threading.Thread(
        target=lambda: result.append(scheduler.run_scheduler(Settings(scheduler_interval_seconds=60), stop_event=stop))
    )
    thread.start()
    assert ticked.wait(timeout=10)
    started = time.monotonic()
    stop.set()
    thread.join(timeout=5)

    assert not thread.is_alive()
    assert time.monotonic() - started < 2
    assert result == [1]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_scheduler_process_exits_promptly_on_a_stop_signal(tmp_path: Path, sig: signal.Signals):
    ticked = tmp_path / "ticked"
    code = f"""
        import pathlib
        from kandev.platform.settings import Settings
        from kandev.jobs import scheduler
        scheduler.tick_hooks[:] = [lambda s: pathlib.Path({str(ticked)!r}).write_text("x")]
        raise SystemExit(0 if scheduler.run_scheduler(Settings(scheduler_interval_seconds=60)) == 1 else 1)
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("KANDEV_")}
    proc = subprocess.Popen(python(code), cwd=ROOT, env=env, start_new_session=True)
    try:
        assert wait_until(ticked.exists, 20)
        started = time.monotonic()
        proc.send_signal(sig)
        assert proc.wait(timeout=10) == 0
        # Promptly: well inside the 60 s interval it would otherwise sleep out (interpreter shutdown included,
        # which takes seconds on a loaded 2-core machine running the suite in parallel).
        assert time.monotonic() - started < 5
    finally:
        stop_process_group(proc, timeout=1)
