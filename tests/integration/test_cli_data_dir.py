"""The kandev commands keep the server's state private and refuse an unusable KANDEV_AGENT_USER."""

from __future__ import annotations

import os
import selectors
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support import cli_processes
from tests.support.server import free_port


def kandev_env(data: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KANDEV_")}
    # One embedded worker: these servers are not about the pool.
    return {**env, "KANDEV_DATA_DIR": str(data), "KANDEV_WORKERS": "1", **extra}


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.slow
def test_db_upgrade_tightens_a_loose_data_dir_and_creates_the_database_private(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    data.chmod(0o755)
    (data / "server.key").write_text("0" * 64)
    (data / "server.key").chmod(0o644)
    done = cli_processes.run(["db", "upgrade"], kandev_env(data), timeout=120)
    assert done.returncode == 0, done.stderr
    assert mode(data) == 0o700
    files = {p.name: mode(p) for p in data.iterdir()}
    assert files["kandev.db"] == 0o600 and files["server.key"] == 0o600
    assert set(files.values()) == {0o600}, files


@pytest.mark.parametrize("command", [["worker"], ["serve", "--port", "1"]])
def test_an_unknown_agent_user_stops_the_command_with_one_clear_line(tmp_path: Path, command: list[str]) -> None:
    env = kandev_env(tmp_path / "data", KANDEV_AGENT_USER="no-such-kandev-user", KANDEV_REDIS_URL="redis://127.0.0.1:1")
    done = cli_processes.run(command, env, timeout=60)
    assert done.returncode == 2
    assert "error: KANDEV_AGENT_USER names 'no-such-kandev-user', which is not a user on this machine" in done.stderr


def test_serve_refuses_an_agent_user_with_the_embedded_redis_which_any_local_process_can_reach(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("an agent user needs a root server (CI runs the suite as root)")
    done = cli_processes.run(
        ["serve", "--port", str(free_port())], kandev_env(tmp_path / "data", KANDEV_AGENT_USER="nobody"), timeout=60
    )
    assert done.returncode == 2
    assert "error: KANDEV_AGENT_USER needs KANDEV_REDIS_URL" in done.stderr


@pytest.mark.parametrize(
    ("settings", "words"),
    [
        ({"KANDEV_AGENT_UIDS": "61000"}, "KANDEV_AGENT_UIDS"),
        ({"KANDEV_AGENT_UIDS": "100-200"}, "between 1000 and"),
        ({"KANDEV_AGENT_UIDS": "61000-61999", "KANDEV_AGENT_USER": "nobody"}, "not both"),
        ({"KANDEV_AGENT_UIDS": "65530-65539"}, "65534, an account or group of this machine"),
    ],
)
def test_the_commands_refuse_an_unusable_agent_uid_range(tmp_path: Path, settings: dict[str, str], words: str) -> None:
    if os.geteuid() != 0:
        pytest.skip("agent identities need a root server (CI runs the suite as root)")
    for command in (["worker"], ["serve", "--port", str(free_port())]):
        env = kandev_env(tmp_path / "data", KANDEV_REDIS_URL="redis://127.0.0.1:1", **settings)
        done = cli_processes.run(command, env, timeout=60)
        assert done.returncode == 2, done.stderr
        assert words in done.stderr and "Traceback" not in done.stderr


def test_serve_refuses_agent_identities_with_the_embedded_redis(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("agent identities need a root server (CI runs the suite as root)")
    done = cli_processes.run(
        ["serve", "--port", str(free_port())],
        kandev_env(tmp_path / "data", KANDEV_AGENT_UIDS="61000-61999"),
        timeout=60,
    )
    assert done.returncode == 2
    assert "error: KANDEV_AGENT_UIDS needs KANDEV_REDIS_URL" in done.stderr


@pytest.mark.slow
def test_serve_with_auth_on_and_no_agent_user_warns_that_agents_run_with_its_rights(tmp_path: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "kandev.cli", "serve", "--port", str(free_port())],
        env=kandev_env(tmp_path / "data", KANDEV_AUTH="on"),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    assert process.stdout is not None
    warning = None
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            deadline = time.monotonic() + 60
            while warning is None and time.monotonic() < deadline and selector.select(deadline - time.monotonic()):
                line = process.stdout.readline().decode()
                if not line:
                    break
                if "KANDEV_AGENT_UIDS" in line:
                    warning = line
    finally:
        # The whole group: serve may be building the web client or running its children already.
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
    assert warning is not None, "no warning about agents running with the server's rights"
    assert "WARNING" in warning
    assert "KANDEV_AUTH=on without KANDEV_AGENT_UIDS: agents run with this server's rights" in warning
