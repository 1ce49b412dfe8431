"""What /healthz reports about workers: RQ registrations with a recent heartbeat, and queue depth."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import fakeredis
from rq import Queue, Worker
from rq.utils import utcformat

from kandev.jobs.liveness import HEARTBEAT_WINDOW, worker_report
from kandev.platform.job_queues import ALL, TURNS, worker_queue_name


def registered(connection: fakeredis.FakeRedis, name: str) -> Worker:
    worker = Worker([worker_queue_name(name), *ALL], connection=connection, name=name)
    worker.register_birth()
    worker.heartbeat()
    return worker


async def test_only_registered_workers_with_a_recent_heartbeat_and_no_death_count_as_live():
    server = fakeredis.FakeServer()
    connection = fakeredis.FakeRedis(server=server)
    registered(connection, "live")
    registered(connection, "dead").register_death()
    stale = registered(connection, "stale")
    old = datetime.now(UTC) - HEARTBEAT_WINDOW - timedelta(seconds=5)
    connection.hset(stale.key, "last_heartbeat", utcformat(old))
    Queue(TURNS, connection=connection).enqueue("kandev.jobs.turns.run_turn", "s1")
    Queue(worker_queue_name("live"), connection=connection).enqueue("kandev.jobs.turns.run_turn", "s2")
    Queue(worker_queue_name("stale"), connection=connection).enqueue("kandev.jobs.turns.run_turn", "s3")

    report = await worker_report(fakeredis.FakeAsyncRedis(server=server))

    assert report == {
        "workers": 1,
        "queued": {"kandev-turns": 1, "kandev-default": 0, "kandev-automations": 0},
        # A dead worker's own queue too: work routed there waits for that worker.
        "queued_on_worker_queues": 2,
    }


async def test_no_workers_and_empty_queues_report_zeros():
    report = await worker_report(fakeredis.FakeAsyncRedis(server=fakeredis.FakeServer()))
    assert report == {"workers": 0, "queued": dict.fromkeys(ALL, 0), "queued_on_worker_queues": 0}
