"""Foundation figures: commit-to-subscriber latency of taskEvents, and the sidebar query's cost.

Uses KANDEV_BENCH_DATABASE_URL / KANDEV_BENCH_REDIS_URL when set, else SQLite and the embedded
Redis-protocol server, like `kandev serve`.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from typing import Any

import httpx
from sqlalchemy import event, text

from bench.backends import backends
from kandev.platform.settings import Settings
from tests.support.graphql_ws import GraphQLWebSocket
from tests.support.server import running_server

EVENTS = 100
SIDEBAR = """query($ws: ID!, $n: Int!) { tasks(workspaceId: $ws, first: $n) { totalCount nodes {
  id title state autopilot parentId pendingAction workflowStepId workflowStep { id name } sessions { id state } } } }"""
RAW_SIDEBAR_SQL = [
    "SELECT * FROM tasks WHERE workspace_id = :ws AND deleted_at IS NULL ORDER BY created_at DESC, id DESC LIMIT :n",
    "SELECT * FROM workflow_steps WHERE workflow_id IN"
    " (SELECT DISTINCT workflow_id FROM tasks WHERE workspace_id = :ws)",
    "SELECT * FROM sessions WHERE task_id IN (SELECT id FROM tasks WHERE workspace_id = :ws)",
]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def summary(values: list[float]) -> dict[str, float]:
    return {
        "median_ms": round(statistics.median(values) * 1000, 3),
        "p95_ms": round(percentile(values, 0.95) * 1000, 3),
        "p99_ms": round(percentile(values, 0.99) * 1000, 3),
    }


async def event_latency(settings: Settings, address: str, app_db: Any) -> dict[str, Any]:
    commits: list[float] = []
    event.listen(app_db.engine.sync_engine, "commit", lambda conn: commits.append(time.perf_counter()))
    async with httpx.AsyncClient(base_url=f"http://{address}", timeout=10) as http:
        ws_id = (await http.post("/graphql", json={"query": "{ workspaces { id } }"})).json()["data"]["workspaces"][0][
            "id"
        ]
        socket = await GraphQLWebSocket.open(address)
        await socket.listen("subscription($ws: ID!) { taskEvents(workspaceId: $ws) { kind task { id } } }", ws=ws_id)
        latencies: list[float] = []
        mutation = "mutation($i: CreateTaskInput!) { createTask(input: $i) { __typename } }"
        for i in range(EVENTS):
            commits.clear()
            receive = asyncio.create_task(socket.next_message())
            await http.post(
                "/graphql",
                json={"query": mutation, "variables": {"i": {"workspaceId": ws_id, "title": f"t{i}"}}},
            )
            await asyncio.wait_for(receive, timeout=10)
            received = time.perf_counter()
            latencies.append(received - commits[-1])
        await socket.close()
    return {"events": EVENTS, **summary(latencies)}


async def sidebar_cost(address: str, app_db: Any, ws_id: str, count: int) -> dict[str, Any]:
    statements: list[str] = []

    def on_execute(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if not statement.lstrip().upper().startswith(("BEGIN", "PRAGMA")):
            statements.append(statement)

    async with httpx.AsyncClient(base_url=f"http://{address}", timeout=30) as http:

        async def graphql_once() -> float:
            start = time.perf_counter()
            response = await http.post("/graphql", json={"query": SIDEBAR, "variables": {"ws": ws_id, "n": count}})
            assert len(response.json()["data"]["tasks"]["nodes"]) == count
            return time.perf_counter() - start

        event.listen(app_db.engine.sync_engine, "before_cursor_execute", on_execute)
        await graphql_once()
        event.remove(app_db.engine.sync_engine, "before_cursor_execute", on_execute)
        graphql_times = [await graphql_once() for _ in range(20)]

    async def raw_once() -> float:
        start = time.perf_counter()
        async with app_db.read() as session:
            for sql in RAW_SIDEBAR_SQL:
                (await session.execute(text(sql), {"ws": ws_id, "n": count})).all()
        return time.perf_counter() - start

    raw_times = [await raw_once() for _ in range(20)]
    return {
        "tasks": count,
        "sql_statements": len(statements),
        "graphql": summary(graphql_times),
        "raw_sql": summary(raw_times),
        "graphql_over_raw_sql_median": round(statistics.median(graphql_times) / statistics.median(raw_times), 2),
    }


async def add_tasks(address: str, ws_id: str, count: int) -> None:
    mutation = "mutation($i: CreateTaskInput!) { createTask(input: $i) { __typename } }"
    async with httpx.AsyncClient(base_url=f"http://{address}", timeout=30) as http:
        for i in range(count):
            await http.post(
                "/graphql",
                json={"query": mutation, "variables": {"i": {"workspaceId": ws_id, "title": f"s{i}"}}},
            )


async def run() -> dict[str, Any]:
    with backends() as where:
        settings = Settings(database_url=where.database_url, redis_url=where.redis_url, data_dir=where.folder / "data")
        async with running_server(settings) as address:
            app_db = _server_db()
            latency = await event_latency(settings, address, app_db)
            ws_id = await _workspace(address)
            sidebar = {}
            # EVENTS tasks exist already; top up to 1,000, of which the large page shows the most a
            # page may hold (500, kandev.domain.validation.PAGE_SIZE_LIMIT).
            sidebar["10"] = await sidebar_cost(address, app_db, ws_id, 10)
            await add_tasks(address, ws_id, 1000 - EVENTS)
            sidebar["500"] = await sidebar_cost(address, app_db, ws_id, 500)
    return {
        "database": where.database,
        "commit_to_subscriber": latency,
        "sidebar": sidebar,
        "sidebar_statements_constant": sidebar["10"]["sql_statements"] == sidebar["500"]["sql_statements"],
    }


def _server_db() -> Any:
    from tests.support import server as support

    return support.last_app_state().db


async def _workspace(address: str) -> str:
    async with httpx.AsyncClient(base_url=f"http://{address}", timeout=10) as http:
        data = (await http.post("/graphql", json={"query": "{ workspaces { id } }"})).json()
    return data["data"]["workspaces"][0]["id"]


if __name__ == "__main__":
    print(json.dumps(asyncio.run(run()), indent=2))
