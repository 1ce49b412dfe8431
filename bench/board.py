"""The board over many tasks: the web client's TASKS page (500 tasks) through the ASGI app in process,
against a plain JSON endpoint answering the same rows from the same process; and the statements of the
web client's SESSION (transcript) query and its time.

SQLite and the embedded Redis-protocol server, like `kandev serve`; KANDEV_BENCH_DATABASE_URL /
KANDEV_BENCH_REDIS_URL choose others.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import event
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from bench.foundation import percentile
from kandev.app import create_app
from kandev.config import Settings
from kandev.domain.tasks.service import TaskFilter
from kandev.migrations import upgrade_to_head
from kandev.state import AppState
from tests.support.board import add_tasks, add_transcript
from tests.support.client_ops import client_operations

TASKS = 1000
RUNS = 30
WARM_UP = 5
MESSAGES = 200


def summary(wall: list[float], cpu: list[float]) -> dict[str, float]:
    """Wall time, and this process's CPU time (all its threads), which other load on the machine disturbs less."""
    return {
        "p50_ms": round(statistics.median(wall) * 1000, 2),
        "p95_ms": round(percentile(wall, 0.95) * 1000, 2),
        "cpu_p50_ms": round(statistics.median(cpu) * 1000, 2),
        "cpu_p95_ms": round(percentile(cpu, 0.95) * 1000, 2),
    }


async def timed(call: Callable[[], Awaitable[None]]) -> dict[str, float]:
    for _ in range(WARM_UP):
        await call()
    wall, cpu = [], []
    for _ in range(RUNS):
        start, start_cpu = time.perf_counter(), time.process_time()
        await call()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return summary(wall, cpu)


def plain_tasks(state: AppState) -> Callable[[Request], Awaitable[JSONResponse]]:
    """The TASKS page's rows as a hand-written JSON endpoint would answer them: same reads, no GraphQL."""

    async def endpoint(request: Request) -> JSONResponse:
        services = state.services(state.local_principal)
        page = await services.tasks.list(request.query_params["w"], TaskFilter(archived=False), first=500, count=False)
        pending = await services.lookups.pending_actions([r.id for r in page.records])
        nodes = [
            {
                "id": r.id,
                "title": r.title,
                "state": r.state,
                "autopilot": r.autopilot,
                "parentId": r.parent_id,
                "pendingAction": str(action),
                "workflowId": r.workflow_id,
                "workflowStepId": r.workflow_step_id,
                "externalId": r.external_id,
                "archivedAt": r.archived_at.isoformat() if r.archived_at else None,
                "createdAt": r.created_at.isoformat(),
                "updatedAt": r.updated_at.isoformat(),
                "blockReason": r.block_reason,
            }
            for r, action in zip(page.records, pending, strict=True)
        ]
        end = page.cursors[-1] if page.cursors else None
        return JSONResponse(
            {"data": {"tasks": {"nodes": nodes, "pageInfo": {"hasNextPage": page.has_next_page, "endCursor": end}}}}
        )

    return endpoint


def count_statements(state: AppState) -> tuple[list[str], Callable[[], None]]:
    statements: list[str] = []

    def on_execute(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if not statement.lstrip().upper().startswith(("BEGIN", "PRAGMA")):
            statements.append(statement)

    engine = state.db.engine.sync_engine
    event.listen(engine, "before_cursor_execute", on_execute)
    return statements, lambda: event.remove(engine, "before_cursor_execute", on_execute)


async def measure(settings: Settings) -> dict[str, Any]:
    ops = client_operations()
    state = await AppState.open(settings)
    app = create_app(settings)
    app.state.kandev = state
    app.router.routes.insert(0, Route("/plain/tasks", plain_tasks(state)))
    try:
        services = state.services(state.local_principal)
        workspace_id = (await services.workspaces.list())[0].id
        task_ids = await add_tasks(state.db, workspace_id, TASKS)
        session_id = await add_transcript(state.db, task_ids[0], MESSAGES)
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1", timeout=60
        ) as http:

            async def graphql(query: str, **variables: Any) -> dict[str, Any]:
                response = (await http.post("/graphql", json={"query": query, "variables": variables})).json()
                assert "errors" not in response, response
                return response["data"]

            async def tasks_page() -> None:
                assert len((await graphql(ops["TASKS"], w=workspace_id))["tasks"]["nodes"]) == 500

            async def plain_page() -> None:
                response = await http.get("/plain/tasks", params={"w": workspace_id})
                assert len(response.json()["data"]["tasks"]["nodes"]) == 500

            statements, stop = count_statements(state)
            await tasks_page()
            page_statements = len(statements)
            statements.clear()
            transcript = await graphql(ops["SESSION"], id=session_id)
            assert len(transcript["session"]["messages"]["nodes"]) == MESSAGES
            transcript_statements = len(statements)
            stop()
            graphql_page = await timed(tasks_page)
            plain = await timed(plain_page)

            async def transcript_once() -> None:
                assert len((await graphql(ops["SESSION"], id=session_id))["session"]["messages"]["nodes"]) == MESSAGES

            transcript_time = await timed(transcript_once)
    finally:
        await state.close()
    return {
        "database": settings.resolved_database_url().split(":", 1)[0],
        "tasks_page": {"tasks": 500, "sql_statements": page_statements, "graphql": graphql_page, "plain_json": plain},
        "graphql_over_plain_p50": round(graphql_page["p50_ms"] / plain["p50_ms"], 2),
        "transcript": {"messages": MESSAGES, "sql_statements": transcript_statements, "graphql": transcript_time},
    }


async def run() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        redis_url = os.environ.get("KANDEV_BENCH_REDIS_URL")
        server = None
        if not redis_url:
            from kandev.embedded import start_embedded_redis

            server = start_embedded_redis()
            redis_url = server.url
        database_url = os.environ.get("KANDEV_BENCH_DATABASE_URL") or f"sqlite+aiosqlite:///{Path(folder) / 'bench.db'}"
        upgrade_to_head(database_url)
        settings = Settings(database_url=database_url, redis_url=redis_url, data_dir=Path(folder) / "data")
        try:
            return await measure(settings)
        finally:
            if server is not None:
                server.stop()


if __name__ == "__main__":
    print(json.dumps(asyncio.run(run()), indent=2))
