"""Alembic environment: async engines, batch mode on SQLite so ALTERs work there too."""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy.engine import Connection

import kandev.models  # noqa: F401 - registers every table on the metadata
from kandev.models.base import Base
from kandev.platform.database import create_engine

target_metadata = Base.metadata

# Alembic's default VARCHAR(32) is shorter than some revision ids; SQLite does not enforce widths.
VERSION_NUM_LENGTH = 64


def _widen_version_table(connection: Connection) -> None:
    """Let PostgreSQL record revision ids longer than 32 characters, on new and on existing databases."""
    if connection.dialect.name != "postgresql":
        return
    width = connection.exec_driver_sql(
        "SELECT character_maximum_length FROM information_schema.columns "
        "WHERE table_schema = current_schema() AND table_name = 'alembic_version' AND column_name = 'version_num'"
    ).scalar()
    if width is None:
        connection.exec_driver_sql(
            f"CREATE TABLE IF NOT EXISTS alembic_version (version_num VARCHAR({VERSION_NUM_LENGTH}) NOT NULL, "
            "CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num))"
        )
    elif width < VERSION_NUM_LENGTH:
        connection.exec_driver_sql(
            f"ALTER TABLE alembic_version ALTER COLUMN version_num TYPE VARCHAR({VERSION_NUM_LENGTH})"
        )


def _configure(connection: Connection) -> None:
    _widen_version_table(connection)
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


async def _run_async(url: str) -> None:
    engine = create_engine(url, pooled=False)
    try:
        async with engine.connect() as connection:
            await connection.run_sync(_configure)
            await connection.commit()
    finally:
        await engine.dispose()


def run_migrations_online() -> None:
    url = context.config.get_main_option("sqlalchemy.url")
    assert url, "sqlalchemy.url is not configured"
    connection = context.config.attributes.get("connection")
    if connection is not None:
        _configure(connection)
        return
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(_run_async(url))
    else:  # called from inside a running loop (tests): run on a fresh loop in a thread
        import threading

        error: list[BaseException] = []

        def target() -> None:
            try:
                asyncio.run(_run_async(url))
            except BaseException as exc:  # pragma: no cover - re-raised below
                error.append(exc)

        thread = threading.Thread(target=target)
        thread.start()
        thread.join()
        if error:
            raise error[0]


run_migrations_online()
