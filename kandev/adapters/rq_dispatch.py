"""How services hand work to workers: enqueue turn jobs on RQ and nudge running jobs over Redis.

A session whose agent is warm on an idle worker gets its turn on that worker's own queue; otherwise the
shared queue, and whichever worker takes it launches the agent fresh and resumes the session.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from redis import Redis
from rq.job import Job, JobStatus

from kandev.domain.sessions.placement import TurnRoute, turn_route
from kandev.platform.event_bus import ControlMessage, EventBus, control_channel
from kandev.platform.job_queues import (
    AUTOMATIONS,
    CLEAN_UP_TASK_JOB,
    DELIVER_JOB,
    DELIVER_WEBHOOKS_JOB,
    LAUNCH_RUN_JOB,
    PREFLIGHT_JOB,
    RETAIN_WORKTREES_JOB,
    TEST_EXECUTOR_JOB,
    TURN_JOB,
    capability_queue,
    enqueue,
    enqueue_many,
    live_capabilities,
    missing_capabilities,
    warm_worker_queue,
    worker_queue_name,
)

if TYPE_CHECKING:
    from kandev.platform.database import Database

# Stopping a task and removing its directories (git and the filesystem, no agent).
CLEANUP_TIMEOUT_SECONDS = 300
# Creating a task and queueing its first prompt: database work only, the turn itself is its own job.
LAUNCH_RUN_TIMEOUT_SECONDS = 300
# Webhook deliveries fired by one job; each firing is a short admission transaction and an enqueue.
DELIVERIES_PER_JOB = 200
DELIVER_WEBHOOKS_TIMEOUT_SECONDS = 600
# Making a test box may build an image or run a prepare script: the caller waits this long at most.
TEST_EXECUTOR_WAIT_SECONDS = 180
log = logging.getLogger("kandev.jobs")


class RqDispatcher:
    """Enqueues on RQ (a blocking client, so off the event loop) and publishes control nudges."""

    def __init__(self, redis_url: str, bus: EventBus, *, turn_timeout: int, db: Database | None = None) -> None:
        self._redis = Redis.from_url(redis_url, socket_connect_timeout=5)
        self._bus = bus
        self._turn_timeout = turn_timeout
        # With it, turn jobs carry their task's id and title (for the RQ dashboard) and go to a worker that has the
        # capabilities their executor needs.
        self._db = db
        # Told what a session's turn waits for whenever it is enqueued ([]: nothing), set at composition
        # (kandev.wiring): the task's pendingAction WAITING_FOR_WORKER.
        self.on_waiting: Callable[[str, list[str]], Awaitable[None]] | None = None

    async def enqueue_turn(self, session_id: str, queue: str | None = None, *, description: str | None = None) -> None:
        """On the given queue, the worker's holding the session's agent warm, or the queue of the capabilities its
        executor needs (where it waits until a worker offering them all takes it)."""
        route = await self._route(session_id)
        if description is None and route is not None:
            description = route.description
        needed = route.capabilities if route is not None else frozenset()
        missing = await asyncio.to_thread(self._enqueue_turn, session_id, queue, description, needed)
        if route is not None and self.on_waiting is not None and (missing or route.waiting_for):
            await self.on_waiting(session_id, missing)

    def _enqueue_turn(
        self, session_id: str, queue: str | None, description: str | None, needed: frozenset[str]
    ) -> list[str]:
        """Enqueue; returns the capabilities no live worker offers ([] when one can run the turn)."""
        target = queue or warm_worker_queue(self._redis, session_id) or capability_queue(needed)
        enqueue(
            target,
            TURN_JOB,
            session_id,
            job_timeout=self._turn_timeout,
            connection=self._redis,
            description=description,
        )
        return missing_capabilities(needed, live_capabilities(self._redis)) if needed else []

    async def nudge_cancel(self, session_id: str) -> None:
        await self._bus.publish(control_channel(session_id), ControlMessage(action="cancel"))

    async def can_deliver(self, worker_name: str, session_id: str) -> bool:
        """Whether the worker holding the session's waiting turn can take the answer now."""
        return await asyncio.to_thread(warm_worker_queue, self._redis, session_id, worker_name) is not None

    async def deliver_answer(self, session_id: str, worker_name: str) -> None:

        description = await self._describe(session_id)
        await asyncio.to_thread(
            enqueue,
            worker_queue_name(worker_name),
            DELIVER_JOB,
            session_id,
            job_timeout=self._turn_timeout,
            connection=self._redis,
            description=description,
        )

    async def enqueue_automation_run(self, run_id: str) -> None:
        """The job that creates an admitted run's task and starts its agent, on the automations queue."""

        await asyncio.to_thread(
            enqueue,
            AUTOMATIONS,
            LAUNCH_RUN_JOB,
            run_id,
            job_timeout=LAUNCH_RUN_TIMEOUT_SECONDS,
            connection=self._redis,
            description=f"automation run={run_id}",
        )

    async def enqueue_webhook_deliveries(self, delivery_ids: Sequence[str]) -> None:
        """The jobs that fire accepted webhook deliveries, on the automations queue: one job per chunk of
        deliveries recorded together (a job's fixed cost, in Redis and on the worker, is then shared),
        all in one round trip."""
        await asyncio.to_thread(self._enqueue_deliveries, list(delivery_ids))

    def _enqueue_deliveries(self, delivery_ids: list[str]) -> None:

        chunks = [delivery_ids[i : i + DELIVERIES_PER_JOB] for i in range(0, len(delivery_ids), DELIVERIES_PER_JOB)]
        calls = [(DELIVER_WEBHOOKS_JOB, (c,), f"webhook deliveries={len(c)} first={c[0]}") for c in chunks]
        enqueue_many(AUTOMATIONS, calls, job_timeout=DELIVER_WEBHOOKS_TIMEOUT_SECONDS, connection=self._redis)

    async def enqueue_task_cleanup(self, task_id: str) -> None:
        """The job that performs a recorded task cleanup (kandev.domain.automations.cleanup)."""
        await self._enqueue_automation_job(CLEAN_UP_TASK_JOB, task_id, f"task cleanup task={task_id}")

    async def enqueue_worktree_retention(self, automation_id: str) -> None:
        """The job that reclaims an automation's older run worktrees (kandev.domain.automations.retention)."""
        await self._enqueue_automation_job(
            RETAIN_WORKTREES_JOB, automation_id, f"worktree retention automation={automation_id}"
        )

    async def enqueue_preflight(self, automation_id: str) -> None:
        """The job that checks an automation's pre-flight and stores its ack (kandev.domain.automations.preflight)."""
        await self._enqueue_automation_job(PREFLIGHT_JOB, automation_id, f"pre-flight automation={automation_id}")

    async def test_executor(self, profile_id: str, capabilities: frozenset[str]) -> dict[str, Any]:
        """The profile's test job on a worker offering `capabilities` (none live: said at once), awaited up to
        TEST_EXECUTOR_WAIT_SECONDS."""
        return await asyncio.to_thread(self._test_executor, profile_id, capabilities)

    def _test_executor(self, profile_id: str, capabilities: frozenset[str]) -> dict[str, Any]:
        missing = missing_capabilities(capabilities, live_capabilities(self._redis))
        report: dict[str, Any] = {"ok": False, "worker": None, "findings": [], "error": None}
        if missing:
            report["error"] = f"no live worker offers {', '.join(missing)}"
            return report
        job_id = enqueue(
            capability_queue(capabilities),
            TEST_EXECUTOR_JOB,
            profile_id,
            job_timeout=TEST_EXECUTOR_WAIT_SECONDS,
            connection=self._redis,
            description=f"test executor profile={profile_id}",
        )
        deadline = time.monotonic() + TEST_EXECUTOR_WAIT_SECONDS
        while time.monotonic() < deadline:
            job = Job.fetch(job_id, connection=self._redis)
            status = job.get_status()
            if status == JobStatus.FINISHED:
                return dict(job.return_value() or report)
            if status in (JobStatus.FAILED, JobStatus.STOPPED, JobStatus.CANCELED):
                report["error"] = "the test job failed on its worker"
                return report
            time.sleep(0.1)
        Job.fetch(job_id, connection=self._redis).cancel()
        report["error"] = f"no worker finished the test within {TEST_EXECUTOR_WAIT_SECONDS}s"
        return report

    async def _enqueue_automation_job(self, func_path: str, argument: str, description: str) -> None:

        await asyncio.to_thread(
            enqueue,
            AUTOMATIONS,
            func_path,
            argument,
            job_timeout=CLEANUP_TIMEOUT_SECONDS,
            connection=self._redis,
            description=description,
        )

    async def _describe(self, session_id: str) -> str | None:
        route = await self._route(session_id)
        return route.description if route is not None else None

    async def _route(self, session_id: str) -> TurnRoute | None:
        if self._db is None:
            return None
        try:
            async with self._db.read() as db:
                return await turn_route(db, session_id)
        except Exception:  # a label must never keep a turn from being enqueued
            log.warning("could not read where the turn of session %s goes", session_id, exc_info=True)
            return None

    def close(self) -> None:
        self._redis.close()
