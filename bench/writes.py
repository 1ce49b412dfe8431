"""Writes: createTask per second from 8 concurrent clients against one `kandev serve` process (API only, in
its own process), with the web client's CreateTask mutation. KANDEV_BENCH_DATABASE_URL /
KANDEV_BENCH_REDIS_URL when set, else SQLite and the embedded Redis-protocol server."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx

from bench.backends import backends
from bench.fanout import cpu_seconds, served
from bench.foundation import summary
from tests.support.client_ops import client_operations

CONCURRENCY = 8
REQUESTS = 800
TARGET_PER_SECOND = 250
TARGET_P99_MS = 100


async def measure(address: str, pid: int) -> dict[str, Any]:
    create = client_operations()["CREATE_TASK"]
    async with httpx.AsyncClient(base_url=f"http://{address}", timeout=30) as http:
        workspaces = (await http.post("/graphql", json={"query": "{ workspaces { id } }"})).json()
        workspace_id = workspaces["data"]["workspaces"][0]["id"]
        latencies: list[float] = []
        counter = iter(range(REQUESTS))

        async def client() -> None:
            for i in counter:
                variables = {"i": {"workspaceId": workspace_id, "title": f"write {i}"}}
                began = time.perf_counter()
                answer = (await http.post("/graphql", json={"query": create, "variables": variables})).json()
                latencies.append(time.perf_counter() - began)
                assert answer["data"]["createTask"]["__typename"] == "CreateTaskPayload", answer

        for _ in range(CONCURRENCY * 4):  # warm-up: first requests pay imports and caches
            await http.post(
                "/graphql",
                json={"query": create, "variables": {"i": {"workspaceId": workspace_id, "title": "warm"}}},
            )
        began, cpu = time.perf_counter(), cpu_seconds(pid)
        await asyncio.gather(*(client() for _ in range(CONCURRENCY)))
        elapsed, cpu = time.perf_counter() - began, cpu_seconds(pid) - cpu
    return {
        "concurrency": CONCURRENCY,
        "requests": REQUESTS,
        "per_second": round(REQUESTS / elapsed, 1),
        "latency": summary(latencies),
        # On this 2-core machine the measuring client, PostgreSQL and the server share the CPU: what one
        # request costs the server says how far it could go with a core of its own.
        "server_cpu_ms_per_request": round(cpu / REQUESTS * 1000, 2),
        "targets": {"per_second": TARGET_PER_SECOND, "p99_ms": TARGET_P99_MS},
    }


async def run() -> dict[str, Any]:
    with backends() as where, served(where.database_url, where.redis_url, where.folder) as (address, pid):
        result = await measure(address, pid)
    return {"database": where.database, **result}


if __name__ == "__main__":
    import json

    print(json.dumps(asyncio.run(run()), indent=2))
