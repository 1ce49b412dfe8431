"""The turn job: claim the session's next prompt, run it on the session's agent (warm on this worker, or
launched), stream the transcript, and keep draining the queue while prompts are waiting. In a worker the
job runs on the worker's one event loop, and the agent stays warm in the worker's pool after the job."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
from collections.abc import Callable
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from rq import get_current_job

from kandev.domain.access.session_tokens import token_is_live
from kandev.domain.attachments.handover import hand_over
from kandev.domain.attachments.service import attachment_files
from kandev.domain.automations.settle import fail_run_on_permission
from kandev.domain.context import ServiceContext
from kandev.domain.errors import DomainError
from kandev.domain.mcp.outbound import outward_entries, refusal_note
from kandev.domain.outbound import outbound_policy
from kandev.domain.sessions.permissions import chosen_option, record_request, wait_for_answer
from kandev.domain.sessions.placement import record_placement
from kandev.domain.sessions.transcript_stream import TranscriptStream
from kandev.domain.sessions.turn_setup import TurnSetup, mark_mcp_applied, prepare_turn, remember_acp_session
from kandev.domain.sessions.turns import ClaimedTurn, claim_turn, fail_session_launch, finish_turn, renew_lease
from kandev.domain.usage.recording import record_usage
from kandev.domain.workspace.contributions import write_preflight
from kandev.jobs.agents import AgentBinding, AgentPool, WarmAgent
from kandev.jobs.boxes import box_launch
from kandev.jobs.change_watch import ChangeWatch, ends_a_tool_call
from kandev.jobs.worker_loop import WorkerLoop, current_loop
from kandev.models.enums import MessageKind, TaskOrigin
from kandev.platform.event_bus import WAITING, control_channel
from kandev.platform.handover import Owner
from kandev.platform.job_queues import warm_worker_queue, worker_queue_name
from kandev.platform.settings import Settings
from kandev.runtime.base import (
    CANCELLED,
    FAILED,
    AgentLaunchError,
    AgentUpdate,
    LaunchSpec,
    McpServerEntry,
    PermissionRequest,
    PromptFile,
    PromptResult,
)
from kandev.runtime.mcp_delivery import McpApplyError, deliverable
from kandev.wiring import SYSTEM, provide_services

if TYPE_CHECKING:
    from kandev.runtime.acp_adapter import AcpRuntime

log = logging.getLogger("kandev.jobs.turns")

WORKER_SHUT_DOWN = (
    "The worker running this turn was shut down (a server or worker stop), so the turn was ended. "
    "Its prompt is not sent again: send a new message to continue."
)
BUDGET_SPENT = (
    "This task's budget is spent, so its turn was ended. Nothing more is sent to its agent until a person "
    "raises the budget."
)
JOB_STOPPED = (
    "The turn's job was stopped (it ran past its timeout, or its worker stopped at once), so the turn was "
    "ended. Its prompt is not sent again: send a new message to continue."
)
# TurnRunner.run's launch step: the agent could not be started.
_LAUNCH_FAILED = object()


class TurnFailed(Exception):
    """Raised at the end of a turn job that ran a FAILED turn, once every state change is committed, so RQ
    records the job as failed (rq-dashboard's Failed registry) with the reason. Turn jobs have no retry."""

    def __init__(self, session_id: str, errors: list[str]) -> None:
        self.session_id = session_id
        self.errors = errors
        super().__init__(f"session {session_id}: " + "; ".join(errors))


def run_turn(session_id: str) -> str:
    """RQ entry point (sync): on the worker's event loop, or (outside a worker) on a fresh one."""
    worker = current_loop()
    if worker is None:
        return asyncio.run(run_turns(Settings(), session_id))
    handed = _hand_to_warm_owner(worker, session_id)
    if handed is not None:
        return f"handed to {handed}, which holds the session's agent"
    return worker.call(run_turns_on(worker, session_id))


def _hand_to_warm_owner(worker: WorkerLoop, session_id: str) -> str | None:
    """Another worker holds the session's agent warm and can take the turn now: the job goes to its own queue
    (the queue it returns) instead of claiming here and launching the agent afresh. Dispatch routes follow-ups
    so already; this catches the jobs it could not route, such as the duplicates a starting worker's recovery
    enqueues for every session with queued prompts."""
    job = get_current_job()
    if job is None:
        return None
    target = warm_worker_queue(job.connection, session_id)
    if target is None or target == worker_queue_name(worker.name):
        return None
    worker.call(worker.ctx.jobs.enqueue_turn(session_id, target, description=job.description))
    return target


def worker_identity() -> str:
    return f"{socket.gethostname()}-{os.getpid()}"


def current_job_id() -> str | None:
    try:
        from rq import get_current_job
    except ImportError:  # pragma: no cover
        return None
    job = get_current_job()
    return job.id if job else None


async def run_turns(settings: Settings, session_id: str) -> str:
    """Outside a worker: services and agent for this job only."""
    async with provide_services(settings, SYSTEM) as services:
        ctx = services.ctx
        claimed = await _claim(ctx, session_id)
        if claimed is None:
            return "idle"
        runner = TurnRunner(ctx, claimed)
        outcome = await runner.run()
    # Outside the context: the database and the bus are done with, nothing is left to roll back.
    if runner.failures:
        raise TurnFailed(session_id, runner.failures)
    return outcome


async def run_turns_on(worker: WorkerLoop, session_id: str) -> str:
    """In a worker: its services, its warm agents, its stop notice."""
    claimed = await _claim(worker.ctx, session_id)
    if claimed is None:
        return "idle"
    runner = TurnRunner(worker.ctx, claimed, pool=worker.pool, stopping=worker.stopping)
    return await _follow(worker, runner, asyncio.create_task(runner.run(), name=f"turns-{session_id}"))


def deliver_answer(session_id: str) -> str:
    """RQ entry point, on the own queue of the worker whose turn waits on a person: hand the turn the
    answer and stream the rest of it to its end (then drain the queue, as a turn job does)."""
    worker = current_loop()
    if worker is None:
        return "no worker loop: nothing waits here"
    return worker.call(deliver_on(worker, session_id))


async def deliver_on(worker: WorkerLoop, session_id: str) -> str:
    parked = worker.parked.pop(session_id, None)
    if parked is None:  # this worker restarted since: the reaper ends that turn; run what is queued
        return await run_turns_on(worker, session_id)
    runner, task = parked
    runner.attended = True
    runner.parked.clear()
    runner.answered.set()
    return await _follow(worker, runner, task)


async def _follow(worker: WorkerLoop, runner: TurnRunner, task: asyncio.Task[str]) -> str:
    """The job's part: await the runner until it ends, or until its turn waits on a person; then the job
    ends and the turn stays parked on the loop, its agent alive with its request open."""
    session_id = runner.claimed.session_id
    waiting = asyncio.create_task(runner.parked.wait())
    try:
        await asyncio.wait({task, waiting}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:  # the job was stopped (timeout, cold stop): so is its turn
        task.cancel()
        with contextlib.suppress(BaseException):
            async with asyncio.timeout(5.0):
                await asyncio.shield(task)
        raise
    finally:
        waiting.cancel()
    if not task.done():
        runner.attended = False
        worker.parked[session_id] = (runner, task)
        task.add_done_callback(lambda _: _ended_unattended(worker, runner, task))
        return "waiting on a person: the agent stays alive with its request open"
    outcome = task.result()
    if runner.failures:
        raise TurnFailed(session_id, runner.failures)
    return outcome


def _ended_unattended(worker: WorkerLoop, runner: TurnRunner, task: asyncio.Task[str]) -> None:
    """A parked turn ended with no job following it (cancelled, answered elsewhere, worker stopping): what
    is queued for its session goes to any worker."""
    session_id = runner.claimed.session_id
    if worker.parked.get(session_id, (None, None))[1] is task:
        del worker.parked[session_id]
    if runner.attended:
        return
    if not task.cancelled() and task.exception() is not None:
        log.error("the parked turn of session %s failed", session_id, exc_info=task.exception())
    if worker.stopping is not None and worker.stopping.is_set():
        return
    enqueue = asyncio.ensure_future(worker.ctx.jobs.enqueue_turn(session_id))
    worker.background.add(enqueue)
    enqueue.add_done_callback(worker.background.discard)


async def _claim(ctx: ServiceContext, session_id: str) -> ClaimedTurn | None:
    return await claim_turn(
        ctx,
        session_id,
        worker_name=ctx.settings.worker_name or worker_identity(),
        job_id=current_job_id(),
        lease_seconds=ctx.settings.turn_lease_seconds,
    )


class TurnRunner:
    def __init__(
        self,
        ctx: ServiceContext,
        claimed: ClaimedTurn,
        *,
        pool: AgentPool | None = None,
        stopping: asyncio.Event | None = None,
    ) -> None:
        self.ctx = ctx
        self.claimed = claimed
        self.stream = TranscriptStream(ctx, claimed.session_id, claimed.turn_id)
        self.changes = ChangeWatch(ctx, claimed.task_id)
        self.runtime: AcpRuntime | None = None
        self.setup: TurnSetup | None = None
        self.timings: dict[str, float] = {}
        # The errors of this job's FAILED turns: the job itself then ends as failed.
        self.failures: list[str] = []
        # Set when the worker running this job is stopping (see KandevWorker.request_stop).
        self.shutting_down = stopping if stopping is not None else asyncio.Event()
        self.pool = pool
        self.binding = AgentBinding()
        # In a worker: set while the turn waits on a person (its job then ends); `answered` is set by the
        # job that delivers the answer; `attended` tells whether a job follows this runner right now.
        self.parked = asyncio.Event()
        self.answered = asyncio.Event()
        self.attended = True
        # Set when a usage report finds the task's budget spent: the running turn ends at once.
        self.budget_spent = asyncio.Event()

    async def run(self) -> str:
        """Run claimed turns until the queue is empty; the agent is reused when warm, (re)launched when
        needed, e.g. after a cancel, which kills it."""
        turns = 0
        session_id = self.claimed.session_id
        warm = None
        if self.pool is not None:
            warm = self.pool.take(session_id)
            # Before the turn can ask anyone anything: an answer goes back to this worker only if it is known here.
            await self.pool.advertise()
        keep = False
        claimed_at = time.perf_counter()
        try:
            while True:
                text = self.claimed.prompt_text
                if self.runtime is not None:  # a queued prompt drained by this job: the agent kept warm
                    warm = WarmAgent(session_id, self.runtime, self._setup(), self._setup().fingerprint(), self.binding)
                    self.runtime = None
                prefix = await self._acquire(warm)
                warm = None
                if prefix is _LAUNCH_FAILED:
                    return "launch_failed"
                assert isinstance(prefix, str)
                # The context block when new to this agent, or changed since (e.g. the task moved to another step).
                text = f"{prefix}\n\n{text}" if prefix else text
                began = time.perf_counter()
                # From the turn's claim until its prompt leaves for the agent (a launch's time included).
                self.timings["ready_ms"] = round((began - claimed_at) * 1000, 3)
                self.budget_spent.clear()
                text, files = await self._attachments(text)
                result = await self._prompt(text, files)
                await self._record_usage(asdict(result.usage) if result.usage else {})
                if self.budget_spent.is_set() and result.stop_reason == CANCELLED:
                    await self.stream.note(MessageKind.SYSTEM, BUDGET_SPENT, {"budget_reached": True})
                await self.stream.end_turn()
                self.timings["prompt_ms"] = round((time.perf_counter() - began) * 1000, 3)
                stop_reason, error = result.stop_reason, result.error
                if self.shutting_down.is_set() and stop_reason == CANCELLED:
                    stop_reason, error = FAILED, WORKER_SHUT_DOWN
                await finish_turn(
                    self.ctx, self.claimed.turn_id, stop_reason=stop_reason, error=error, timings=self.timings
                )
                self.changes.poke(delay=0)
                self.timings = {}
                turns += 1
                if stop_reason != CANCELLED and (error is not None or stop_reason == FAILED):
                    self.failures.append(f"turn {self.claimed.turn_seq} failed: {error or 'failed'}")
                if stop_reason in (CANCELLED, FAILED):
                    await self._close()
                if self.shutting_down.is_set():  # what is still queued waits for the next worker's recovery
                    return f"ran {turns} turn(s); the worker is shutting down"
                if not self.attended:  # no job follows this turn: what is queued goes to any worker
                    keep = True
                    return f"ran {turns} turn(s)"
                following = await _claim(self.ctx, session_id)
                if following is None:
                    keep = True
                    return f"ran {turns} turn(s)"
                self.claimed = following
                claimed_at = time.perf_counter()
                await self.stream.next_turn(following.turn_id)
        except asyncio.CancelledError:  # rq's job timeout or a cold stop: the turn ends, saying so
            await asyncio.shield(self._end_cancelled_job())
            raise
        except Exception as exc:  # the turn must end in the database whatever went wrong here
            log.exception("turn job for session %s failed", session_id)
            await self._end_stream()
            await finish_turn(
                self.ctx,
                self.claimed.turn_id,
                stop_reason=FAILED,
                error=f"internal error: {type(exc).__name__}",
            )
            raise
        finally:
            self.answered.set()  # a permission wait still open ends (rejected) with the turn
            if warm is not None:  # taken but never used: an exception before the launch step
                await warm.runtime.close()
            await self._release(keep and not self.shutting_down.is_set())
            # Updates delivered while the agent closed may have left text held for redaction.
            await self._end_stream()
            await self.changes.close()

    def _setup(self) -> TurnSetup:
        assert self.setup is not None
        return self.setup

    async def _end_cancelled_job(self) -> None:
        await self._end_stream()
        await finish_turn(self.ctx, self.claimed.turn_id, stop_reason=FAILED, error=JOB_STOPPED)

    async def _release(self, keep: bool) -> None:
        """Keep the agent warm in the worker's pool, or close it."""
        self.binding.on_update = self.binding.on_permission = None
        runtime, setup = self.runtime, self.setup
        self.runtime = None
        if self.pool is None:
            if runtime is not None:
                await runtime.close()
            return
        agent = None
        if runtime is not None and setup is not None:
            if keep and runtime.alive:
                agent = WarmAgent(self.claimed.session_id, runtime, setup, setup.fingerprint(), self.binding)
            else:
                await runtime.close()
        await self.pool.give_back(agent, self.claimed.session_id)

    async def _end_stream(self) -> None:
        try:
            await self.stream.end_turn()
        except Exception:  # losing held text is better than not ending the turn
            log.exception("could not store the end of session %s's transcript", self.claimed.session_id)

    async def _close(self) -> None:
        if self.runtime is not None:
            runtime, self.runtime = self.runtime, None
            await runtime.close()

    async def _acquire(self, warm: WarmAgent | None) -> str | object:
        """The session's warm agent when nothing it was launched with changed, else a fresh launch.

        Returns what precedes the prompt (the context block when it is new to this agent process), or
        _LAUNCH_FAILED.
        """
        if warm is not None:
            if (setup := await self._reusable(warm)) is not None:
                self.runtime, self.setup, self.binding = warm.runtime, setup, warm.binding
                self._bind()
                self.stream.use_secrets(setup.secrets)
                return setup.context if setup.context != warm.setup.context else ""
            await warm.runtime.close()
        loaded = await self._launch()
        if loaded is None:
            return _LAUNCH_FAILED
        return self._setup().first_prompt("", loaded=loaded).rstrip("\n")

    async def _reusable(self, warm: WarmAgent) -> TurnSetup | None:
        """The turn's setup on the warm agent, or None when the agent must be relaunched (and why is logged)."""
        if not warm.runtime.alive:
            return None
        try:
            setup = await prepare_turn(self.ctx, self.claimed, mint_token=False)
        except DomainError:
            return None
        reason = None
        if setup.missing_command:
            reason = "its command is gone"
        elif setup.fingerprint() != warm.fingerprint:
            reason = "its command, env, executor or MCP tool set changed"
        elif warm.setup.mcp_token:
            async with self.ctx.read() as db:
                if not await token_is_live(db, self.claimed.session_id, warm.setup.mcp_token):
                    reason = "its session token changed"
        if reason is not None:
            log.info("session %s: the warm agent is closed: %s", self.claimed.session_id, reason)
            return None
        setup.mcp_token = warm.setup.mcp_token
        return setup

    def _bind(self) -> None:
        self.binding.on_update = self._on_update
        self.binding.on_permission = self._ask_permission

    async def _on_update(self, update: AgentUpdate) -> None:
        if update.kind == "usage":
            await self._record_usage(update.data)
            return
        await self.stream.on_update(update)
        if ends_a_tool_call(update.kind, update.data):
            self.changes.poke()

    async def _record_usage(self, report: dict[str, Any]) -> None:
        """Record what the agent reported; a spent task budget ends the running turn. Usage that can't be
        recorded is logged, never a reason for the turn to fail."""
        try:
            recorded = await record_usage(self.ctx, self.claimed.turn_id, report)
        except Exception:
            log.exception("could not record the usage of turn %s", self.claimed.turn_id)
            return
        if recorded.clamp_note:
            text = f"The agent reported usage out of range, recorded clamped: {recorded.clamp_note}."
            await self.stream.note(MessageKind.SYSTEM, text, {"usage_clamped": recorded.clamp_note})
        if recorded.budget_reached:
            self.budget_spent.set()

    async def _launch(self) -> bool | None:
        """Start the agent; True when it resumed the ACP session natively. None: launch failed."""
        from kandev.runtime.acp_adapter import AcpRuntime  # lazy: start-up: ACP's 0.7 s, preloaded by workers

        try:
            self.setup = setup = await prepare_turn(self.ctx, self.claimed)
        except DomainError as error:  # e.g. git could not create the worktree
            await self._fail_launch(f"the agent can't start: {error.message}")
            return None
        try:  # a task on a pull request: can its branch be pushed to? (before any agent runs)
            await write_preflight(self.ctx, self.claimed.task_id)
        except DomainError as error:
            await self._fail_launch(f"the agent can't start: {error.message}")
            return None
        self.stream.use_secrets(setup.secrets)
        if setup.missing_command:
            await self._fail_launch(f"the agent can't start: command '{setup.missing_command}' is not on PATH")
            return None
        mcp_extra = await self._mcp_servers(setup) if setup.supports_mcp else []
        boxed = box_launch(self.ctx, setup, self.claimed.session_id, self._worker_name())
        if boxed is None:
            await self._fail_launch(
                f"the agent can't start: this worker has no {setup.box.kind if setup.box else ''} executor"
            )
            return None
        spec = LaunchSpec(
            argv=setup.argv,
            cwd=setup.cwd,
            env=setup.env,
            mcp_url=setup.mcp_url if setup.supports_mcp else None,
            mcp_token=setup.mcp_token if setup.supports_mcp else None,
            resume_session_id=setup.resume_session_id,
            permission_policy=setup.permission_policy,  # type: ignore[arg-type]  # a stored PermissionPolicy value
            secrets=setup.secrets,
            run_as=setup.run_as,
            readable=setup.readable,
            mcp_extra=mcp_extra,
            executor=boxed[0],
            box=boxed[1],
            relay=boxed[2],
        )
        self.runtime = AcpRuntime()
        # A fresh binding: an agent still warm elsewhere keeps its own.
        self.binding = AgentBinding()
        self._bind()
        began = time.perf_counter()
        try:
            info = await self.runtime.launch(spec, self.binding.update, self.binding.permission)
        except AgentLaunchError as exc:
            await self._close()
            await self._fail_launch(f"the agent could not be launched: {exc}")
            return None
        self.timings["launch_ms"] = round((time.perf_counter() - began) * 1000, 3)
        if setup.box is not None and self.runtime.box is not None:
            box_id = self.runtime.box.box_id
            await record_placement(self.ctx, self.claimed.session_id, setup.box.kind, self._worker_name(), box_id)
        # Plan mode (a step's enable_plan_mode) maps to the agent's own plan mode when it has one.
        plan = next((m for m in info.modes if m.lower() == "plan"), None)
        if setup.plan_mode and plan is not None and info.current_mode != plan:
            await self.runtime.set_mode(plan)
            await self.stream.note(MessageKind.SYSTEM, "The agent works in plan mode on this step.", {"mode": plan})
        await remember_acp_session(self.ctx, self.claimed.session_id, info.acp_session_id)
        if setup.supports_mcp and setup.mcp_revision == setup.mcp_desired_revision:
            await mark_mcp_applied(self.ctx, self.claimed.session_id, setup.mcp_revision, setup.mcp_desired)
        return info.loaded

    def _worker_name(self) -> str:
        return self.pool.worker_name if self.pool is not None else self.ctx.settings.worker_name or worker_identity()

    async def _mcp_servers(self, setup: TurnSetup) -> list[McpServerEntry]:
        """The desired workspace MCP revision as the agent receives it; when it can't be applied (a missing
        secret, a failed npm install) the applied one stays in use and the transcript says why."""
        settings = self.ctx.settings
        cache, source = settings.work_path / "mcp-packages", settings.mcp_npm_source
        policy, refused = outbound_policy(settings), list[str]()

        def build(entries: list[dict[str, Any]]) -> list[McpServerEntry]:
            # A non-admin's remote URL is checked again now: DNS may answer otherwise than when it was saved.
            outward, left_out = outward_entries(entries, setup.mcp_checked, policy)
            servers = deliverable(outward, setup.mcp_secrets, cache, source)
            refused[:] = left_out  # of the revision delivered
            return servers

        servers = await self._mcp_revision(setup, build)
        if refused:
            await self.stream.note(MessageKind.SYSTEM, refusal_note(refused), {"mcp_refused": refused})
        return servers

    async def _mcp_revision(
        self, setup: TurnSetup, build: Callable[[list[dict[str, Any]]], list[McpServerEntry]]
    ) -> list[McpServerEntry]:
        """The desired revision as built, or else the applied one (the transcript says why)."""
        try:
            return await asyncio.to_thread(build, setup.mcp_desired)
        except McpApplyError as exc:
            reason = str(exc)
        kept, setup.mcp_revision = setup.mcp_applied_revision, setup.mcp_applied_revision
        try:
            servers = await asyncio.to_thread(build, setup.mcp_applied)
        except McpApplyError:
            servers = []
        text = (
            f"The MCP server change (revision {setup.mcp_desired_revision}) could not be applied: {reason}. "
            f"Revision {kept} stays in use until it can be."
        )
        await self.stream.note(MessageKind.SYSTEM, text, {"mcp_desired_revision": setup.mcp_desired_revision})
        return servers

    async def _fail_launch(self, error: str) -> None:
        await fail_session_launch(self.ctx, self.claimed.turn_id, error)
        self.failures.append(f"turn {self.claimed.turn_seq} failed: {error}")

    async def _attachments(self, text: str) -> tuple[str, list[PromptFile]]:
        """The claimed prompt's attachments: in the prompt when the agent takes them, else written into its
        working directory and named after the text (kandev.domain.attachments.handover)."""
        runtime, setup = self.runtime, self.setup
        if not self.claimed.attachment_ids or runtime is None or runtime.info is None or setup is None:
            return text, []
        found = await attachment_files(self.ctx, list(self.claimed.attachment_ids))
        user = setup.run_as
        given = await asyncio.to_thread(
            hand_over,
            found,
            image_prompts=runtime.info.image_prompts,
            embedded_context=runtime.info.embedded_context,
            cwd=setup.cwd,
            owner=Owner(user.uid, user.gid) if user is not None else None,
        )
        if given.refused:
            await self.stream.note(MessageKind.SYSTEM, given.refused, {"attachments_refused": True})
        files = [PromptFile(f.name, f.content_type, f.data, f.uri, f.as_image) for f in given.files]
        return (f"{text}\n\n{given.note}" if given.note else text), files

    async def _prompt(self, text: str, files: list[PromptFile]) -> PromptResult:
        """Send the prompt while watching for cancellation (a Redis nudge or the lease check)."""
        runtime = self.runtime
        assert runtime is not None
        prompt = asyncio.create_task(runtime.prompt(text, files))
        watchers = [
            asyncio.create_task(self._heartbeat()),
            asyncio.create_task(self._listen_for_cancel()),
            asyncio.create_task(self.shutting_down.wait()),
            asyncio.create_task(self.budget_spent.wait()),
        ]
        try:
            done, _ = await asyncio.wait([prompt, *watchers], return_when=asyncio.FIRST_COMPLETED)
            if prompt not in done:
                await runtime.cancel(grace_seconds=1.0)
            return await prompt
        finally:
            for watcher in watchers:
                watcher.cancel()
                with contextlib.suppress(BaseException):
                    await watcher

    async def _heartbeat(self) -> None:
        """Renew the lease; returns when the turn should stop (stop/interrupt recorded in the database)."""
        interval = max(0.2, self.ctx.settings.turn_lease_seconds / 3)
        lease = self.ctx.settings.turn_lease_seconds
        # Shielded: this watcher is cancelled when the prompt ends, and a write transaction cut off
        # mid-way would keep SQLite's write lock until the connection is collected.
        while not await asyncio.shield(renew_lease(self.ctx, self.claimed.turn_id, lease)):
            await asyncio.sleep(interval)

    async def _listen_for_cancel(self) -> None:
        """Returns on a cancel; a clarification (the agent's MCP call waits on a person) parks the turn."""
        async with self.ctx.bus.subscribe(control_channel(self.claimed.session_id)) as events:
            async for event in events:
                if event["action"] == "cancel":
                    return
                if event["action"] == WAITING and self.pool is not None:
                    self.parked.set()

    async def _ask_permission(self, request: PermissionRequest) -> str | None:
        setup = self.setup
        if await fail_run_on_permission(self.ctx, self.claimed.turn_id, request.title):
            return None  # an automation run never waits on an operator: the run fails, saying why
        if setup is not None and setup.task_origin == TaskOrigin.AUTOMATION_RUN:
            return None  # a reply to a run's hidden task doesn't either
        request_id = await record_request(
            self.ctx,
            session_id=self.claimed.session_id,
            turn_id=self.claimed.turn_id,
            title=request.title,
            tool_call={"tool_call_id": request.tool_call_id, "raw_input": request.raw_input},
            options=[asdict(o) for o in request.options],
        )
        if self.pool is None:
            return await wait_for_answer(self.ctx, request_id)
        # In a worker the job ends here; the job delivering the answer wakes this wait.
        self.answered.clear()
        self.parked.set()
        # Unanswered for as long as a turn job may run: rejected (the job timeout bounded this wait before).
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self.ctx.settings.turn_timeout_seconds):
                await self.answered.wait()
        self.parked.clear()
        return await chosen_option(self.ctx, request_id)
