"""Suite-wide fixtures: the database and Redis the suite runs on, services and a GraphQL caller.

KANDEV_TEST_DATABASE_URL / KANDEV_TEST_REDIS_URL choose real servers; without them the suite uses
SQLite and an embedded Redis-protocol server, like `kandev serve` does. KANDEV_TEST_STRICT=1
turns every skip into a failure, so CI can't pass by skipping.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from kandev.adapters.rq_dispatch import RqDispatcher
from kandev.domain import outbound
from kandev.domain.access.bootstrap import bootstrap
from kandev.domain.context import Principal
from kandev.domain.services import Services
from kandev.graphql.root import schema
from kandev.graphql.schema.context import Context
from kandev.platform.database import Database
from kandev.platform.event_bus import EventBus
from kandev.platform.settings import Settings
from kandev.wiring import dispatcher, service_context
from tests.support import databases, parallel
from tests.support.factories import settings_for
from tests.support.fake_dns import FakeDns

STRICT = os.environ.get("KANDEV_TEST_STRICT") == "1"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if STRICT and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"skipped under KANDEV_TEST_STRICT=1: {report.longrepr}"


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    return parallel.scheduler(config, log)


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    url = os.environ.get("KANDEV_TEST_REDIS_URL")
    if url:
        yield parallel.worker_redis_url(url)  # parallel workers share the server, not a database
        return
    from kandev.platform.embedded_redis import start_embedded_redis

    server = start_embedded_redis()
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture(scope="session")
def _suite_database(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[databases.SqliteTemplate | databases.PostgresSuiteDatabase]:
    server = databases.suite_database_url()
    if server is None:
        yield databases.SqliteTemplate(tmp_path_factory.mktemp("sqlite-template"))
        return
    suite = databases.PostgresSuiteDatabase(server)
    try:
        yield suite
    finally:
        suite.close()


@pytest.fixture
def database_url(
    _suite_database: databases.SqliteTemplate | databases.PostgresSuiteDatabase, tmp_path: Path
) -> Iterator[str]:
    """A migrated database with no rows: a copy of the SQLite template, or the session's PostgreSQL one emptied."""
    yield _suite_database.fresh(tmp_path)
    _suite_database.check_schema_kept()


@pytest.fixture
def settings(database_url: str, redis_url: str, tmp_path: Path) -> Settings:
    return settings_for(database_url, redis_url, tmp_path)


@pytest.fixture
async def db(settings: Settings) -> AsyncIterator[Database]:
    database = Database(settings.resolved_database_url())
    yield database
    await database.dispose()


@pytest.fixture
async def bus(redis_url: str) -> AsyncIterator[EventBus]:
    import redis.asyncio as aioredis

    event_bus = EventBus(aioredis.from_url(redis_url))
    yield event_bus
    await event_bus.close()


@pytest.fixture
async def principal(db: Database, settings: Settings) -> Principal:
    return await bootstrap(db, settings)


@pytest.fixture
def jobs(redis_url: str, bus: EventBus, settings: Settings, db: Database) -> Iterator[RqDispatcher]:
    jobs = dispatcher(settings, db, bus)
    yield jobs
    jobs.close()


@pytest.fixture
def services(db: Database, bus: EventBus, principal: Principal, settings: Settings, jobs: RqDispatcher) -> Services:
    return Services(service_context(db, bus, jobs, settings, principal))


class GraphQLCaller:
    """Runs operations through schema.execute with a fresh context, like one HTTP request."""

    def __init__(self, services: Services) -> None:
        self.services = services

    async def __call__(self, query: str, **variables: Any) -> dict[str, Any]:
        result = await schema.execute(
            query, variable_values=variables, context_value=Context.for_services(self.services)
        )
        assert result.errors is None, result.errors
        assert result.data is not None
        return result.data

    async def raw(self, query: str, **variables: Any) -> Any:
        return await schema.execute(query, variable_values=variables, context_value=Context.for_services(self.services))


@pytest.fixture
def gql(services: Services) -> GraphQLCaller:
    return GraphQLCaller(services)


@pytest.fixture
async def workspace_id(services: Services) -> str:
    return (await services.workspaces.list())[0].id


@pytest.fixture(autouse=True)
def dns(monkeypatch: pytest.MonkeyPatch) -> FakeDns:
    """The outbound rule's resolver in this process: the test's, never the system's."""
    fake = FakeDns()
    monkeypatch.setattr(outbound, "system_resolver", fake)
    return fake
