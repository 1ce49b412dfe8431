"""`make run` rebuilds the web client only when its sources changed (driven with a stand-in npm that logs)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FAKE_NPM = """#!/bin/sh
echo "$*" >> "$NPM_LOG"
case "$1" in
  ci|install) mkdir -p node_modules && touch node_modules/.package-lock.json ;;
  run) mkdir -p dist && echo built > dist/index.html ;;
esac
"""

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


@pytest.fixture
def frontend(tmp_path: Path) -> Path:
    source = tmp_path / "frontend"
    (source / "src").mkdir(parents=True)
    for name, text in {"package.json": "{}", "package-lock.json": "{}", "index.html": "<div id=root>"}.items():
        (source / name).write_text(text)
    (source / "src" / "main.tsx").write_text("export {}")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "npm").write_text(FAKE_NPM)
    (bin_dir / "npm").chmod(0o755)
    return source


def build(frontend: Path) -> list[str]:
    """Run the web client's make target; returns the npm commands it ran."""
    log = frontend.parent / "npm.log"
    log.unlink(missing_ok=True)
    env = {**os.environ, "PATH": f"{frontend.parent / 'bin'}{os.pathsep}{os.environ['PATH']}", "NPM_LOG": str(log)}
    done = subprocess.run(
        ["make", "-C", str(ROOT), f"FRONTEND={frontend}", f"{frontend}/dist/index.html"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return log.read_text().splitlines() if log.exists() else []


def change(frontend: Path, *names: str) -> None:
    """Everything built so far becomes old, then `names` change after it (no sleeping on mtime granularity)."""
    now = time.time()
    for path in frontend.rglob("*"):
        os.utime(path, (now - 100, now - 100))
    for name in names:
        os.utime(frontend / name, (now - 50, now - 50))


def test_the_web_client_is_built_once_and_rebuilt_only_when_a_source_or_the_lock_changes(frontend: Path):
    assert build(frontend) == ["ci", "run build"]
    assert (frontend / "dist" / "index.html").exists()
    assert build(frontend) == [], "nothing changed: nothing is rebuilt"
    change(frontend, "src/main.tsx")
    assert build(frontend) == ["run build"], "a changed source rebuilds without reinstalling"
    assert build(frontend) == []
    change(frontend, "package.json", "package-lock.json")
    assert build(frontend) == ["ci", "run build"], "a changed lock file reinstalls, then rebuilds"
    assert build(frontend) == []


def test_make_run_asks_for_the_web_client_only_when_it_is_out_of_date(frontend: Path):
    build(frontend)

    def dry_run() -> str:
        return subprocess.run(
            ["make", "-n", "-C", str(ROOT), "run", f"FRONTEND={frontend}"],
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout

    assert "npm" not in dry_run() and "kandev serve" in dry_run()
    change(frontend, "src/main.tsx")
    assert "npm run build" in dry_run()


def pytest_command(pytest_args: str) -> str:
    """The pytest command `make test` runs with PYTEST_ARGS (a dry run)."""
    command = ["make", "-n", "-C", str(ROOT), "test", f"PYTEST_ARGS={pytest_args}"]
    # Not the settings of a `make test` this suite may be running under.
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "TEST_WORKERS")}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return next(line for line in done.stdout.splitlines() if "-m pytest" in line)


@pytest.mark.parametrize("pytest_args", ["", "tests/integration", "-x -k tasks", "-m 'not reliability'"])
def test_make_test_runs_the_suite_or_a_folder_in_three_processes_keeping_each_module_in_one(pytest_args: str):
    parallel = ["-n", "3", "--dist", "loadscope", "--no-loadscope-reorder"]
    assert pytest_command(pytest_args).split("-m pytest", 1)[1].split() == ["-q", *parallel, *pytest_args.split()]


@pytest.mark.parametrize(
    "pytest_args", ["tests/unit/test_x.py", "tests/unit/test_x.py::test_y", "-p no:xdist", "-n 4", "--numprocesses=3"]
)
def test_make_test_runs_a_named_file_or_test_or_its_own_choice_of_processes_as_asked(pytest_args: str):
    assert pytest_command(pytest_args).split("-m pytest", 1)[1].split() == ["-q", *pytest_args.split()]
