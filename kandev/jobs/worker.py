"""`kandev worker`: a non-forking RQ worker; its agents are its own children and die with it."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import threading
from collections.abc import Callable, Sequence
from types import FrameType

from redis import Redis
from redis.client import Pipeline
from rq import Queue, SimpleWorker, worker_registration
from rq.job import Job
from rq.worker import WorkerStatus

from kandev.jobs.capabilities import Advertiser, worker_capabilities
from kandev.jobs.reads import ReadAnswerer
from kandev.jobs.recovery import recover_sync
from kandev.jobs.worker_loop import WorkerLoop
from kandev.platform.job_queues import ALL, TURN_JOB, capability_queues, get_queue, running_key, worker_queue_name
from kandev.platform.redis_client import sync_redis
from kandev.platform.settings import Settings

log = logging.getLogger("kandev.worker")

DEFAULT_SHUTDOWN_GRACE_SECONDS = 3.0


def _recover(settings: Settings) -> object:
    """Reap what a dead worker left, re-enqueue from the database (imported late: it pulls in the domain)."""

    return recover_sync(settings)


# Called in order before the worker takes jobs; a failing hook is logged and does not stop the worker.
on_worker_start: list[Callable[[Settings], object]] = [_recover]


class KandevWorker(SimpleWorker):
    """rq's non-forking worker: jobs run in this process, their coroutines on its one event loop (where
    its agents live), and a stop waits only briefly for a job."""

    shutdown_grace_seconds: float = DEFAULT_SHUTDOWN_GRACE_SECONDS
    _grace_timer: threading.Timer | None = None
    worker_loop: WorkerLoop | None = None

    def request_stop(self, signum: int, frame: FrameType | None) -> None:
        """Warm stop (rq): finish the current job, but escalate to rq's cold stop after the grace period.

        A turn can run for hours; rather than hold a deploy or a Ctrl-C hostage, the running turn is told
        to end (it fails, saying the worker shut down), and a job still running after the grace is
        interrupted by the cold stop (its turn is ended as stopped). Short jobs get the grace to finish.
        """
        if self.get_state() == WorkerStatus.BUSY and self._grace_timer is None:
            grace = max(self.shutdown_grace_seconds, 1.1)  # rq ignores a second signal within 1 s
            log.info("worker %s: stopping; the running job has %.1fs to finish", self.name, grace)
            self._grace_timer = threading.Timer(grace, os.kill, (os.getpid(), signal.SIGTERM))
            self._grace_timer.daemon = True
            self._grace_timer.start()
        # A running turn hears of the stop now and ends itself saying so, within the grace period.
        if self.worker_loop is not None:
            self.worker_loop.notify_stop()
        super().request_stop(signum, frame)

    def execute_job(self, job: Job, queue: Queue) -> None:
        """Run the job here; while a turn job runs (until rq shows this worker idle again), a follow-up
        prompt of its session is routed to this worker's own queue (see dispatch.warm_worker_queue)."""
        session_id = job.args[0] if job.func_name == TURN_JOB and job.args else None
        if session_id is None:
            return super().execute_job(job, queue)
        self.connection.set(running_key(self.name), session_id, ex=max(int(job.timeout or 0), 60) + 60)
        try:
            return super().execute_job(job, queue)
        finally:
            # Idle before the running mark goes, as rq would set it only at its next dequeue: in between, a
            # follow-up for this session would be routed elsewhere and launch its agent afresh.
            self.set_state(WorkerStatus.IDLE)
            self.connection.delete(running_key(self.name))

    def teardown(self) -> None:
        """Cancel a pending escalation first, so it cannot interrupt the worker's own deregistration."""
        if self._grace_timer is not None:
            self._grace_timer.cancel()
        super().teardown()

    def unsubscribe(self) -> None:
        """rq's unsubscribe with the listener stopped first, so a stop never waits a minute for it.

        rq unsubscribes and then stops redis-py's listener thread, and that stop waits for the thread with no
        bound. When the thread reads the unsubscribe reply before the stop flag is down (a busy machine), it
        goes back to a 60 s read and the worker's exit waits for it. With the flag down first, the reply ends
        the thread; a lost Redis (no reply) leaves a daemon thread that does not hold the exit.
        """
        thread = self.pubsub_thread
        if not thread:
            return
        log.info("worker %s: unsubscribing from %s", self.name, self.pubsub_channel_name)
        thread.stop(timeout=0)  # only lowers the flag
        with contextlib.suppress(Exception):
            self.pubsub.unsubscribe()
        thread.join(timeout=1)

    def register_birth(self) -> None:
        """Replace a stale registration of our name (a crashed predecessor with the same name)."""
        if self.connection.exists(self.key) and not self.connection.hexists(self.key, "death"):
            log.warning("worker %s: replacing the registration of a worker that did not stop cleanly", self.name)
            with self.connection.pipeline() as pipe:
                worker_registration.unregister(self, pipe)
                pipe.delete(self.key)
                pipe.execute()
        super().register_birth()

    def heartbeat(self, timeout: int | None = None, pipeline: Pipeline | None = None) -> None:
        """rq's heartbeat, plus: register again when Redis forgot us (an embedded Redis restarts empty)."""
        super().heartbeat(timeout, pipeline)
        if pipeline is None and not self.connection.sismember(worker_registration.REDIS_WORKER_KEYS, self.key):
            log.warning("worker %s: Redis lost this worker's registration (restarted?); registering again", self.name)
            self.connection.delete(self.key)
            SimpleWorker.register_birth(self)  # not our override: the stale check would refuse

    def _set_ip_address(self, connection: Redis) -> None:
        # Cosmetic (shown by `rq info`); an unparsable CLIENT INFO from a Redis-like server must not stop us.
        try:
            super()._set_ip_address(connection)
        except ValueError:
            self.ip_address = "unknown"


def worker_name(settings: Settings) -> str:
    """The configured KANDEV_WORKER_NAME, or hostname-pid: unique among live workers."""
    return settings.worker_name or f"{socket.gethostname()}-{os.getpid()}"


def worker_queues(name: str, extra_queues: Sequence[str] = (), capabilities: frozenset[str] = frozenset()) -> list[str]:
    """The queues a worker named `name` offering `capabilities` listens on, highest priority first."""
    # Its own queue first: only this worker can run what was routed there; then turns only workers like it can run.
    return [worker_queue_name(name), *capability_queues(capabilities), *ALL, *extra_queues]


def preload_job_modules() -> None:
    """Import what turn jobs need once, before the first job: ~0.7 s of ACP and job imports."""
    import kandev.jobs.turns  # noqa: F401  # lazy: start-up: loaded once the worker has registered
    import kandev.runtime.acp_adapter  # noqa: F401  # lazy: start-up: ACP's 0.7 s, after registering


def run_worker(
    settings: Settings,
    *,
    burst: bool = False,
    extra_queues: Sequence[str] = (),
    shutdown_grace_seconds: float = DEFAULT_SHUTDOWN_GRACE_SECONDS,
) -> bool:
    """Run hooks, then work the kandev queues until SIGTERM/SIGINT (or until empty with `burst`).

    Returns whether any job ran. Must run in the main thread (rq installs signal handlers).
    """
    if not settings.redis_url:
        raise ValueError("a worker needs KANDEV_REDIS_URL (kandev serve passes its embedded server's URL)")
    connection = sync_redis(settings.redis_url)
    name = worker_name(settings)
    for hook in on_worker_start:
        try:
            hook(settings)
        except Exception:
            log.exception("worker start hook %s failed", getattr(hook, "__name__", hook))
    preload_job_modules()
    capabilities = worker_capabilities(settings)
    names = worker_queues(name, extra_queues, capabilities)
    worker = KandevWorker([get_queue(n, connection) for n in names], connection=connection, name=name)
    worker.shutdown_grace_seconds = shutdown_grace_seconds
    advertiser = Advertiser(connection, name, capabilities)
    advertiser.start()  # before the loop starts: its first box sweep must not see this worker as dead
    worker.worker_loop = WorkerLoop(settings, name, capabilities).start()
    # Replicas' reads of this worker's worktrees, answered while a turn runs.
    reads = ReadAnswerer(sync_redis(settings.redis_url), name).start()
    log.info("worker %s offers [%s], listening on %s", name, ",".join(sorted(capabilities)), ", ".join(names))
    # rq replaces these for good; put them back so an embedding process (a test, a burst run) is unchanged.
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        return worker.work(burst=burst, logging_level="INFO")
    finally:
        reads.stop()
        # Its agents die here, before the worker's process ends.
        worker.worker_loop.stop()
        advertiser.stop()
        connection.close()
        if threading.current_thread() is threading.main_thread():
            for sig, handler in previous.items():
                if handler is not None:
                    signal.signal(sig, handler)
