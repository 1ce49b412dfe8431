"""The kandev worker's own parts of rq's worker lifecycle."""

from __future__ import annotations

import threading
import time
import uuid

from kandev.jobs.worker import KandevWorker
from kandev.platform.job_queues import get_queue
from kandev.platform.redis_client import sync_redis


def test_a_stopping_worker_does_not_wait_for_a_listener_that_already_read_its_unsubscribe_reply(redis_url):
    connection = sync_redis(redis_url)
    worker = KandevWorker(
        [get_queue(f"q-{uuid.uuid4().hex}", connection)], connection=connection, name=uuid.uuid4().hex
    )
    worker.subscribe()
    listener = worker.pubsub_thread
    unsubscribe = worker.pubsub.unsubscribe

    def unsubscribe_then_let_the_listener_read_the_reply(*args, **kwargs):
        result = unsubscribe(*args, **kwargs)
        time.sleep(0.5)  # a busy machine: the listener runs before the stopping thread does
        return result

    worker.pubsub.unsubscribe = unsubscribe_then_let_the_listener_read_the_reply
    stopping = threading.Thread(target=worker.unsubscribe, daemon=True)
    stopping.start()
    stopping.join(timeout=10)  # rq's own order waits out the listener's 60 s read here
    assert not stopping.is_alive(), "unsubscribe waited for the listener's read"
    listener.join(timeout=5)
    assert not listener.is_alive()
    connection.close()
