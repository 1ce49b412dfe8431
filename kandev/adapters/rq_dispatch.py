"""How services hand work to workers: enqueue turn jobs on RQ and nudge running jobs over Redis.

A session whose agent is warm on an idle worker gets its turn on that worker's own queue; otherwise the
shared queue, and whichever worker takes it launches the agent fresh and resumes the session.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from redis import Redis
from rq.exceptions import DuplicateJobError
from rq.job import Job, JobStatus

from kandev.domain.sessions.placement import TurnRoute, turn_route
from kandev.platform.event_bus import ControlMessage, EventBus, control_channel
from kandev.platform.job_queues import (
    AGENT_INSTALL_JOB,
    AUTO_MERGE_JOB,
    AUTOMATIONS,
    CLEAN_UP_TASK_JOB,
    DEFAULT,
    DELIVER_JOB,
    DELIVER_WEBHOOKS_JOB,
    FIX_ROUND_JOB,
    LAUNCH_RUN_JOB,
    NOTIFY_JOB,
    PREFLIGHT_JOB,
    REFRESH_REQUESTS_JOB,
    RETAIN_WORKTREES_JOB,
    TEST_EXECUTOR_JOB,
    TURN_JOB,
    InstallProgress,
    agent_install_job_id,
    capability_queue,
    enqueue,
    enqueue_many,
    enqueue_read,
    install_progress,
    live_capabilities,
    missing_capabilities,
    reply_key,
    warm_worker_queue,
    worker_queue_name,
)

if TYPE_CHECKING:
    from kandev.platform.database import Database

# Stopping a task and removing its directories (git and the filesystem, no agent).
CLEANUP_TIMEOUT_SECONDS = 300
# Creating a task and queueing its first prompt: database work only, the turn itself is its own job.
LAUNCH_RUN_TIMEOUT_SECONDS = 300
# One notification attempt: bounded by the notifier's own timeouts (KANDEV_NOTIFICATION_TIMEOUT_SECONDS).
NOTIFY_TIMEOUT_SECONDS = 300
# Webhook deliveries fired by one job; each firing is a short admission transaction and an enqueue.
DELIVERIES_PER_JOB = 200
DELIVER_WEBHOOKS_TIMEOUT_SECONDS = 600
# Making a test box may build an image or run a prepare script: the caller waits this long at most.
TEST_EXECUTOR_WAIT_SECONDS = 180
# Asking the registry for a version (60 s) and npm's install (300 s, kandev.runtime.mcp_delivery), with room.
AGENT_INSTALL_TIMEOUT_SECONDS = 600
# A fix round (reading check logs), a refresh or an auto-merge: code-host calls bounded well below it.
SHIP_JOB_TIMEOUT_SECONDS = 300
log = logging.getLogger("kandev.jobs")
_REPLY_SLICE_SECONDS = 2.0


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

    async def enqueue_fix_round(self, round_id: str) -> None:
        await self._enqueue_default(FIX_ROUND_JOB, (round_id,), f"fix round={round_id}")

    async def enqueue_auto_merge(self, task_id: str, repository_id: str) -> None:
        await self._enqueue_default(AUTO_MERGE_JOB, (task_id, repository_id), f"auto-merge task={task_id}")

    async def enqueue_request_refresh(self, task_id: str, repository_id: str) -> None:
        await self._enqueue_default(
            REFRESH_REQUESTS_JOB, ([[task_id, repository_id]],), f"refresh request task={task_id}"
        )

    async def _enqueue_default(self, func_path: str, args: tuple[Any, ...], description: str) -> None:
        """A shipping job on the default queue (git and code-host calls, no agent)."""
        await asyncio.to_thread(
            enqueue,
            DEFAULT,
            func_path,
            *args,
            job_timeout=SHIP_JOB_TIMEOUT_SECONDS,
            connection=self._redis,
            description=description,
        )

    async def ask_worker(self, worker_name: str, request: dict[str, Any], timeout: float) -> dict[str, Any] | None:
        """A read job on the worker's reads queue, and its answer awaited on its reply list (bounded)."""
        deadline = time.monotonic() + timeout
        job_id = await asyncio.to_thread(
            enqueue_read, worker_name, request, wait_seconds=max(1, math.ceil(timeout)), connection=self._redis
        )
        # In slices: a client's socket timeout (redis-py's default is 5 s) must outlast each blocking read.
        while (left := deadline - time.monotonic()) > 0:
            popped = await self._bus.redis.blpop([reply_key(job_id)], timeout=min(_REPLY_SLICE_SECONDS, left))
            if popped is not None:
                answer: dict[str, Any] = json.loads(popped[1])
                return answer
        return None

    async def enqueue_notification(self, delivery_id: str) -> None:
        """The job that attempts one notification delivery (kandev.domain.notifications.deliveries), on the
        default queue: never a turn's."""
        await asyncio.to_thread(
            enqueue,
            DEFAULT,
            NOTIFY_JOB,
            delivery_id,
            job_timeout=NOTIFY_TIMEOUT_SECONDS,
            connection=self._redis,
            description=f"notification delivery={delivery_id}",
        )

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

    async def enqueue_agent_install(self, agent_id: str, update: bool) -> None:
        """The job that installs (or updates) a catalogue agent, unless one for that agent waits or runs already."""
        await asyncio.to_thread(self._enqueue_agent_install, agent_id, update)

    def _enqueue_agent_install(self, agent_id: str, update: bool) -> None:

        job_id = agent_install_job_id(agent_id)
        [current] = Job.fetch_many([job_id], connection=self._redis)
        if current is not None and install_progress(current).active:
            return
        if current is not None:
            current.delete()  # the ended one: its outcome makes way for this attempt's
        with contextlib.suppress(DuplicateJobError):  # another request enqueued it a moment ago: that one runs
            enqueue(
                DEFAULT,
                AGENT_INSTALL_JOB,
                agent_id,
                update,
                job_timeout=AGENT_INSTALL_TIMEOUT_SECONDS,
                connection=self._redis,
                job_id=job_id,
                unique=True,
                description=f"agent {'update' if update else 'install'} agent={agent_id}",
            )

    async def agent_installs(self, agent_ids: Sequence[str]) -> dict[str, InstallProgress]:
        """The latest install job of each agent that had one in the last hour, by agent id."""
        ids = list(agent_ids)
        jobs = await asyncio.to_thread(Job.fetch_many, [agent_install_job_id(i) for i in ids], self._redis)
        return {agent_id: install_progress(job) for agent_id, job in zip(ids, jobs, strict=True) if job is not None}

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
