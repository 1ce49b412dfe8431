"""The one asyncio event loop of a worker process: every job's coroutine runs on it, in a background
thread, so what outlives a job (warm agents, their open requests) lives on one loop with one engine."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
from collections.abc import Callable, Coroutine
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any, TypeVar

from kandev.jobs.agents import AgentPool
from kandev.jobs.boxes import BOX_CAPABILITIES, sweep_boxes, sweep_forever
from kandev.platform.settings import Settings
from kandev.wiring import SYSTEM, provide_services

if TYPE_CHECKING:
    from kandev.domain.context import ServiceContext
    from kandev.jobs.agents import AgentPool

log = logging.getLogger("kandev.worker")
T = TypeVar("T")
A = TypeVar("A")

# How long a stopping worker gives its loop to close agents and the engine.
_STOP_TIMEOUT = 15.0

_current: WorkerLoop | None = None


def current_loop() -> WorkerLoop | None:
    """The worker loop of this process, when it runs inside `kandev worker`."""
    return _current


def run_as_system(action: Callable[[ServiceContext, A], Coroutine[Any, Any, T]], argument: A) -> T:
    """An RQ job's body, as the system: on the worker's event loop and services, or (outside a worker, e.g.
    rq's own worker in tests) on fresh ones."""

    worker = current_loop()
    if worker is None:
        return asyncio.run(_alone(action, argument))
    return worker.call(action(worker.ctx.with_principal(SYSTEM), argument))


async def _alone(action: Callable[[ServiceContext, A], Coroutine[Any, Any, T]], argument: A) -> T:

    async with provide_services(Settings(), SYSTEM) as services:
        return await action(services.ctx, argument)


class WorkerLoop:
    """A loop in a daemon thread, the worker's services on it, its agent pool, and its stop notice.

    Agents are spawned from this thread: their parent-death signal fires when this thread ends, so it
    lives as long as the worker.
    """

    def __init__(self, settings: Settings, name: str, capabilities: frozenset[str] = frozenset()) -> None:
        self.settings = settings
        self.name = name
        self.capabilities = capabilities
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=f"kandev-loop-{name}", daemon=True)
        self._stack = AsyncExitStack()
        self._ctx: ServiceContext | None = None
        self._pool: AgentPool | None = None
        self.stopping: asyncio.Event | None = None
        # Turns waiting on a person, by session id: (runner, its task); a delivery job adopts one.
        self.parked: dict[str, tuple[Any, asyncio.Task[str]]] = {}
        # Fire-and-forget tasks, referenced until done.
        self.background: set[asyncio.Future[Any]] = set()
        self._sweeper: asyncio.Task[None] | None = None

    def start(self) -> WorkerLoop:
        global _current
        self._thread.start()
        self.call(self._setup())
        _current = self
        return self

    @property
    def ctx(self) -> ServiceContext:
        assert self._ctx is not None, "the worker loop is not started"
        return self._ctx

    @property
    def pool(self) -> AgentPool:
        assert self._pool is not None, "the worker loop is not started"
        return self._pool

    def call(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run `coro` on the loop and wait for it from this (other) thread.

        An exception in the waiting thread (rq's job timeout, a cold stop's SystemExit) cancels the
        coroutine, gives it a moment to clean up, and propagates.
        """
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout)
        except BaseException:
            if not future.done():
                future.cancel()
                with contextlib.suppress(BaseException):
                    concurrent.futures.wait([future], timeout=5.0)
            raise

    def notify_stop(self) -> None:
        """The worker is stopping: running turns end themselves saying so, and its warm agents are no longer
        offered to dispatchers (thread-safe)."""
        if self.stopping is not None and self.loop.is_running():
            self.loop.call_soon_threadsafe(self.stopping.set)
            if self._pool is not None:
                asyncio.run_coroutine_threadsafe(self._pool.retire(), self.loop)

    def stop(self) -> None:
        """Close every agent and the services, then end the loop and its thread."""
        global _current
        if not self._thread.is_alive():
            return
        try:
            self.call(self._teardown(), timeout=_STOP_TIMEOUT)
        except Exception:
            log.exception("worker %s: closing the loop's agents and services failed", self.name)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=5.0)
        if _current is self:
            _current = None

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()
        with contextlib.suppress(Exception):
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
        self.loop.close()

    async def _setup(self) -> None:

        self.stopping = asyncio.Event()
        # One set of services for the worker's life, its connections pooled: the loop is shared, so they never
        # cross loops, and a turn's transactions no longer open a PostgreSQL connection each.
        services = provide_services(self.settings, SYSTEM, pooled=True)
        self._ctx = (await self._stack.enter_async_context(services)).ctx
        self._pool = AgentPool(self._ctx, self.name)
        await self._pool.start()
        if self.capabilities & BOX_CAPABILITIES:
            # What a dead worker left in the Engine goes now, then every few seconds.
            await sweep_boxes(self._ctx, self.name, starting=True)
            self._sweeper = asyncio.create_task(sweep_forever(self._ctx, self.name), name="box-sweeper")

    async def _teardown(self) -> None:
        # Turns parked on a person end themselves, saying the worker stopped, before their agents go.
        if self.stopping is not None:
            self.stopping.set()
        parked = [task for _, task in self.parked.values()]
        if parked:
            await asyncio.wait(parked, timeout=_STOP_TIMEOUT / 2)
        if self._pool is not None:
            await self._pool.stop()
        if self._sweeper is not None:
            self._sweeper.cancel()
        await self._stack.aclose()
