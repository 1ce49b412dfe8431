"""`kandev scheduler`: a loop that ticks every few seconds and runs the registered tick hooks, and beside it
(in a thread of its own, with Redis) the schedule loop that fires automation schedules on time.

Recovery (reaping expired turns, re-enqueueing queued work) is a hook. Schedules need sub-second precision,
so they have their own loop (kandev.domain.automations.scheduling.run_schedules), not a tick hook.
Two schedulers may run at once: whatever a hook or the schedule loop fires is claimed in the database.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import signal
import threading
import time
from collections.abc import Callable
from types import FrameType

from kandev.domain.automations.scheduling import run_schedules
from kandev.jobs.github_triggers import github_tick
from kandev.jobs.profile_checks import profile_tick
from kandev.jobs.recovery import recover_sync
from kandev.jobs.shipping import ship_tick
from kandev.platform.clock import clock_of
from kandev.platform.settings import Settings
from kandev.wiring import SYSTEM, provide_services

log = logging.getLogger("kandev.scheduler")

_POLL_SECONDS = 0.1


def _recover(settings: Settings) -> object:
    """Reap expired turns and re-enqueue pending work (imported late: it pulls in the domain)."""

    return recover_sync(settings)


# Called in order on every tick; a hook may return a coroutine, which runs on the scheduler's event loop.
# A failing hook is logged and does not stop the others or the loop.
tick_hooks: list[Callable[[Settings], object]] = [_recover]
tick_hooks.append(github_tick)  # GitHub: pending firings and PR polls (kandev.jobs.github_triggers)
tick_hooks.append(profile_tick)  # agent profiles changed outside Kandev re-ack (kandev.jobs.profile_checks)
tick_hooks.append(ship_tick)  # requests polled, fix rounds a dead job left enqueued again (kandev.jobs.shipping)


class _StopFlag:
    """Set from a signal handler: a plain attribute, because threading.Event.set() takes a lock that the
    interrupted main thread may be holding."""

    def __init__(self, event: threading.Event | None) -> None:
        self.event = event
        self.signalled = False

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        log.info("scheduler: got %s, stopping", signal.Signals(signum).name)
        self.signalled = True

    def is_set(self) -> bool:
        return self.signalled or (self.event is not None and self.event.is_set())


_RESTART_SECONDS = 1.0


async def _schedules(settings: Settings, should_stop: Callable[[], bool]) -> None:
    """The schedule loop with services of its own (imported late: it pulls in the domain); restarted after a
    failure (a database or Redis outage) until stopped."""

    clock = clock_of(settings)
    while not should_stop():
        try:
            # Pooled: this loop lives as long as the schedule thread, so its connections never cross loops.
            async with provide_services(settings, SYSTEM, pooled=True) as services:
                await run_schedules(
                    services.ctx, clock, should_stop=should_stop, max_sleep=settings.schedule_max_sleep_seconds
                )
        except Exception:
            log.exception("schedule loop failed; restarting")
            deadline = time.monotonic() + _RESTART_SECONDS
            while not should_stop() and time.monotonic() < deadline:
                await asyncio.sleep(_POLL_SECONDS)


def _start_schedules(settings: Settings, stop: _StopFlag) -> threading.Thread | None:
    """The schedule loop's thread; none without Redis (a fire enqueues its launch job there)."""
    if settings.redis_url is None:
        log.warning("schedule loop not started: KANDEV_REDIS_URL is not set")
        return None
    thread = threading.Thread(
        target=lambda: asyncio.run(_schedules(settings, stop.is_set)), name="kandev-schedules", daemon=True
    )
    thread.start()
    return thread


def _run_hooks(settings: Settings, runner: asyncio.Runner) -> None:
    for hook in list(tick_hooks):
        try:
            result = hook(settings)
            if inspect.iscoroutine(result):
                runner.run(result)
        except Exception:
            log.exception("scheduler hook %s failed", getattr(hook, "__name__", hook))


def run_scheduler(
    settings: Settings, *, stop_event: threading.Event | None = None, max_ticks: int | None = None
) -> int:
    """Tick every `settings.scheduler_interval_seconds` until SIGTERM/SIGINT, `stop_event` or `max_ticks`.

    Returns the number of ticks. Signal handlers are installed (and restored after) only in the main thread.
    """
    stop = _StopFlag(stop_event)
    previous: dict[int, Callable[[int, FrameType | None], object] | int | None] = {}
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGTERM, signal.SIGINT):
            previous[signum] = signal.signal(signum, stop)
    interval = settings.scheduler_interval_seconds
    ticks = 0
    log.info("scheduler running every %.1fs", interval)
    schedules = _start_schedules(settings, stop)
    try:
        with asyncio.Runner() as runner:
            next_tick = time.monotonic()
            while not stop.is_set():
                ticks += 1
                log.debug("scheduler tick %d", ticks)
                _run_hooks(settings, runner)
                if max_ticks is not None and ticks >= max_ticks:
                    break
                # Fixed rate, not fixed delay; after an overlong tick, start the next one at once.
                next_tick = max(next_tick + interval, time.monotonic())
                # Short sleeps so a signal or stop_event ends the wait promptly, whatever the interval.
                while not stop.is_set() and (remaining := next_tick - time.monotonic()) > 0:
                    time.sleep(min(remaining, _POLL_SECONDS))
    finally:
        stop.signalled = True
        if schedules is not None:
            schedules.join(timeout=10)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    log.info("scheduler stopped after %d tick(s)", ticks)
    return ticks
