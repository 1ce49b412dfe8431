"""Reads a replica asks of the worker holding a task's worktree (its changes, one file's hunks), answered while
the worker runs turns: a thread of the worker takes them from the worker's own reads queue, runs each on the
worker's event loop and pushes the answer to the list the replica waits on."""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import Any

from redis import Redis
from redis.exceptions import RedisError
from rq import Queue
from rq.exceptions import DequeueTimeout

from kandev.domain.reviews.service import ReviewService
from kandev.domain.shipping import local as shipping
from kandev.jobs.utility import UTILITY_SECONDS, suggest_commit_message
from kandev.jobs.worker_loop import current_loop
from kandev.platform.job_queues import get_queue, reads_queue_name, reply_key
from kandev.wiring import SYSTEM

log = logging.getLogger("kandev.jobs.reads")

# Longer than any asker waits: a read still running past it is of no use to anyone. Shipping (a push, an update
# from the base) and a suggested commit message take longer, and their askers wait longer.
READ_SECONDS = 30.0
SHIP_SECONDS = 300.0
REPLY_TTL_SECONDS = 30


def answer_read(request: dict[str, Any]) -> dict[str, Any]:
    """RQ job body: the answer to a replica's read, from this worker's own worktrees only."""
    worker = current_loop()
    if worker is None:
        return {"error": "reads are answered by `kandev worker` processes"}
    ctx = worker.ctx.with_principal(SYSTEM)
    if request.get("op") == "ship":
        return worker.call(shipping.answer(ctx, request), timeout=SHIP_SECONDS)
    if request.get("op") == "suggest_message":
        return worker.call(suggest_commit_message(ctx, request), timeout=UTILITY_SECONDS + 10)
    return worker.call(ReviewService(ctx).answer_worker_request(request), timeout=READ_SECONDS)


class ReadAnswerer:
    """The worker's reads queue, served by a thread of its own (the worker's main thread may run a turn for
    hours)."""

    def __init__(self, connection: Redis, worker_name: str) -> None:
        self._connection = connection
        self._queue: Queue = get_queue(reads_queue_name(worker_name), connection)
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._serve, name=f"kandev-reads-{worker_name}", daemon=True)

    def start(self) -> ReadAnswerer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join(timeout=3)

    def _serve(self) -> None:
        while not self._stopping.is_set():
            try:
                found = Queue.dequeue_any([self._queue], timeout=1, connection=self._connection)
            except DequeueTimeout:
                continue
            except RedisError:
                log.warning("the reads queue could not be read; trying again", exc_info=True)
                time.sleep(1)
                continue
            if found is not None:
                self._answer(found[0])

    def _answer(self, job: Any) -> None:
        try:
            answer = job.perform()
        except Exception:
            log.exception("a read for another replica failed")
            answer = {"error": "the worker could not read the changes"}
        try:
            key = reply_key(job.id)
            with self._connection.pipeline() as pipe:
                pipe.rpush(key, json.dumps(answer))
                pipe.expire(key, REPLY_TTL_SECONDS)
                pipe.execute()
            job.delete()
        except RedisError:
            log.warning("the answer to a read could not be sent", exc_info=True)
