"""Webhook deliveries accepted durably per second: `POST /api/v1/automations/webhook/{id}` on loopback at
concurrency 8 and 16, each with a small JSON body and its own Idempotency-Key, against `kandev serve` in its
own process (no worker runs, so only acceptance is measured: verify, record, enqueue, 202). Every 202 is
checked against the delivery rows afterwards. Uses KANDEV_BENCH_DATABASE_URL / KANDEV_BENCH_REDIS_URL when
set, else SQLite and the embedded Redis-protocol server.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import select

from bench.backends import backends
from bench.fanout import served
from bench.foundation import summary
from kandev.models import WebhookDelivery
from kandev.platform.database import Database

CONCURRENCY = (8, 16)
WARMUP_SECONDS = 1.0
SECONDS = 8.0
TARGET_PER_SECOND = 1000
CREATE = """mutation($i: CreateAutomationInput!) { createAutomation(input: $i) { __typename
  ... on Error { message } ... on AutomationPayload { webhookSecret automation { id } } } }"""


async def webhook_automation(http: httpx.AsyncClient) -> tuple[str, str]:
    workspaces = (await http.post("/graphql", json={"query": "{ workspaces { id } }"})).json()
    workspace_id = workspaces["data"]["workspaces"][0]["id"]
    variables = {
        "i": {
            "workspaceId": workspace_id,
            "name": f"bench hook {uuid.uuid4()}",
            "prompt": "/end {{webhook.body}}",
            "triggers": [{"type": "WEBHOOK"}],
        }
    }
    payload = (await http.post("/graphql", json={"query": CREATE, "variables": variables})).json()["data"][
        "createAutomation"
    ]
    assert payload["__typename"] == "AutomationPayload", payload
    return payload["automation"]["id"], payload["webhookSecret"]


class _Connection:
    """A bare HTTP/1.1 keep-alive connection: the sender's own cost stays small next to the server's, which
    shares this machine's cores (httpx spends more per request than the endpoint does)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, address: str) -> _Connection:
        host, port = address.rsplit(":", 1)
        return cls(*await asyncio.open_connection(host, int(port)))

    async def post(self, host: str, path: str, headers: dict[str, str], body: bytes) -> int:
        lines = [f"POST {path} HTTP/1.1", f"Host: {host}", f"Content-Length: {len(body)}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        self.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        await self.reader.readexactly(length)
        return status

    async def close(self) -> None:
        self.writer.close()
        await self.writer.wait_closed()


async def burst(address: str, automation_id: str, secret: str, concurrency: int) -> dict[str, Any]:
    latencies: list[float] = []
    accepted = 0
    refused = 0
    path = f"/api/v1/automations/webhook/{automation_id}"
    connections = [await _Connection.open(address) for _ in range(concurrency)]
    started = time.perf_counter()
    measuring_from = started + WARMUP_SECONDS
    stop = measuring_from + SECONDS

    async def sender(connection: _Connection) -> None:
        nonlocal accepted, refused
        while (now := time.perf_counter()) < stop:
            body = json.dumps({"ref": "refs/heads/main", "after": uuid.uuid4().hex}).encode()
            headers = {
                "Content-Type": "application/json",
                "X-Webhook-Secret": secret,
                "Idempotency-Key": str(uuid.uuid4()),
            }
            status = await connection.post(address, path, headers, body)
            done = time.perf_counter()
            if now >= measuring_from:
                if status == 202:
                    accepted += 1
                    latencies.append(done - now)
                else:
                    refused += 1

    try:
        await asyncio.gather(*(sender(c) for c in connections))
    finally:
        await asyncio.gather(*(c.close() for c in connections), return_exceptions=True)
    return {
        "concurrency": concurrency,
        "seconds": SECONDS,
        "accepted": accepted,
        "refused": refused,
        "accepted_per_second": round(accepted / SECONDS, 1),
        "latency": summary(latencies) if latencies else {},
    }


async def delivery_ids(database_url: str, automation_id: str) -> set[str]:
    database = Database(database_url, pooled=False)
    try:
        async with database.read() as db:
            rows = await db.scalars(select(WebhookDelivery.id).where(WebhookDelivery.automation_id == automation_id))
            return set(rows)
    finally:
        await database.dispose()


async def measure(database_url: str, redis_url: str, folder: Path) -> list[dict[str, Any]]:
    rows = []
    with served(database_url, redis_url, folder) as (address, _pid):
        for concurrency in CONCURRENCY:
            async with httpx.AsyncClient(base_url=f"http://{address}", timeout=30) as http:
                automation_id, secret = await webhook_automation(http)
            row = await burst(address, automation_id, secret, concurrency)
            # Every 202 (warm-up included) has its row: at least the measured ones must be there.
            ids = await delivery_ids(database_url, automation_id)
            row["recorded_at_least_accepted"] = len(ids) >= row["accepted"]
            rows.append(row)
    return rows


async def run() -> dict[str, Any]:
    with backends() as where:
        rows = await measure(where.database_url, where.redis_url, where.folder)
    return {"database": where.database, "target_per_second": TARGET_PER_SECOND, "by_concurrency": rows}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(run()), indent=2))
