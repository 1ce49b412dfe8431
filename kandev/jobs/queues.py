"""Queue names and the one enqueue helper, so every job gets an explicit timeout."""

from __future__ import annotations

from typing import Any

from redis import Redis
from rq import Queue

DEFAULT = "kandev-default"
TURNS = "kandev-turns"
AUTOMATIONS = "kandev-automations"
ALL = (TURNS, DEFAULT, AUTOMATIONS)


def worker_queue_name(worker_name: str) -> str:
    """A worker's own queue: sessions whose working tree lives on it are routed here."""
    return f"kandev-worker-{worker_name}"


def get_queue(name: str, connection: Redis) -> Queue:
    return Queue(name, connection=connection)


def enqueue(
    queue_name: str,
    func_path: str,
    *args: Any,
    job_timeout: int,
    connection: Redis,
    job_id: str | None = None,
) -> str:
    job = get_queue(queue_name, connection).enqueue(
        func_path, *args, job_timeout=job_timeout, job_id=job_id, result_ttl=3600, failure_ttl=7 * 24 * 3600
    )
    return job.id
