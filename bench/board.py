"""The board and the sidebar: the web client's Tasks operation over GraphQL against a plain JSON endpoint
returning the same rows from the same process (the comparator), on a workspace of 10,000 tasks.

Both run in one uvicorn server in this process; the comparator reads the same columns with Core and the
pending actions with the same one-statement lookup, then serializes them as JSON. Uses
KANDEV_BENCH_DATABASE_URL / KANDEV_BENCH_REDIS_URL when set, else SQLite and the embedded Redis server.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from sqlalchemy import event, select
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from bench.foundation import summary
from kandev.app import create_app
from kandev.config import Settings
from kandev.heap import settle_heap
from kandev.migrations import upgrade_to_head
from kandev.models import Task
from kandev.state import SYSTEM
from tests.integration.test_sidebar_queries import add_tasks
from tests.support.client_ops import client_operations
from tests.support.server import free_port

TASKS = 10_000
RUNS = 30
TARGET_RATIO_P95 = 2.0
COLUMNS = [
    Task.id,
    Task.title,
    Task.state,
    Task.autopilot,
    Task.parent_id,
    Task.workflow_id,
    Task.workflow_step_id,
    Task.external_id,
    Task.archived_at,
    Task.created_at,
    Task.updated_at,
    Task.block_reason,
]


def plain_endpoint(app: Any) -> Route:
    async def tasks(request: Request) -> JSONResponse:
        state = app.state.kandev
        services = state.services(SYSTEM)
        first = int(request.query_params["first"])
        query = (
            select(*COLUMNS)
            .where(Task.workspace_id == request.query_params["w"], Task.archived_at.is_(None))
            .order_by(Task.created_at.desc(), Task.id.desc())
            .limit(first + 1)
        )
        async with state.db.read() as db:
            rows = (await db.execute(query)).all()[:first]
        pending = await services.lookups.pending_actions([row.id for row in rows])
        nodes = [
            {
                "id": row.id,
                "title": row.title,
                "state": str(row.state).upper(),
                "autopilot": row.autopilot,
                "parentId": row.parent_id,
                "pendingAction": action.value,
                "workflowId": row.workflow_id,
                "workflowStepId": row.workflow_step_id,
                "externalId": row.external_id,
                "archivedAt": row.archived_at.isoformat() if row.archived_at else None,
                "createdAt": row.created_at.isoformat(),
                "updatedAt": row.updated_at.isoformat(),
                "blockReason": row.block_reason,
            }
            for row, action in zip(rows, pending, strict=True)
        ]
        return JSONResponse({"nodes": nodes})

    return Route("/bench/tasks", tasks)


async def compare(address: str, workspace_id: str, engine: Any, first: int) -> dict[str, Any]:
    operation = client_operations()["TASKS"]
    variables = {"w": workspace_id, "step": None, "first": first, "after": None}
    statements: list[str] = []
    async with httpx.AsyncClient(base_url=f"http://{address}", timeout=60) as http:

        async def graphql() -> float:
            began = time.perf_counter()
            answer = (await http.post("/graphql", json={"query": operation, "variables": variables})).json()
            assert len(answer["data"]["tasks"]["nodes"]) == first, answer
            return time.perf_counter() - began

        async def plain() -> float:
            began = time.perf_counter()
            answer = (await http.get("/bench/tasks", params={"w": workspace_id, "first": first})).json()
            assert len(answer["nodes"]) == first
            return time.perf_counter() - began

        for _ in range(3):  # warm-up
            await graphql()
            await plain()

        def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
            statements.append(statement)

        event.listen(engine.sync_engine, "before_cursor_execute", record)
        await graphql()
        event.remove(engine.sync_engine, "before_cursor_execute", record)
        graphql_times, plain_times = [], []
        for _ in range(RUNS):  # interleaved, so both see the same machine
            graphql_times.append(await graphql())
            plain_times.append(await plain())
    g, p = summary(graphql_times), summary(plain_times)
    return {
        "page": first,
        "sql_statements": len(statements),
        "graphql": g,
        "plain_json": p,
        "ratio_p95": round(g["p95_ms"] / p["p95_ms"], 2),
        "ratio_median": round(statistics.median(graphql_times) / statistics.median(plain_times), 2),
    }


async def measure(settings: Settings) -> dict[str, Any]:
    app = create_app(settings)
    app.router.routes.insert(0, plain_endpoint(app))
    settle_heap()  # as `kandev serve` does once its app is built
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    serving = asyncio.create_task(server.serve())
    try:
        async with asyncio.timeout(30):
            while not server.started:
                await asyncio.sleep(0.02)
        state = app.state.kandev
        workspace_id = (await state.services(SYSTEM).workspaces.list())[0].id
        await add_tasks(state.db, workspace_id, TASKS)
        address = f"127.0.0.1:{port}"
        pages = [await compare(address, workspace_id, state.db.engine, first) for first in (50, 500)]
    finally:
        server.should_exit = True
        await asyncio.wait_for(serving, timeout=30)
    return {
        "tasks": TASKS,
        "pages": pages,
        "statements_constant": len({p["sql_statements"] for p in pages}) == 1,
        "target_ratio_p95": TARGET_RATIO_P95,
    }


async def run() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        redis_url = os.environ.get("KANDEV_BENCH_REDIS_URL")
        embedded = None
        if not redis_url:
            from kandev.embedded import start_embedded_redis

            embedded = start_embedded_redis()
            redis_url = embedded.url
        database_url = os.environ.get("KANDEV_BENCH_DATABASE_URL") or f"sqlite+aiosqlite:///{folder / 'bench.db'}"
        upgrade_to_head(database_url)
        settings = Settings(database_url=database_url, redis_url=redis_url, data_dir=folder / "data")
        try:
            result = await measure(settings)
        finally:
            if embedded is not None:
                embedded.stop()
    return {"database": database_url.split(":", 1)[0], **result}


if __name__ == "__main__":
    import json

    print(json.dumps(asyncio.run(run()), indent=2))
