"""Where a benchmark keeps its data: a fresh SQLite file and the embedded Redis-protocol server, like
`kandev serve`; or, when KANDEV_BENCH_DATABASE_URL / KANDEV_BENCH_REDIS_URL are set, a new PostgreSQL
database beside the one named (dropped afterwards) and the named Redis database, emptied first.

Each benchmark starts empty either way: one run's leftovers (10,000 hourly schedules, queued runs and turns)
would otherwise fire and queue during the next one and time out its jobs."""

from __future__ import annotations

import asyncio
import os
import tempfile
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import asyncpg
from redis import Redis
from sqlalchemy import make_url

from kandev.migrations import upgrade_to_head


@dataclass(frozen=True)
class Backends:
    database_url: str
    redis_url: str
    folder: Path

    @property
    def database(self) -> str:
        """The database's driver name, for the report."""
        return self.database_url.split(":", 1)[0]


@contextmanager
def backends() -> Iterator[Backends]:
    """The database (migrated) and Redis for one benchmark, and a scratch folder; all gone afterwards."""
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        given_redis = os.environ.get("KANDEV_BENCH_REDIS_URL")
        given_database = os.environ.get("KANDEV_BENCH_DATABASE_URL")
        server = None
        if given_redis:
            redis_url = given_redis
            with Redis.from_url(redis_url) as redis:
                redis.flushdb()
        else:
            from kandev.platform.embedded_redis import start_embedded_redis

            server = start_embedded_redis()
            redis_url = server.url
        try:
            with _database(given_database, folder) as database_url:
                upgrade_to_head(database_url)
                yield Backends(database_url, redis_url, folder)
        finally:
            if server is not None:
                server.stop()


@contextmanager
def _database(given: str | None, folder: Path) -> Iterator[str]:
    if not given:
        yield f"sqlite+aiosqlite:///{folder / 'bench.db'}"
        return
    url = make_url(given)
    if not url.drivername.startswith("postgresql"):
        yield given  # another engine: used as it is
        return
    fresh = f"{url.database}_bench_{uuid.uuid4().hex[:8]}"
    server = url.set(drivername="postgresql").render_as_string(hide_password=False)
    _on_server(server, f'CREATE DATABASE "{fresh}"')
    try:
        yield url.set(database=fresh).render_as_string(hide_password=False)
    finally:
        _on_server(server, f'DROP DATABASE IF EXISTS "{fresh}" WITH (FORCE)')


def _on_server(dsn: str, statement: str) -> None:
    """One statement outside any transaction (CREATE/DROP DATABASE), from sync code that may be called while
    an event loop runs: on a loop of its own in a thread."""

    async def execute() -> None:
        connection = await asyncpg.connect(dsn)
        try:
            await connection.execute(statement)
        finally:
            await connection.close()

    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, execute()).result()
