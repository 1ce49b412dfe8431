"""A real uvicorn server for the app on a free loopback port, inside the test's event loop."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from typing import Any, TypeVar

import uvicorn

from kandev.app import GRACEFUL_SHUTDOWN_SECONDS, create_app
from kandev.platform.settings import Settings

_T = TypeVar("_T")


@contextmanager
def served_in_thread(
    serve: Callable[[], AbstractAsyncContextManager[_T]], name: str, wait: float = 15.0
) -> Iterator[_T]:
    """An async fake (`serve()`, e.g. fake_github()) run in a thread and event loop of its own, for synchronous
    tests such as the browser's; what it yields, until the block ends."""
    ready = threading.Event()
    held: dict[str, Any] = {}

    async def main() -> None:
        stop = asyncio.Event()
        held["loop"], held["stop"] = asyncio.get_running_loop(), stop
        async with serve() as served:
            held["served"] = served
            ready.set()
            await stop.wait()

    thread = threading.Thread(target=lambda: asyncio.run(main()), name=name, daemon=True)
    thread.start()
    assert ready.wait(wait), f"{name} did not start"
    try:
        yield held["served"]
    finally:
        held["loop"].call_soon_threadsafe(held["stop"].set)
        thread.join(wait)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


_last_app: list[Any] = []


def last_app_state() -> Any:
    """The AppState of the most recently started server (benchmarks read its engine)."""
    return _last_app[-1].state.kandev


@asynccontextmanager
async def serving(app: Any, port: int | None = None, lifespan: str = "auto") -> AsyncIterator[str]:
    """`app` served by uvicorn on a loopback port (a free one unless given) until the block ends: its address."""
    port = port or free_port()
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        lifespan=lifespan,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,  # as `kandev serve`: an agent's open MCP wait is cut
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    try:
        async with asyncio.timeout(15):
            while not server.started:
                if task.done():
                    task.result()
                await asyncio.sleep(0.02)
        yield f"127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, timeout=15)


@asynccontextmanager
async def running_server(settings: Settings, **app_options: Any) -> AsyncIterator[str]:
    app = create_app(settings, **app_options)
    _last_app[:] = [app]
    async with serving(app, lifespan="on") as address:
        yield address
