"""/healthz: 503 when the database or Redis is unreachable or, on the embedded default, no embedded worker
is alive; elsewhere workers and queue depth are reported without making it 503."""

from __future__ import annotations

import asyncio
import functools
import logging
import sys
from pathlib import Path

import httpx
import pytest

from kandev.migrations import upgrade_to_head
from kandev.platform.embedded_default import EmbeddedDefault
from kandev.platform.embedded_redis import start_embedded_redis
from kandev.platform.job_queues import TURNS, enqueue
from kandev.platform.redis_client import sync_redis
from kandev.platform.settings import Settings
from kandev.platform.supervisor import Supervisor, spawn
from tests.support.server import last_app_state, running_server
from tests.support.workers import running_worker


async def get_health(address: str) -> tuple[int, dict]:
    async with httpx.AsyncClient(timeout=10) as client:
        response = await client.get(f"http://{address}/healthz")
    return response.status_code, response.json()


async def wait_health(address: str, check, timeout: float = 30) -> dict:
    """Poll /healthz (bounded) until `check(status, body)` holds; returns the body."""
    async with asyncio.timeout(timeout):
        while True:
            status, body = await get_health(address)
            if check(status, body):
                return body
            await asyncio.sleep(0.1)


async def test_healthz_answers_503_naming_redis_when_redis_is_unreachable(settings: Settings):
    server = start_embedded_redis()
    try:
        own = settings.model_copy(update={"redis_url": server.url})
        async with running_server(own) as address:
            status, body = await get_health(address)
            assert (status, body["redis"]) == (200, "ok")
            server.stop()
            status, body = await get_health(address)
            assert status == 503
            assert body["status"] == "degraded" and body["database"] == "ok"
            assert body["redis"].startswith("error: ")
    finally:
        server.stop()


async def test_healthz_answers_503_naming_the_database_when_it_is_unreachable(settings: Settings, tmp_path: Path):
    folder = tmp_path / "db"
    folder.mkdir()
    url = f"sqlite+aiosqlite:///{folder / 'kandev.db'}"
    await asyncio.to_thread(upgrade_to_head, url)
    own = settings.model_copy(update={"database_url": url})
    async with running_server(own) as address:
        status, body = await get_health(address)
        assert (status, body["database"]) == (200, "ok")
        # New connections fail from now on: the file's folder is gone.
        await last_app_state().db.engine.dispose()
        folder.rename(tmp_path / "moved")
        status, body = await get_health(address)
        assert status == 503
        assert body["database"].startswith("error: ") and body["redis"] == "ok"


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def pool_of(settings: Settings, supervisor: Supervisor, code: str) -> EmbeddedDefault:
    """An embedded default with one worker slot, run by `code` (real processes, not `kandev worker`)."""
    own = settings.model_copy(update={"workers": 1, "worker_name": "hz"})
    pool = EmbeddedDefault(own, supervisor)
    supervisor.add(pool.workers[0], functools.partial(spawn, python(code)))
    return pool


async def test_healthz_on_the_embedded_default_answers_503_while_no_embedded_worker_is_alive(
    settings: Settings, caplog: pytest.LogCaptureFixture
):
    caplog.set_level(logging.INFO, "kandev.platform.supervisor")
    # A long backoff: the dead worker stays dead for the whole test.
    with Supervisor(backoff=600, max_backoff=600) as supervisor:
        pool = pool_of(settings, supervisor, "import sys; sys.exit(3)")
        async with running_server(settings, embedded=pool) as address:
            async with asyncio.timeout(10):
                while "exited with code 3" not in caplog.text:
                    supervisor.check()
                    await asyncio.sleep(0.02)
            status, body = await get_health(address)
            assert status == 503
            assert body["status"] == "degraded"
            assert (body["database"], body["redis"]) == ("ok", "ok")
            assert body["embedded"] == {"workers": 0, "configured_workers": 1}
    assert "hz-w1 (pid" in caplog.text and "restarting it in 600.0s" in caplog.text


async def test_healthz_on_the_embedded_default_is_200_while_an_embedded_worker_is_alive(settings: Settings):
    with Supervisor() as supervisor:
        pool = pool_of(settings, supervisor, "import time; time.sleep(60)")
        async with running_server(settings, embedded=pool) as address:
            status, body = await get_health(address)
            assert status == 200
            assert body["embedded"] == {"workers": 1, "configured_workers": 1}


@pytest.mark.slow
async def test_healthz_without_embedded_workers_reports_live_workers_and_queue_depth_but_stays_200(settings: Settings):
    server = start_embedded_redis()  # its own Redis: no other test's worker registrations
    try:
        own = settings.model_copy(update={"redis_url": server.url})
        async with running_server(own) as address:
            status, body = await get_health(address)
            assert status == 200 and body["status"] == "ok"
            assert body["workers"] == 0 and "embedded" not in body
            connection = sync_redis(server.url)
            enqueue(TURNS, "kandev.jobs.turns.run_turn", "no-such-session", job_timeout=60, connection=connection)
            connection.close()
            status, body = await get_health(address)
            assert status == 200 and body["queued"][TURNS] == 1
            with running_worker(own):
                body = await wait_health(address, lambda s, b: b["workers"] == 1, timeout=60)
                assert body["status"] == "ok"
                assert body["queued"] == {"kandev-turns": 0, "kandev-default": 0, "kandev-automations": 0}
    finally:
        server.stop()
