"""The REST seam, on a tiny Starlette app whose routes go through `endpoint`: incidents become a masked, logged 500."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from kandev.domain.errors import NotFoundError
from kandev.edge.rest.common import endpoint
from kandev.wiring import AppState

LEAK = "connection to postgres://kandev:hunter2@db failed"


async def broken(request: Request, services: Any) -> Response:
    raise RuntimeError(LEAK)


async def missing(request: Request, services: Any) -> Response:
    raise NotFoundError("Task", request.path_params["task_id"])


async def whoami(request: Request, services: Any) -> Response:
    return JSONResponse({"login": services.principal.login})


@pytest.fixture
async def tiny(settings, db, bus, redis_url, principal, jobs) -> AsyncIterator[httpx.AsyncClient]:
    import redis.asyncio as aioredis

    app = Starlette(
        routes=[
            Route("/broken", endpoint(broken), methods=["POST"]),
            Route("/tasks/{task_id}", endpoint(missing)),
            Route("/me", endpoint(whoami)),
        ]
    )
    redis = aioredis.from_url(redis_url)
    app.state.kandev = AppState(settings=settings, db=db, bus=bus, redis=redis, local_principal=principal, jobs=jobs)
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as client:
            yield client
    finally:
        await redis.aclose()


async def test_an_unexpected_exception_in_a_handler_is_a_500_with_code_internal_and_no_exception_text(tiny, caplog):
    with caplog.at_level(logging.ERROR, logger="kandev.edge.rest"):
        response = await tiny.post("/broken", json={})
    assert response.status_code == 500
    body = response.json()
    assert body["code"] == "INTERNAL"
    assert "hunter2" not in response.text and "RuntimeError" not in response.text
    # The incident is kept for the operator: logged with its traceback, naming the request.
    [record] = [r for r in caplog.records if r.name == "kandev.edge.rest"]
    assert record.exc_info is not None and record.exc_info[0] is RuntimeError
    assert "/broken" in record.getMessage()


async def test_a_domain_error_in_a_handler_is_its_status_and_code_and_is_not_logged(tiny, caplog):
    with caplog.at_level(logging.ERROR, logger="kandev.edge.rest"):
        response = await tiny.get("/tasks/t-404")
    assert response.status_code == 404
    assert response.json()["code"] == "NOT_FOUND"
    assert not [r for r in caplog.records if r.name == "kandev.edge.rest"]


async def test_a_handler_runs_with_the_callers_services(tiny, principal):
    response = await tiny.get("/me")
    assert response.status_code == 200 and response.json() == {"login": principal.login}
