"""Live fan-out: from a createTask to each of N subscribers of the web client's taskEvents subscription.

The server is `kandev serve` in its own process (API only: the database and Redis are given), so the
subscribers' own work in this process does not count as the server's; the server's CPU per event is read
from /proc. Uses KANDEV_BENCH_DATABASE_URL / KANDEV_BENCH_REDIS_URL when set, else SQLite and the embedded
Redis-protocol server. Latency counts from sending the mutation (an upper bound of commit → subscriber).
"""

from __future__ import annotations

import asyncio
import gc
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from bench.backends import backends
from bench.foundation import summary
from tests.support.client_ops import client_operations
from tests.support.graphql_ws import GraphQLWebSocket
from tests.support.server import free_port

SUBSCRIBERS = (1, 100, 500)
EVENTS = 20
TARGET_P99_MS = 50
CREATE = "mutation($i: CreateTaskInput!) { createTask(input: $i) { __typename } }"


@contextmanager
def served(database_url: str, redis_url: str, folder: Path) -> Iterator[tuple[str, int]]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("KANDEV_")}
    env.update(
        KANDEV_DATABASE_URL=database_url,
        KANDEV_REDIS_URL=redis_url,
        KANDEV_DATA_DIR=str(folder / "data"),
        KANDEV_PORT=str(port),
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "kandev.cli", "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code < 500:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError("kandev serve did not start")
            time.sleep(0.1)
        yield f"127.0.0.1:{port}", process.pid
    finally:
        process.terminate()
        process.wait(timeout=30)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def fan_out(address: str, pid: int, workspace_id: str, subscribers: int) -> dict[str, Any]:
    sockets = [await GraphQLWebSocket.open(address) for _ in range(subscribers)]
    latencies: list[float] = []
    after_answer: list[float] = []
    try:
        await asyncio.gather(
            *(s.listen(client_operations()["TASK_EVENTS"], timeout=60, w=workspace_id) for s in sockets)
        )
        with client_gc_paused():
            async with httpx.AsyncClient(base_url=f"http://{address}", timeout=30) as http:
                cpu = cpu_seconds(pid)
                for i in range(EVENTS):
                    receiving = [asyncio.create_task(_arrival(s)) for s in sockets]
                    sent = time.perf_counter()
                    variables = {"i": {"workspaceId": workspace_id, "title": f"fan {subscribers} {i}"}}
                    await http.post("/graphql", json={"query": CREATE, "variables": variables})
                    answered = time.perf_counter()
                    async with asyncio.timeout(60):
                        arrivals = await asyncio.gather(*receiving)
                    latencies += [arrived - sent for arrived in arrivals]
                    after_answer += [max(0.0, arrived - answered) for arrived in arrivals]
                cpu_per_event = (cpu_seconds(pid) - cpu) / EVENTS
    finally:
        await asyncio.gather(*(s.close() for s in sockets), return_exceptions=True)
    return {
        "subscribers": subscribers,
        "events": EVENTS,
        "sent_to_received": summary(latencies),
        # The commit lies between sending the mutation and its answer: this is the lower bound.
        "answered_to_received": summary(after_answer),
        "server_cpu_ms_per_event": round(cpu_per_event * 1000, 1),
    }


@contextmanager
def client_gc_paused() -> Iterator[None]:
    """No garbage collection in this (measuring) process while events are timed.

    The 500 subscribers stand in for 500 browsers but live in one process here: a full collection of
    their sockets took 130-170 ms and landed inside one event's timing, which then read as the server's
    p99. The sockets are open before this starts and the measured loop allocates little, so pausing is safe.
    """
    gc.collect()
    gc.freeze()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.unfreeze()


async def _arrival(socket: GraphQLWebSocket) -> float:
    await socket.next_message()
    return time.perf_counter()


async def measure(database_url: str, redis_url: str, folder: Path) -> list[dict[str, Any]]:
    with served(database_url, redis_url, folder) as (address, pid):
        async with httpx.AsyncClient(base_url=f"http://{address}", timeout=30) as http:
            workspaces = (await http.post("/graphql", json={"query": "{ workspaces { id } }"})).json()
        workspace_id = workspaces["data"]["workspaces"][0]["id"]
        return [await fan_out(address, pid, workspace_id, n) for n in SUBSCRIBERS]


async def run() -> dict[str, Any]:
    with backends() as where:
        rows = await measure(where.database_url, where.redis_url, where.folder)
    return {"database": where.database, "target_p99_ms": TARGET_P99_MS, "by_subscribers": rows}


if __name__ == "__main__":
    import json

    print(json.dumps(asyncio.run(run()), indent=2))
