"""What the dispatcher and the workers agree on: queue names, job paths, the Redis keys that route a session to
the worker holding its agent, and the one enqueue helper, so every job gets an explicit timeout."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from redis import Redis
from rq import Queue, Worker
from rq.job import Job, JobStatus

DEFAULT = "kandev-default"
TURNS = "kandev-turns"
AUTOMATIONS = "kandev-automations"
# The shared queues every worker listens on, in the order it takes work from them.
ALL = (TURNS, DEFAULT, AUTOMATIONS)

TURN_JOB = "kandev.jobs.turns.run_turn"
DELIVER_JOB = "kandev.jobs.turns.deliver_answer"
LAUNCH_RUN_JOB = "kandev.jobs.automations.launch_automation_run"
DELIVER_WEBHOOKS_JOB = "kandev.jobs.automations.deliver_webhooks"
CLEAN_UP_TASK_JOB = "kandev.jobs.automations.clean_up_task"
RETAIN_WORKTREES_JOB = "kandev.jobs.automations.retain_worktrees"
PREFLIGHT_JOB = "kandev.jobs.automations.preflight_automation"
TEST_EXECUTOR_JOB = "kandev.jobs.executors.test_executor_profile"
AGENT_INSTALL_JOB = "kandev.jobs.agent_installs.install_agent"
READ_JOB = "kandev.jobs.reads.answer_read"
FIX_ROUND_JOB = "kandev.jobs.shipping.run_fix_round"
AUTO_MERGE_JOB = "kandev.jobs.shipping.auto_merge"
REFRESH_REQUESTS_JOB = "kandev.jobs.shipping.refresh_requests"
NOTIFY_JOB = "kandev.jobs.notifications.deliver_notification"

# Results are only read shortly after a job ends (tests, debugging); failures stay longer for inspection.
RESULT_TTL_SECONDS = 3600
FAILURE_TTL_SECONDS = 7 * 24 * 3600


def worker_queue_name(worker_name: str) -> str:
    """A worker's own queue: sessions whose working tree lives on that worker are routed here."""
    return f"kandev-worker-{worker_name}"


def reads_queue_name(worker_name: str) -> str:
    """A worker's queue of reads a replica waits on (a task's changes from the worktree it holds): served beside
    its turns, never behind them."""
    return f"kandev-reads-{worker_name}"


def reply_key(job_id: str) -> str:
    """The Redis list a read's answer is pushed to, for the replica waiting on it."""
    return f"kandev-reply:{job_id}"


def agent_key(session_id: str) -> str:
    """The Redis key naming the worker where the session's agent is warm (expires unless that worker renews it)."""
    return f"kandev-agent:{session_id}"


def running_key(worker_name: str) -> str:
    """The Redis key naming the session whose turn job the worker is running now."""
    return f"kandev-running:{worker_name}"


def get_queue(name: str, connection: Redis) -> Queue:
    """The RQ queue `name` on `connection` (a sync client without decode_responses, see redis_conn)."""
    return Queue(name, connection=connection)


def enqueue(
    queue_name: str,
    func_path: str,
    *args: Any,
    job_timeout: int,
    connection: Redis,
    job_id: str | None = None,
    unique: bool = False,
    description: str | None = None,
) -> str:
    """Enqueue `func_path(*args)` (a dotted path to a module-level function); returns the job id.

    `job_timeout` is required: RQ's default (180 s) would kill a long agent turn. With `unique` (needs
    `job_id`), a job id that still exists in Redis raises rq.exceptions.DuplicateJobError instead of
    replacing that job; note finished jobs keep their id for RESULT_TTL_SECONDS. `description` is what
    the RQ dashboard lists (default: the call, arguments included).
    """
    job = get_queue(queue_name, connection).enqueue_call(
        func=func_path,
        args=args,
        timeout=job_timeout,
        job_id=job_id,
        unique=unique,
        result_ttl=RESULT_TTL_SECONDS,
        failure_ttl=FAILURE_TTL_SECONDS,
        description=description,
    )
    return job.id


def enqueue_read(worker_name: str, request: dict[str, Any], *, wait_seconds: int, connection: Redis) -> str:
    """A read for the named worker; it expires unread once the asker stopped waiting (`wait_seconds`)."""
    job = get_queue(reads_queue_name(worker_name), connection).enqueue_call(
        func=READ_JOB,
        args=(request,),
        timeout=60,
        ttl=wait_seconds,
        result_ttl=0,
        failure_ttl=FAILURE_TTL_SECONDS,
        description=f"read {request.get('op')} task={request.get('task_id')}",
    )
    return job.id


def enqueue_many(
    queue_name: str, calls: list[tuple[str, tuple[Any, ...], str]], *, job_timeout: int, connection: Redis
) -> list[str]:
    """Enqueue each `(func_path, args, description)` in one Redis round trip (a pipeline); returns the job ids."""
    queue = get_queue(queue_name, connection)
    datas = [
        Queue.prepare_data(
            func_path,
            args=args,
            timeout=job_timeout,
            result_ttl=RESULT_TTL_SECONDS,
            failure_ttl=FAILURE_TTL_SECONDS,
            description=description,
        )
        for func_path, args, description in calls
    ]
    return [job.id for job in queue.enqueue_many(datas)]


def warm_worker_queue(redis: Redis, session_id: str, expected: str | None = None) -> str | None:
    """The own queue of the worker holding the session's agent (`expected`, when given), when that worker is
    alive (it renews the agent's advertisement) and idle, or busy with this very session."""
    owner = redis.get(agent_key(session_id))
    if owner is None:
        return None
    name = owner.decode() if isinstance(owner, bytes) else str(owner)
    if expected is not None and name != expected:
        return None
    with redis.pipeline(transaction=False) as pipe:  # one round trip for both
        pipe.hget(Worker.redis_worker_namespace_prefix + name, "state")
        pipe.get(running_key(name))
        state, running = pipe.execute()
    if state in (b"idle", "idle") or running in (session_id.encode(), session_id):
        return worker_queue_name(name)
    return None


# --- placement by capability -------------------------------------------------------------------------------
# A turn whose executor needs worker capabilities (docker, sandbox, gpu, ...) waits in the queue named by exactly
# that set; a worker listens on the queue of every non-empty subset of what it offers, so a turn only ever reaches
# a worker that has all it needs, and waits in Redis (not in a worker) until one is there.
CAPABILITY_QUEUE_PREFIX = f"{TURNS}@"
MAX_CAPABILITIES = 6  # 63 queues for a worker offering all of them
CAPABILITIES_TTL_SECONDS = 10


def capability_queue(capabilities: frozenset[str] | set[str] | tuple[str, ...]) -> str:
    """The queue of turns that need exactly `capabilities` (the shared turn queue when none)."""
    return CAPABILITY_QUEUE_PREFIX + "+".join(sorted(capabilities)) if capabilities else TURNS


def capability_queues(capabilities: frozenset[str]) -> list[str]:
    """The queues a worker offering `capabilities` listens on besides the shared ones, most demanding first."""
    names = sorted(capabilities)
    subsets = [
        frozenset(name for bit, name in enumerate(names) if mask >> bit & 1) for mask in range(1, 1 << len(names))
    ]
    return [capability_queue(s) for s in sorted(subsets, key=lambda s: (-len(s), sorted(s)))]


def capabilities_key(worker_name: str) -> str:
    """The Redis key naming what a live worker offers (it renews it; it expires when the worker dies)."""
    return f"kandev-capabilities:{worker_name}"


def live_capabilities(redis: Redis) -> dict[str, frozenset[str]]:
    """What each live worker offers, by worker name."""
    keys = list(redis.scan_iter(match=capabilities_key("*"), count=500))
    return _offers(keys, redis.mget(keys) if keys else [])


async def live_capabilities_of(redis: Any) -> dict[str, frozenset[str]]:
    """live_capabilities over an asyncio Redis client."""
    keys = [key async for key in redis.scan_iter(match=capabilities_key("*"), count=500)]
    return _offers(keys, await redis.mget(keys) if keys else [])


def _offers(keys: list[Any], values: list[Any]) -> dict[str, frozenset[str]]:
    found = {}
    for key, value in zip(keys, values, strict=True):
        if value is None:
            continue
        name = (key.decode() if isinstance(key, bytes) else key).removeprefix(capabilities_key(""))
        text = value.decode() if isinstance(value, bytes) else value
        found[name] = frozenset(c for c in text.split(",") if c)
    return found


def missing_capabilities(needed: frozenset[str], live: dict[str, frozenset[str]]) -> list[str]:
    """What no live worker offers together with the rest of `needed` ([] when one worker has it all)."""
    if not needed:
        return []
    best = max(live.values(), key=lambda offered: len(needed & offered), default=frozenset())
    return sorted(needed - best)


def agent_install_job_id(agent_id: str) -> str:
    """One install job per catalogue agent at a time: its id names the agent."""
    return f"kandev-agent-install-{agent_id}"


_WAITING = (JobStatus.QUEUED, JobStatus.DEFERRED, JobStatus.SCHEDULED, JobStatus.CREATED)


@dataclass(frozen=True)
class InstallProgress:
    """Where a catalogue agent's install job is: QUEUED, RESOLVING (an update asks the registry for the current
    version), INSTALLING, then DONE or FAILED with a message safe to show. Kept for an hour after it ends."""

    state: str
    update: bool
    error: str | None
    enqueued_at: datetime | None
    started_at: datetime | None
    ended_at: datetime | None

    @property
    def active(self) -> bool:
        return self.state not in ("DONE", "FAILED")


def _utc(moment: datetime | None) -> datetime | None:
    return moment.replace(tzinfo=UTC) if moment is not None and moment.tzinfo is None else moment


def install_progress(job: Job) -> InstallProgress:
    """The progress an install job's status and meta (written by kandev.jobs.agent_installs) tell."""
    status = job.get_status(refresh=False)
    phase, error = job.meta.get("phase"), job.meta.get("error")
    if status in _WAITING:
        state = "QUEUED"
    elif status == JobStatus.STARTED:
        state = phase if phase in ("RESOLVING", "INSTALLING") else "INSTALLING"
    elif status == JobStatus.FINISHED and phase in ("DONE", "FAILED"):
        state = phase
    else:  # failed, stopped or lost without a word: a bug or a dead worker, never npm's own failure
        state, error = "FAILED", error or "the install stopped before it finished; the worker's log says why"
    return InstallProgress(
        state=state,
        update=bool(job.args[1]) if len(job.args) > 1 else False,
        error=error if state == "FAILED" else None,
        enqueued_at=_utc(job.enqueued_at),
        started_at=_utc(job.started_at),
        ended_at=_utc(job.ended_at) if state in ("DONE", "FAILED") else None,
    )
