"""The board, the sidebar and the transcript: the web client's Tasks and Session operations over GraphQL
against plain JSON endpoints returning the same rows from the same process (the comparators), on a
workspace of 10,000 tasks and a transcript of 200 messages.

Everything runs in one uvicorn server in this process; the comparators read the same rows with the same
services and serialize them as JSON. Besides wall time, this process's CPU time is reported, which other
load on the machine disturbs less. Uses KANDEV_BENCH_DATABASE_URL / KANDEV_BENCH_REDIS_URL when set, else
SQLite and the embedded Redis-protocol server.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import uvicorn
from sqlalchemy import event, select
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from bench.backends import backends
from bench.foundation import percentile
from kandev.app import create_app
from kandev.models import Task
from kandev.platform.heap import settle_heap
from kandev.platform.settings import Settings
from kandev.wiring import SYSTEM
from tests.support.board import add_tasks, add_transcript
from tests.support.client_ops import client_operations
from tests.support.server import free_port

TASKS = 10_000
MESSAGES = 200
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


def summary(wall: list[float], cpu: list[float]) -> dict[str, float]:
    return {
        "median_ms": round(statistics.median(wall) * 1000, 3),
        "p95_ms": round(percentile(wall, 0.95) * 1000, 3),
        "cpu_median_ms": round(statistics.median(cpu) * 1000, 3),
        "cpu_p95_ms": round(percentile(cpu, 0.95) * 1000, 3),
    }


async def timed(call: Any) -> tuple[float, float]:
    began, began_cpu = time.perf_counter(), time.process_time()
    await call()
    return time.perf_counter() - began, time.process_time() - began_cpu


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
        # The cards' activity, as the client's page asks for it: the same rows, the same answers.
        activity = await services.lookups.task_activity([row.id for row in rows])
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
                "activity": {
                    "agentProfileId": did.agent_profile_id,
                    "agentName": did.agent_name,
                    "lastActivityAt": did.last_activity_at.isoformat() if did.last_activity_at else None,
                    "preview": did.preview,
                    "hasRun": did.has_run,
                    "lastTurnFailed": did.last_turn_failed,
                    "needsAnswer": did.needs_answer,
                },
            }
            for row, action, did in zip(rows, pending, activity, strict=True)
        ]
        return JSONResponse({"nodes": nodes})

    return Route("/bench/tasks", tasks)


def plain_transcript(app: Any) -> Route:
    async def session(request: Request) -> JSONResponse:
        services = app.state.kandev.services(SYSTEM)
        session_id = request.query_params["id"]
        row = await services.sessions.get(session_id)  # the one visibility check; then what the view shows
        [turns] = await services.lookups.turns_by_session([session_id])
        [queued] = await services.lookups.queued_prompts_by_session([session_id])
        page = await services.lookups.messages(session_id, first=500)
        return JSONResponse(
            {
                "id": row.id,
                "state": str(row.state),
                "turns": [{"id": t.id, "seq": t.seq, "state": str(t.state)} for t in turns],
                "queued": [{"id": q.id, "text": q.text} for q in queued],
                "messages": [
                    {
                        "id": m.id,
                        "kind": str(m.kind),
                        "text": m.text,
                        "data": m.data,
                        "turnId": m.turn_id,
                        "seq": m.seq,
                        "createdAt": m.created_at.isoformat(),
                        "updatedAt": m.updated_at.isoformat(),
                    }
                    for m in page.messages
                ],
            }
        )

    return Route("/bench/transcript", session)


async def compare(address: str, workspace_id: str, engine: Any, first: int) -> dict[str, Any]:
    operation = client_operations()["TASKS"]
    variables = {"w": workspace_id, "step": None, "first": first, "after": None}
    statements: list[str] = []
    async with httpx.AsyncClient(base_url=f"http://{address}", timeout=60) as http:

        async def graphql() -> None:
            answer = (await http.post("/graphql", json={"query": operation, "variables": variables})).json()
            assert len(answer["data"]["tasks"]["nodes"]) == first, answer

        async def plain() -> None:
            answer = (await http.get("/bench/tasks", params={"w": workspace_id, "first": first})).json()
            assert len(answer["nodes"]) == first

        for _ in range(3):  # warm-up
            await graphql()
            await plain()

        def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
            statements.append(statement)

        event.listen(engine.sync_engine, "before_cursor_execute", record)
        await graphql()
        event.remove(engine.sync_engine, "before_cursor_execute", record)
        return {"page": first, "sql_statements": len(statements), **await side_by_side(graphql, plain)}


async def side_by_side(graphql: Any, plain: Any) -> dict[str, Any]:
    """RUNS of each, interleaved so both see the same machine."""
    runs: dict[str, list[tuple[float, float]]] = {"graphql": [], "plain_json": []}
    for _ in range(RUNS):
        runs["graphql"].append(await timed(graphql))
        runs["plain_json"].append(await timed(plain))
    g, p = (summary([w for w, _ in runs[k]], [c for _, c in runs[k]]) for k in ("graphql", "plain_json"))
    return {
        "graphql": g,
        "plain_json": p,
        "ratio_p95": round(g["p95_ms"] / p["p95_ms"], 2),
        "ratio_median": round(g["median_ms"] / p["median_ms"], 2),
        "cpu_ratio_median": round(g["cpu_median_ms"] / max(p["cpu_median_ms"], 0.001), 2),
    }


async def transcript(address: str, state: Any, session_id: str) -> dict[str, Any]:
    """The web client's Session operation against the same session, turns, messages and queue as JSON."""
    operation = client_operations()["SESSION"]
    statements: list[str] = []
    async with httpx.AsyncClient(base_url=f"http://{address}", timeout=60) as http:

        async def graphql() -> None:
            variables = {"id": session_id, "page": MESSAGES}
            answer = (await http.post("/graphql", json={"query": operation, "variables": variables})).json()
            assert len(answer["data"]["session"]["messages"]["nodes"]) == MESSAGES, answer

        async def plain() -> None:
            answer = (await http.get("/bench/transcript", params={"id": session_id})).json()
            assert len(answer["messages"]) == MESSAGES

        for _ in range(3):
            await graphql()
            await plain()

        def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
            if not statement.lstrip().upper().startswith(("BEGIN", "PRAGMA")):
                statements.append(statement)

        event.listen(state.db.engine.sync_engine, "before_cursor_execute", record)
        await graphql()
        event.remove(state.db.engine.sync_engine, "before_cursor_execute", record)
        return {"messages": MESSAGES, "sql_statements": len(statements), **await side_by_side(graphql, plain)}


@asynccontextmanager
async def served(app: Any) -> AsyncIterator[str]:
    """The app on a free loopback port, in this process, for the block: its address."""
    settle_heap()  # as `kandev serve` does once its app is built
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    serving = asyncio.create_task(server.serve())
    try:
        async with asyncio.timeout(30):
            while not server.started:
                await asyncio.sleep(0.02)
        yield f"127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await asyncio.wait_for(serving, timeout=30)


async def measure(settings: Settings) -> dict[str, Any]:
    app = create_app(settings)
    app.router.routes.insert(0, plain_endpoint(app))
    app.router.routes.insert(0, plain_transcript(app))
    async with served(app) as address:
        state = app.state.kandev
        workspace_id = (await state.services(SYSTEM).workspaces.list())[0].id
        task_ids = await add_tasks(state.db, workspace_id, TASKS)
        session_id = await add_transcript(state.db, task_ids[0], MESSAGES)
        if state.db.engine.dialect.name == "postgresql":
            # As autovacuum would within a minute: without statistics on the freshly seeded tables the planner
            # picks scans per row for the cards' correlated reads (measured: a 500-task page took 350 ms, not 90).
            async with state.db.engine.connect() as conn:
                await conn.execution_options(isolation_level="AUTOCOMMIT")
                await conn.exec_driver_sql("ANALYZE")
        pages = [await compare(address, workspace_id, state.db.engine, first) for first in (50, 500)]
        session = await transcript(address, state, session_id)
    return {
        "tasks": TASKS,
        "pages": pages,
        "statements_constant": len({p["sql_statements"] for p in pages}) == 1,
        "transcript": session,
        "target_ratio_p95": TARGET_RATIO_P95,
    }


async def run() -> dict[str, Any]:
    with backends() as where:
        settings = Settings(database_url=where.database_url, redis_url=where.redis_url, data_dir=where.folder / "data")
        result = await measure(settings)
    return {"database": where.database, **result}


if __name__ == "__main__":
    import json

    print(json.dumps(asyncio.run(run()), indent=2))
