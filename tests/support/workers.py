"""A real `kandev worker` process for end-to-end tests, on the test's database and Redis (forked from the CLI
zygote: tests/support/cli_processes.py)."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from subprocess import TimeoutExpired

from redis import Redis
from rq import Queue

from kandev.platform.job_queues import ALL
from kandev.platform.settings import Settings
from tests.support.cli_processes import KandevProcess, spawn


def worker_env(settings: Settings, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KANDEV_")}
    env.update(
        KANDEV_DATABASE_URL=settings.resolved_database_url(),
        KANDEV_REDIS_URL=settings.redis_url or "",
        KANDEV_DATA_DIR=str(settings.data_path),
        KANDEV_TURN_LEASE_SECONDS=str(settings.turn_lease_seconds),
        KANDEV_SECRET_KEY=settings.server_key.decode(),
        KANDEV_PUBLIC_URL=settings.resolved_public_url(),
        **extra,
    )
    return env


def empty_queues(redis_url: str) -> None:
    connection = Redis.from_url(redis_url)
    for name in ALL:
        Queue(name, connection=connection).empty()
    connection.close()


def stop_gracefully(process: KandevProcess) -> None:
    """SIGTERM, up to 15 s to exit, then SIGKILL."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def running_worker(settings: Settings, **extra_env: str) -> Iterator[KandevProcess]:
    """A worker for the duration of the block; queues are emptied first so other tests' jobs don't leak in."""
    assert settings.redis_url
    empty_queues(settings.redis_url)
    process = spawn(["worker"], worker_env(settings, **extra_env), start_new_session=True)
    try:
        yield process
    finally:
        stop_gracefully(process)


@contextmanager
def running_scheduler(settings: Settings, interval: float = 0.5, **extra_env: str) -> Iterator[KandevProcess]:
    """The scheduler, ticking fast so recovery (reaping, re-enqueueing) happens within a test's bounds."""
    env = worker_env(settings, KANDEV_SCHEDULER_INTERVAL_SECONDS=str(interval), **extra_env)
    process = spawn(["scheduler"], env, start_new_session=True)
    try:
        yield process
    finally:
        stop_gracefully(process)
