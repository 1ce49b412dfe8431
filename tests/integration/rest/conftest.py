"""The HTTP app in process (httpx's ASGI transport) over the test's database, Redis and services."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest

from kandev.app import create_app
from kandev.platform.settings import Settings
from kandev.wiring import AppState


@asynccontextmanager
async def rest_client(
    settings: Settings, db: Any, bus: Any, redis_url: str, principal: Any, jobs: Any
) -> AsyncIterator[httpx.AsyncClient]:
    import redis.asyncio as aioredis

    app = create_app(settings)
    redis = aioredis.from_url(redis_url)
    app.state.kandev = AppState(settings=settings, db=db, bus=bus, redis=redis, local_principal=principal, jobs=jobs)
    try:
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1", timeout=60
        ) as client:
            yield client
    finally:
        await redis.aclose()


@pytest.fixture
async def http(settings, db, bus, redis_url, principal, jobs) -> AsyncIterator[httpx.AsyncClient]:
    async with rest_client(settings, db, bus, redis_url, principal, jobs) as client:
        yield client
