"""Test databases: a migrated SQLite template copied per test, or a PostgreSQL database emptied per test."""

from __future__ import annotations

import asyncio
import os
import shutil
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import asyncpg
import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url

from kandev.migrations import upgrade_to_head
from kandev.models import Base
from kandev.platform.database import create_engine


def postgres_server_url() -> str | None:
    return os.environ.get("KANDEV_TEST_POSTGRES_URL") or None


def suite_database_url() -> str | None:
    """The database the whole suite runs on; None means the embedded SQLite default."""
    return os.environ.get("KANDEV_TEST_DATABASE_URL") or None


async def create_postgres_database(server_url: str, prefix: str = "kandev_t") -> str:
    """A new empty database on the server named by `server_url`; returns its URL."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    engine = create_engine(server_url, pooled=False)
    async with engine.connect() as conn:
        await conn.execution_options(isolation_level="AUTOCOMMIT")
        await conn.execute(text(f'CREATE DATABASE "{name}"'))
    await engine.dispose()
    return make_url(server_url).set(database=name).render_as_string(hide_password=False)


async def drop_postgres_database(server_url: str, url: str) -> None:
    name = make_url(url).database
    engine = create_engine(server_url, pooled=False)
    async with engine.connect() as conn:
        await conn.execution_options(isolation_level="AUTOCOMMIT")
        await conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    await engine.dispose()


def sqlite_url(path: Path) -> str:
    return f"sqlite+aiosqlite:///{path}"


class SqliteTemplate:
    """Migrate once, copy the file for every test: fast and fully isolated."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "template.db"
        upgrade_to_head(sqlite_url(self.path))

    def fresh(self, folder: Path) -> str:
        target = folder / "kandev.db"
        shutil.copyfile(self.path, target)
        return sqlite_url(target)

    def check_schema_kept(self) -> None:
        """Nothing to check: every test has a copy of its own."""


def run(coro):  # noqa: ANN001, ANN201 - tiny sync bridge for session fixtures
    return asyncio.run(coro)


# What a test could change in the shared database beyond its rows: columns (of tables and indexes), triggers and
# functions. Compared after every test (a millisecond), so a test that leaves such a change fails, not a later one.
_SCHEMA = """SELECT md5(coalesce(string_agg(item, ',' ORDER BY item), '')) FROM (
    SELECT c.relkind::text || ':' || c.relname || '.' || a.attname || ':' || format_type(a.atttypid, a.atttypmod)
        AS item
      FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'public' AND a.attnum > 0 AND NOT a.attisdropped
    UNION ALL SELECT 'trigger:' || tgname FROM pg_trigger WHERE NOT tgisinternal
    UNION ALL SELECT 'function:' || p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
     WHERE n.nspname = 'public') AS items"""


class PostgresSuiteDatabase:
    """A migrated PostgreSQL database for the session (each parallel worker has its own), emptied before every
    test over one kept connection: deleting the few rows a test leaves takes a millisecond, where a new
    connection and a TRUNCATE of every table, or a copy of a template database, take about fifty."""

    def __init__(self, server_url: str) -> None:
        self.server_url = server_url
        # Children before parents, in one implicit transaction (asyncpg runs a multi-statement text as one).
        self._empty_all = "; ".join(f'DELETE FROM "{t.name}"' for t in reversed(Base.metadata.sorted_tables))
        # A loop of its own: each test runs in a new one, and the kept connection belongs to this one.
        self._loop = asyncio.new_event_loop()
        self._create()

    def _create(self) -> None:
        self.url = run(create_postgres_database(self.server_url))
        upgrade_to_head(self.url)
        self._dsn = make_url(self.url).set(drivername="postgresql").render_as_string(hide_password=False)
        self._connection = self._run(asyncpg.connect(self._dsn))
        self._schema = self._on_connection(lambda c: c.fetchval(_SCHEMA))

    def _on_connection(self, query):  # noqa: ANN001, ANN202 - `query(connection)` on the kept connection
        """Runs `query` on the kept connection, on a new one if a test ended it (the reliability tests terminate
        every backend of the database to prove the worker reconnects; this connection is one of them)."""
        try:
            return self._run(query(self._connection))
        except (asyncpg.InterfaceError, asyncpg.InternalClientError, asyncpg.PostgresConnectionError, ConnectionError):
            self._connection.terminate()
            self._connection = self._run(asyncpg.connect(self._dsn))
            return self._run(query(self._connection))

    def _drop(self) -> None:
        self._connection.terminate()
        run(drop_postgres_database(self.server_url, self.url))

    def _run(self, coro):  # noqa: ANN001, ANN202 - awaits `coro` on the kept connection's loop, bounded
        return self._loop.run_until_complete(asyncio.wait_for(coro, timeout=60))

    def fresh(self, folder: Path) -> str:
        self._on_connection(lambda c: c.execute(self._empty_all))
        return self.url

    def check_schema_kept(self) -> None:
        """After a test: fails it if it left the schema changed, after putting a new migrated database in place."""
        if self._on_connection(lambda c: c.fetchval(_SCHEMA)) == self._schema:
            return
        self._drop()
        self._create()
        raise AssertionError(
            "this test changed the schema of the suite's PostgreSQL database (a column, index, trigger or function) "
            "and left it so: undo such a change before the test ends, the next tests share the database"
        )

    def close(self) -> None:
        try:
            self._drop()
        finally:
            self._loop.close()


# Both database kinds a race test runs on: SQLite always, PostgreSQL when KANDEV_TEST_POSTGRES_URL names a server.
BACKENDS = [
    "sqlite",
    pytest.param(
        "postgres",
        marks=[
            pytest.mark.postgres,
            pytest.mark.skipif(postgres_server_url() is None, reason="KANDEV_TEST_POSTGRES_URL is not set"),
        ],
    ),
]


@asynccontextmanager
async def database_on(backend: str, database_url: str, folder: Path) -> AsyncIterator[str]:
    """A migrated database of the kind: the test's own SQLite (a new one when the suite runs on PostgreSQL),
    or a new PostgreSQL database, dropped afterwards."""
    if backend == "sqlite":
        if database_url.startswith("sqlite"):
            yield database_url
            return
        url = sqlite_url(folder / "own.db")
        await asyncio.to_thread(upgrade_to_head, url)
        yield url
        return
    server = postgres_server_url()
    assert server is not None
    url = await create_postgres_database(server)
    try:
        await asyncio.to_thread(upgrade_to_head, url)
        yield url
    finally:
        await drop_postgres_database(server, url)
