"""How reads and write transactions use the database: SQLite writers of one process queue in order,
PostgreSQL reads skip the transaction round trips, and a pooled connection that died while idle is
replaced before anyone uses it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import text

from kandev.platform import database as db_module
from kandev.platform.database import Database, create_engine
from tests.support.databases import create_postgres_database, drop_postgres_database, postgres_server_url, sqlite_url

WAIT = 10
no_postgres = pytest.mark.skipif(postgres_server_url() is None, reason="KANDEV_TEST_POSTGRES_URL is not set")


@pytest.fixture
async def sqlite_db(tmp_path: Path) -> AsyncIterator[Database]:
    """A SQLite file of its own, whichever database the suite runs on."""
    database = Database(sqlite_url(tmp_path / "writers.db"))
    yield database
    await database.dispose()


@pytest.fixture
async def postgres_db() -> AsyncIterator[Database]:
    server = postgres_server_url()
    assert server is not None
    url = await create_postgres_database(server)
    database = Database(url)
    try:
        yield database
    finally:
        await database.dispose()
        await drop_postgres_database(server, url)


async def test_sqlite_writers_of_one_process_take_their_turns_in_the_order_they_asked(sqlite_db: Database):
    db = sqlite_db
    entered: list[int] = []
    holding = asyncio.Event()
    release = asyncio.Event()

    async def first() -> None:
        async with db.transaction() as session:
            await session.execute(text("SELECT 1"))
            holding.set()
            await release.wait()

    async def writer(n: int) -> None:
        async with db.transaction() as session:
            entered.append(n)
            await session.execute(text("SELECT 1"))

    holder = asyncio.create_task(first())
    await asyncio.wait_for(holding.wait(), WAIT)
    waiters = []
    for n in range(8):
        waiters.append(asyncio.create_task(writer(n)))
        await asyncio.sleep(0)  # each one queues before the next is created
    release.set()
    await asyncio.wait_for(asyncio.gather(holder, *waiters), WAIT)
    assert entered == list(range(8))


async def test_a_write_transaction_opened_inside_another_in_the_same_task_fails_at_once(sqlite_db: Database):
    db = sqlite_db
    with pytest.raises(RuntimeError, match="inside another"):
        async with db.transaction():
            async with asyncio.timeout(WAIT), db.transaction():
                pass
    async with db.transaction() as session:  # the failed attempt left the queue usable
        assert await session.scalar(text("SELECT 1")) == 1


async def _transactions_of_two_statements(session) -> set[int]:  # noqa: ANN001
    return {int(await session.scalar(text("SELECT pg_current_xact_id()::text"))) for _ in range(2)}


@pytest.mark.postgres
@no_postgres
async def test_postgresql_reads_run_each_statement_on_its_own_and_writes_keep_one_transaction(postgres_db: Database):
    db = postgres_db
    async with db.read() as session:
        assert len(await _transactions_of_two_statements(session)) == 2
    async with db.transaction() as session:
        assert len(await _transactions_of_two_statements(session)) == 1


@pytest.mark.postgres
@no_postgres
async def test_a_postgresql_connection_that_died_while_idle_is_replaced_before_use(
    postgres_db: Database, monkeypatch: pytest.MonkeyPatch
):
    db = postgres_db
    async with db.read() as session:
        first_pid = await session.scalar(text("SELECT pg_backend_pid()"))
    killer = create_engine(db.url, pooled=False)
    try:
        async with killer.connect() as connection:
            await connection.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": first_pid})
    finally:
        await killer.dispose()
    monkeypatch.setattr(db_module, "IDLE_PING_SECONDS", 0.0)
    async with db.read() as session:
        second_pid = await session.scalar(text("SELECT pg_backend_pid()"))
    assert second_pid is not None and second_pid != first_pid
