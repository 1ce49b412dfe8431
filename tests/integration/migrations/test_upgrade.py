"""Migrations build the whole schema from an empty database, on SQLite and on PostgreSQL."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import text

from kandev.migrations import alembic_config, upgrade_to_head
from kandev.models import Base
from kandev.platform.database import Database, create_engine
from tests.support import databases


async def schema_state(url: str) -> tuple[str | None, list[object], set[str]]:
    """(revision, differences between migrations and models, tables) of the database at `url`."""
    engine = create_engine(url, pooled=False)
    try:
        async with engine.connect() as conn:
            revision = (await conn.execute(text("SELECT version_num FROM alembic_version"))).scalar()

            def inspect(sync_conn):  # noqa: ANN001, ANN202
                context = MigrationContext.configure(sync_conn, opts={"compare_type": True})
                return compare_metadata(context, Base.metadata), set(sync_conn.dialect.get_table_names(sync_conn))

            diff, tables = await conn.run_sync(inspect)
    finally:
        await engine.dispose()
    return revision, diff, tables


def head_revision() -> str:
    return ScriptDirectory.from_config(alembic_config("sqlite://")).get_current_head()


def assert_at_head(revision: str | None, diff: list[object], tables: set[str]) -> None:
    assert revision == head_revision()
    assert diff == [], f"models and migrations disagree: {diff}"
    assert set(Base.metadata.tables) <= tables


async def test_migrations_upgrade_an_empty_sqlite_database_to_head(tmp_path: Path):
    url = databases.sqlite_url(tmp_path / "nested" / "fresh.db")
    await asyncio.to_thread(upgrade_to_head, url)
    assert_at_head(*await schema_state(url))
    await asyncio.to_thread(upgrade_to_head, url)  # a second run is a no-op
    assert_at_head(*await schema_state(url))


async def test_migrations_upgrade_an_empty_postgresql_database_to_head():
    server = databases.postgres_server_url()
    if server is None:
        pytest.skip("KANDEV_TEST_POSTGRES_URL is not set")
    url = await databases.create_postgres_database(server, prefix="kandev_mig")
    try:
        await asyncio.to_thread(upgrade_to_head, url)
        assert_at_head(*await schema_state(url))
    finally:
        await databases.drop_postgres_database(server, url)


def test_every_revision_id_fits_alembics_version_column():
    """Alembic records the revision in a VARCHAR(32); PostgreSQL refuses a longer id at upgrade time."""
    too_long = [
        script.revision
        for script in ScriptDirectory.from_config(alembic_config("sqlite://")).walk_revisions()
        if len(script.revision) > 32
    ]
    assert too_long == []


async def test_sqlite_runs_in_wal_mode_with_a_busy_timeout(tmp_path: Path):
    db = Database(databases.sqlite_url(tmp_path / "wal.db"))
    try:
        async with db.read() as session:
            mode = (await session.execute(text("PRAGMA journal_mode"))).scalar()
            timeout = (await session.execute(text("PRAGMA busy_timeout"))).scalar()
            foreign_keys = (await session.execute(text("PRAGMA foreign_keys"))).scalar()
    finally:
        await db.dispose()
    assert (mode, timeout, foreign_keys) == ("wal", 30000, 1)
