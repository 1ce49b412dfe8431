"""Alembic environment: async engines, batch mode on SQLite so ALTERs work there too."""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy.engine import Connection

import kandev.models  # noqa: F401 - registers every table on the metadata
from kandev.models.base import Base
from kandev.platform.database import create_engine

target_metadata = Base.metadata


def _configure(connection: Connection) -> None:
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
