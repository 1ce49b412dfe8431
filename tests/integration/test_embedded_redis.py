"""The embedded Redis-protocol server runs RQ end to end, and workers leave no process behind when stopped."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from rq import Worker
from rq.exceptions import DuplicateJobError
from rq.job import Job, JobStatus

from kandev.jobs import worker as worker_module
from kandev.platform.embedded_redis import EmbeddedRedis, make_server, start_embedded_redis
from kandev.platform.job_queues import TURNS, enqueue, get_queue, worker_queue_name
from kandev.platform.redis_client import async_redis, sync_redis
from kandev.platform.settings import Settings
from kandev.platform.supervisor import ChildProcesses, process_alive, stop_process_group

ROOT = Path(__file__).resolve().parents[2]
THIS_MODULE = "tests.integration.test_embedded_redis"

pytestmark = pytest.mark.slow


# --- job functions (module-level, so RQ workers can import them by path) ---


def add(a: int, b: int) -> int:
    return a + b


def record_pid_and_sleep(path: str, seconds: float) -> str:
    """Write the job's process id where the test can read it, then stay busy."""
    Path(path + ".tmp").write_text(str(os.getpid()))
    os.rename(path + ".tmp", path)
    time.sleep(seconds)
    return "slept"


# --- helpers ---


def wait_until(condition: Callable[[], bool], timeout: float = 10.0, interval: float = 0.02) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(interval)
    return condition()


def read_pid(path: Path, timeout: float = 20.0) -> int:
    assert wait_until(path.exists, timeout), f"no pid in {path} after {timeout}s"
    return int(path.read_text())


def worker_argv(url: str, name: str, grace: float) -> list[str]:
    """`run_worker` in a fresh process, without start hooks (they need a database)."""
    code = f"""
        from kandev.platform.settings import Settings
        from kandev.jobs import worker
        worker.on_worker_start.clear()
        worker.run_worker(Settings(redis_url={url!r}, worker_name={name!r}), shutdown_grace_seconds={grace!r})
    """
    return [sys.executable, "-c", textwrap.dedent(code)]


def clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KANDEV_")}
    env["PYTHONPATH"] = str(ROOT)
    return env


@pytest.fixture(scope="module")
def server() -> Iterator[EmbeddedRedis]:
    embedded = start_embedded_redis()
    try:
        yield embedded
    finally:
        embedded.stop()


# --- tests ---


def test_embedded_redis_answers_ping_and_stops_leaving_no_process():
    started = time.monotonic()
    embedded = start_embedded_redis()
    assert time.monotonic() - started < 10
    assert embedded.url.startswith("redis://127.0.0.1:")
    client = sync_redis(embedded.url)
    assert client.ping() is True
    assert client.eval("return ARGV[1]", 0, "lua") == b"lua"
    client.close()

    embedded.stop()

    assert embedded.process.returncode is not None
    assert not process_alive(embedded.process.pid)


def test_embedded_redis_reports_clients_like_redis_so_rq_can_register_workers(server: EmbeddedRedis):
    client = sync_redis(server.url)
    try:
        host, _, port = client.client_info()["addr"].rpartition(":")
        assert host == "127.0.0.1" and port.isdigit()
    finally:
        client.close()


async def test_embedded_redis_delivers_pubsub_to_async_clients(server: EmbeddedRedis):
    publisher = async_redis(server.url)
    subscriber = async_redis(server.url, decode_responses=True)
    pubsub = subscriber.pubsub()
    try:
        await pubsub.subscribe("kandev-test")
        assert (await pubsub.get_message(timeout=5))["type"] == "subscribe"
        await publisher.publish("kandev-test", "hello")
        message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=5)
        assert message is not None and message["data"] == "hello"
    finally:
        await pubsub.aclose()
        await subscriber.aclose()
        await publisher.aclose()


def test_an_rq_job_runs_end_to_end_on_the_embedded_server(server: EmbeddedRedis, monkeypatch):
    connection = sync_redis(server.url)
    queued_when_hooks_ran: list[int] = []
    monkeypatch.setattr(
        worker_module,
        "on_worker_start",
        [lambda s: queued_when_hooks_ran.append(get_queue(TURNS, connection).count)],
    )
    job_id = enqueue(TURNS, f"{THIS_MODULE}.add", 2, 3, job_timeout=30, connection=connection)

    worked = worker_module.run_worker(
        Settings(redis_url=server.url, worker_name=f"burst-{uuid.uuid4().hex[:8]}"), burst=True
    )

    job = Job.fetch(job_id, connection=connection)
    assert worked is True
    assert job.get_status() == JobStatus.FINISHED
    assert job.return_value() == 5
    assert job.timeout == 30
    assert queued_when_hooks_ran == [1], "start hooks run before the worker takes jobs"
    connection.close()


def test_a_job_routed_to_a_worker_queue_is_run_by_that_worker(server: EmbeddedRedis, monkeypatch):
    connection = sync_redis(server.url)
    monkeypatch.setattr(worker_module, "on_worker_start", [])
    name = f"routed-{uuid.uuid4().hex[:8]}"
    job_id = enqueue(worker_queue_name(name), f"{THIS_MODULE}.add", 1, 1, job_timeout=30, connection=connection)

    worker_module.run_worker(Settings(redis_url=server.url, worker_name=name), burst=True)

    assert Job.fetch(job_id, connection=connection).return_value() == 2
    connection.close()


def test_a_unique_enqueue_refuses_a_job_id_that_exists(server: EmbeddedRedis):
    connection = sync_redis(server.url)
    queue = f"kandev-test-{uuid.uuid4().hex[:8]}"
    job_id = f"turn-{uuid.uuid4().hex}"
    assert (
        enqueue(
            queue,
            f"{THIS_MODULE}.add",
            1,
            2,
            job_timeout=30,
            job_id=job_id,
            unique=True,
            connection=connection,
        )
        == job_id
    )
    with pytest.raises(DuplicateJobError):
        enqueue(
            queue,
            f"{THIS_MODULE}.add",
            1,
            2,
            job_timeout=30,
            job_id=job_id,
            unique=True,
            connection=connection,
        )
    get_queue(queue, connection).empty()
    connection.close()


def test_a_job_runs_in_the_worker_process_itself(server: EmbeddedRedis, tmp_path: Path):
    connection = sync_redis(server.url)
    name = f"simple-{uuid.uuid4().hex[:8]}"
    pid_file = tmp_path / "job.pid"
    enqueue(
        worker_queue_name(name),
        f"{THIS_MODULE}.record_pid_and_sleep",
        str(pid_file),
        120,
        job_timeout=300,
        connection=connection,
    )
    worker = subprocess.Popen(
        worker_argv(server.url, name, grace=3.0), cwd=ROOT, env=clean_env(), start_new_session=True
    )
    try:
        # No work horse: what a job starts (an agent) is the worker's child and dies with the worker.
        assert read_pid(pid_file) == worker.pid
        worker.kill()
        worker.wait(timeout=10)
    finally:
        stop_process_group(worker, timeout=1)
        connection.close()


def test_stopping_a_worker_interrupts_a_long_job_after_the_grace_period_and_leaves_no_process(
    server: EmbeddedRedis, tmp_path: Path
):
    connection = sync_redis(server.url)
    name = f"stopped-{uuid.uuid4().hex[:8]}"
    pid_file = tmp_path / "job.pid"
    enqueue(
        worker_queue_name(name),
        f"{THIS_MODULE}.record_pid_and_sleep",
        str(pid_file),
        120,
        job_timeout=300,
        connection=connection,
    )
    children = ChildProcesses()
    worker = children.start("worker", worker_argv(server.url, name, grace=1.5), env=clean_env(), cwd=ROOT)
    try:
        job_process = read_pid(pid_file)

        started = time.monotonic()
        codes = children.stop_all(timeout=10)

        assert codes == {"worker": 0}, "the worker exits by itself (rq's cold shutdown), before SIGKILL"
        assert time.monotonic() - started < 8
        assert wait_until(lambda: not process_alive(job_process), 5)
        assert not process_alive(worker.pid)
        assert name not in [w.name for w in Worker.all(connection=connection)], "the worker deregistered itself"
    finally:
        children.stop_all(timeout=1)
        connection.close()


def test_stopping_a_worker_lets_a_short_job_finish_within_the_grace_period(server: EmbeddedRedis, tmp_path: Path):
    connection = sync_redis(server.url)
    name = f"graceful-{uuid.uuid4().hex[:8]}"
    pid_file = tmp_path / "job.pid"
    job_id = enqueue(
        worker_queue_name(name),
        f"{THIS_MODULE}.record_pid_and_sleep",
        str(pid_file),
        0.5,
        job_timeout=30,
        connection=connection,
    )
    worker = subprocess.Popen(
        worker_argv(server.url, name, grace=10.0), cwd=ROOT, env=clean_env(), start_new_session=True
    )
    try:
        job_process = read_pid(pid_file)
        worker.send_signal(signal.SIGTERM)

        assert worker.wait(timeout=15) == 0
        assert Job.fetch(job_id, connection=connection).get_status() == JobStatus.FINISHED
        assert not process_alive(job_process)
    finally:
        stop_process_group(worker, timeout=1)
        connection.close()


def test_the_embedded_server_sends_replies_without_waiting_for_acks():
    server = make_server("127.0.0.1", 0)
    try:
        with socket.create_connection(server.server_address[:2], timeout=5) as client:
            accepted, _ = server.get_request()
            with accepted:
                assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
                assert client.getsockname() == accepted.getpeername()
    finally:
        server.server_close()


def test_a_connection_on_a_reused_port_gets_a_client_of_its_own_and_keeps_it_after_the_old_one_ends():
    server = make_server("127.0.0.1", 0)
    handlers: list[threading.Thread] = []
    try:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        stale = object()  # what a handler still blocked on the previous connection of this port holds
        server.clients[("127.0.0.1", port)] = stale
        client = socket.socket()
        client.bind(("127.0.0.1", port))
        client.settimeout(5)
        client.connect(server.server_address[:2])
        accepted, address = server.get_request()
        handler = threading.Thread(target=server.RequestHandlerClass, args=(accepted, address, server), daemon=True)
        handlers.append(handler)
        handler.start()
        client.sendall(b"*1\r\n$4\r\nPING\r\n")
        assert client.recv(64) == b"+PONG\r\n"
        assert server.clients[address] is not stale
        client.close()
        handler.join(timeout=5)
        assert not handler.is_alive()
        assert address not in server.clients, "the ended connection leaves no client behind"
    finally:
        server.server_close()


def test_a_blocking_pop_of_a_client_that_hung_up_ends_and_takes_nothing_pushed_later():
    server = make_server("127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"redis://127.0.0.1:{server.server_address[1]}/0"
    try:
        gone = socket.create_connection(server.server_address[:2], timeout=5)
        gone.sendall(b"*3\r\n$5\r\nBLPOP\r\n$5\r\njobs!\r\n$3\r\n300\r\n")  # a worker waiting for work
        deadline = time.monotonic() + 5
        while server.blocked_clients() == 0:
            assert time.monotonic() < deadline, "the BLPOP never blocked"
            time.sleep(0.01)
        gone.close()  # the worker stopped
        while server.blocked_clients():
            assert time.monotonic() < deadline, "the hung-up client's BLPOP is still waiting"
            time.sleep(0.01)
        client = sync_redis(url)
        client.rpush("jobs!", "job-1")
        assert client.lrange("jobs!", 0, -1) == [b"job-1"], "the next job waits for a live worker"
        client.close()
    finally:
        server.shutdown()
        server.server_close()


def test_a_published_message_reaches_an_idle_subscriber_at_once_not_at_its_next_poll(monkeypatch):
    # Both idle waits (ours, and fakeredis's poll, which a plain fakeredis handler would use) are made longer
    # than the test's bound: only the wake-up on a queued reply can deliver in time.
    monkeypatch.setattr("kandev.platform.embedded_redis._IDLE_WAIT", 60.0)
    monkeypatch.setattr("fakeredis._clients._tcp_server._POLL_INTERVAL", 60.0)
    server = make_server("127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"redis://127.0.0.1:{server.server_address[1]}/0"
    try:
        subscriber = sync_redis(url).pubsub()
        subscriber.subscribe("news")
        assert subscriber.get_message(timeout=5)["type"] == "subscribe"
        time.sleep(0.2)  # let the subscriber's connection go idle in its wait
        for n in range(3):
            assert sync_redis(url).publish("news", f"item {n}") == 1
            message = subscriber.get_message(timeout=5)
            assert message is not None and message["data"] == f"item {n}".encode()
        subscriber.close()
    finally:
        server.shutdown()
        server.server_close()
