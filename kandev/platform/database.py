"""Engines and sessions for SQLite (embedded) and PostgreSQL, with the SQLite pragmas we rely on."""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

from sqlalchemy import event
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DisconnectionError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.pool import NullPool

SQLITE_BUSY_TIMEOUT_MS = 30_000
# A pooled PostgreSQL connection idle longer than this is pinged before use; a busy server's connections
# come back within milliseconds, and pinging each checkout cost a round trip on every request.
IDLE_PING_SECONDS = 1.0
POOL_SIZE = 10
POOL_OVERFLOW = 20
_IMMEDIATE = "kandev_begin_immediate"


# Drivers people paste from their provider's console, and the async driver each one means here.
_ASYNC_DRIVERS = {
    "postgres": "postgresql+asyncpg",
    "postgresql": "postgresql+asyncpg",
    "postgresql+asyncpg": "postgresql+asyncpg",
    "sqlite": "sqlite+aiosqlite",
    "sqlite+aiosqlite": "sqlite+aiosqlite",
}
DATABASE_URL_EXAMPLE = "postgresql+asyncpg://USER:PASSWORD@HOST:5432/DBNAME"


def async_database_url(url: str) -> str:
    """`url` with the async driver Kandev runs on (postgres:// and postgresql:// become postgresql+asyncpg://,
    libpq's sslmode becomes asyncpg's ssl); any other driver is a ValueError that says what to write instead."""
    scheme, sep, rest = url.strip().partition("://")
    if not sep:
        raise ValueError(f"not a database URL; write it as {DATABASE_URL_EXAMPLE}")
    driver = _ASYNC_DRIVERS.get(scheme.lower())
    if driver is None:
        # Only the scheme is echoed: the rest may hold a password.
        raise ValueError(
            f"the driver {scheme!r} is not supported; write the URL as {DATABASE_URL_EXAMPLE} (PostgreSQL) "
            "or leave it unset for the embedded SQLite"
        )
    normalised = f"{driver}://{rest}"
    try:
        parsed = make_url(normalised)
    except ArgumentError:
        raise ValueError(f"not a database URL; write it as {DATABASE_URL_EXAMPLE}") from None
    if driver == "postgresql+asyncpg" and "sslmode" in parsed.query:
        query = dict(parsed.query)
        query.setdefault("ssl", query.pop("sslmode"))
        normalised = parsed.set(query=query).render_as_string(hide_password=False)
    return normalised


def database_host(url: str) -> str:
    """Where `url` points, for messages: host[:port], or the SQLite file; never the password."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        return "?"
    if parsed.get_backend_name() == "sqlite":
        return parsed.database or ":memory:"
    return f"{parsed.host or 'localhost'}:{parsed.port or 5432}"


def is_sqlite(url: str) -> bool:
    return url.startswith("sqlite")


def _install_sqlite_hooks(engine: AsyncEngine) -> None:
    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy's "begin" hook below issue BEGIN itself instead of pysqlite's implicit one.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(conn: Any) -> None:
        # Writers take the write lock up front: a deferred transaction that later upgrades to a
        # writer fails with SQLITE_BUSY instead of waiting, and read-then-write must not interleave.
        immediate = conn.get_execution_options().get(_IMMEDIATE, False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def create_engine(url: str, *, pooled: bool = True, ping_after: float | None = None) -> AsyncEngine:
    """An async engine; pass pooled=False inside RQ jobs, which each run on a fresh event loop. A pooled
    PostgreSQL connection idle `ping_after` seconds (IDLE_PING_SECONDS unless given; 0: at every checkout)
    is pinged before use."""
    url = async_database_url(url)
    kwargs: dict[str, Any] = {}
    if not pooled:
        kwargs["poolclass"] = NullPool
    if is_sqlite(url):
        kwargs["connect_args"] = {"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000}
    elif pooled:
        # Sized above the web client's usual concurrency: an overflow connection is opened and closed
        # per use, and opening one costs far more than the query it serves.
        kwargs.update(pool_size=POOL_SIZE, max_overflow=POOL_OVERFLOW)
    engine = create_async_engine(url, **kwargs)
    if is_sqlite(url):
        _install_sqlite_hooks(engine)
    elif pooled:
        _ping_when_idle(engine, ping_after)
    return engine


def _ping_when_idle(engine: AsyncEngine, after: float | None) -> None:
    """Check a pooled connection that sat idle (the database may have restarted meanwhile) before handing
    it out; a dead one is replaced. A connection that breaks in use makes SQLAlchemy recycle the whole pool."""
    dialect = engine.sync_engine.dialect

    @event.listens_for(engine.sync_engine, "checkin")
    def _on_checkin(_dbapi_connection: Any, record: Any) -> None:
        record.info["idle_since"] = time.monotonic()

    @event.listens_for(engine.sync_engine, "checkout")
    def _on_checkout(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        idle_since = record.info.get("idle_since")
        limit = IDLE_PING_SECONDS if after is None else after
        if idle_since is None or time.monotonic() - idle_since < limit:
            return
        try:
            alive = dialect.do_ping(dbapi_connection)
        except Exception as error:  # the driver's own error type; any failure means "replace it"
            raise DisconnectionError("pooled connection is gone") from error
        if not alive:
            raise DisconnectionError("pooled connection is gone")


def dialect_insert(session: AsyncSession, model: Any) -> Any:
    """An INSERT into `model` in the session's dialect, so `on_conflict_do_nothing` works on SQLite and
    PostgreSQL alike."""
    insert = postgresql_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
    return insert(model)


class Database:
    """One engine plus the two session kinds: reads, and write transactions that commit on exit."""

    def __init__(self, url: str, *, pooled: bool = True, ping_after: float | None = None) -> None:
        self.url = url
        self.engine = create_engine(url, pooled=pooled, ping_after=ping_after)
        writer = self.engine.execution_options(**{_IMMEDIATE: True})
        # PostgreSQL reads run at READ COMMITTED, where every statement takes its own snapshot anyway:
        # autocommit saves the BEGIN and ROLLBACK round trips. SQLite reads keep their transaction, which
        # gives all of a read's statements one snapshot.
        reader = self.engine if self.is_sqlite else self.engine.execution_options(isolation_level="AUTOCOMMIT")
        self._reads = async_sessionmaker(reader, expire_on_commit=False)
        self._writes = async_sessionmaker(writer, expire_on_commit=False)
        # SQLite has one writer at a time. Writers of this process queue here, in order, instead of in
        # SQLite's busy handler, which sleeps up to 100 ms between tries; other processes still meet
        # the busy timeout. One lock per event loop: RQ jobs each run on a loop of their own.
        self._write_turns: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )
        self._writers: weakref.WeakSet[asyncio.Task[Any]] = weakref.WeakSet()

    @property
    def is_sqlite(self) -> bool:
        return is_sqlite(self.url)

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncSession]:
        async with self._reads() as db:
            yield db

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncSession]:
        """A write unit of work: BEGIN IMMEDIATE on SQLite, committed on success, rolled back on error."""
        async with AsyncExitStack() as stack:
            if self.is_sqlite:
                await stack.enter_async_context(self._write_turn())
            db = await stack.enter_async_context(self._writes())
            await stack.enter_async_context(db.begin())
            yield db

    @asynccontextmanager
    async def _write_turn(self) -> AsyncIterator[None]:
        holder = asyncio.current_task()
        if holder is None or holder in self._writers:
            # Queueing behind our own commit would wait forever.
            raise RuntimeError("a write transaction was opened inside another in the same task")
        loop = asyncio.get_running_loop()
        lock = self._write_turns.get(loop)
        if lock is None:
            lock = self._write_turns[loop] = asyncio.Lock()
        async with lock:
            self._writers.add(holder)
            try:
                yield
            finally:
                self._writers.discard(holder)

    async def dispose(self) -> None:
        await self.engine.dispose()
