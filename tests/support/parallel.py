"""Running the suite in parallel with pytest-xdist: which tests go together, and what each worker has to itself.

Its PostgreSQL databases, SQLite files, ports and embedded Redis servers are its own already (random names, free
ports, one per session). A real Redis is shared: each worker takes the database after the configured one by its
index, and counts spare ones (for a test that needs a second database) down from the last.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from xdist.scheduler import LoadScopeScheduling

REDIS_DATABASES = 16  # Redis's default `databases`
BROWSER_TESTS = "tests/browser/"


class _ModulesAndBrowser(LoadScopeScheduling):
    """`--dist loadscope` (a module's tests in one worker, so its module fixtures start once), with every browser
    test in one unit: one worker builds the web client and serves it while the others run everything else."""

    def _split_scope(self, nodeid: str) -> str:
        return BROWSER_TESTS if nodeid.startswith(BROWSER_TESTS) else super()._split_scope(nodeid)


def scheduler(config: pytest.Config, log: Any) -> LoadScopeScheduling | None:
    """The scheduler for `--dist loadscope` (None: xdist's own for any other mode)."""
    return _ModulesAndBrowser(config, log) if config.getoption("dist") == "loadscope" else None


def worker_index() -> int:
    """0 for `gw0` or a run without xdist, 1 for `gw1`, and so on."""
    return int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw"))


def redis_db(url: str, number: int) -> str:
    """The same Redis server, logical database `number`."""
    assert 0 <= number < REDIS_DATABASES, f"Redis has databases 0-{REDIS_DATABASES - 1}, not {number}"
    head, _, last = url.rstrip("/").rpartition("/")
    return f"{head}/{number}" if last.isdigit() else f"{url.rstrip('/')}/{number}"


def _database(url: str) -> int:
    last = url.rstrip("/").rpartition("/")[2]
    return int(last) if last.isdigit() else 0


def worker_redis_url(url: str) -> str:
    """This worker's database on the Redis at `url`: the URL's own for the first worker."""
    index = worker_index()
    return url if index == 0 else redis_db(url, _database(url) + index)


def spare_redis_url(url: str) -> str:
    """A second database on the same server for this worker alone (flushing it touches no other worker)."""
    return redis_db(url, REDIS_DATABASES - 1 - worker_index())


def worker_suffix() -> str:
    """`-gw1` under xdist, '' otherwise: for files every worker writes in one shared folder (server logs)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    return f"-{worker}" if worker else ""


@contextmanager
def one_at_a_time(lock: Path, timeout: float = 1200) -> Iterator[None]:
    """Holds an exclusive lock on the file `lock` (other workers wait, bounded, then find the work done)."""
    lock.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + timeout
    with lock.open("a") as held:
        while True:
            try:
                fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                assert time.monotonic() < deadline, f"{lock} still held by another test worker after {timeout}s"
                time.sleep(0.2)
        try:
            yield
        finally:
            fcntl.flock(held, fcntl.LOCK_UN)
