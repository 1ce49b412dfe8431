"""A worker keeps its database connections pooled for its whole life: when PostgreSQL drops them (a restart,
an administrator, an idle timeout), the worker replaces them and the session's next turn runs."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy import text

from kandev.domain.tasks.service import CreateTask
from kandev.platform.database import Database, create_engine
from kandev.platform.settings import Settings
from tests.support.watch import watching
from tests.support.workers import running_worker

pytestmark = [pytest.mark.reliability, pytest.mark.slow]

OTHER_CLIENTS = """SELECT pid FROM pg_stat_activity
    WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'"""


@pytest.fixture
async def db(settings: Settings) -> AsyncIterator[Database]:
    # This test drops its own connections too: checked at every checkout, as a worker's are.
    database = Database(settings.resolved_database_url(), ping_after=0.0)
    yield database
    await database.dispose()


async def _drop_every_other_connection(url: str) -> int:
    engine = create_engine(url, pooled=False)
    try:
        async with engine.connect() as connection:
            pids = list(await connection.scalars(text(OTHER_CLIENTS)))
            for pid in pids:
                await connection.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
        return len(pids)
    finally:
        await engine.dispose()


async def test_connections_the_database_dropped_are_replaced_and_the_next_turns_run(
    services, settings, bus, db, workspace_id
):
    assert not db.is_sqlite, "a PostgreSQL pass test"
    task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Dropped"))).task
    with running_worker(settings):
        session_id = (await services.sessions.start_task(task.id, "/say first", None)).session.id
        async with watching(bus, db, session_id) as watch:
            await watch.turns_ended(1, timeout=60)
            for turn in (2, 3):  # at once after the turn before: the worker's connections were in use just now
                assert await _drop_every_other_connection(settings.resolved_database_url()) > 0
                await services.sessions.send_message(task.id, f"/say reply {turn}")
                await watch.message("AGENT", f"reply {turn}")
                turns = await watch.turns_ended(turn, timeout=60)
    assert [t.state for t in turns] == ["COMPLETED"] * 3
