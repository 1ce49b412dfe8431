"""Pre-flight acknowledgement latency: from the createAutomation mutation's answer to the automation's
`ACK_CHANGED` event carrying a settled ack (no longer PENDING) on `automationEvents`.

`kandev serve` runs in its own process and one real `kandev worker` process runs the pre-flight jobs;
creates are one at a time (a scheduled automation on the Scripted profile), the first one unmeasured (the
worker's first job also pays its imports). KANDEV_BENCH_DATABASE_URL / KANDEV_BENCH_REDIS_URL when set, else
SQLite and the embedded Redis-protocol server."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import httpx

from bench.backends import backends
from bench.fanout import served
from bench.foundation import summary
from kandev.platform.settings import Settings
from tests.support.graphql_ws import GraphQLWebSocket
from tests.support.workers import running_worker

CREATES = 30
TIMEOUT_SECONDS = 60.0  # one ack that takes longer than this is a failure, not a figure
TARGET_P95_MS = 5000  # "within seconds"
EVENTS = "subscription($w: ID!) { automationEvents(workspaceId: $w) { kind automationId ack { status } } }"
PROFILES = "query($w: ID!) { agentProfiles(workspaceId: $w) { id kind } }"
CREATE = """mutation($i: CreateAutomationInput!) { createAutomation(input: $i) { __typename
  ... on Error { message } ... on AutomationPayload { automation { id lastAck { status } } } } }"""


async def _graphql(http: httpx.AsyncClient, query: str, **variables: Any) -> dict[str, Any]:
    answer = (await http.post("/graphql", json={"query": query, "variables": variables})).json()
    assert not answer.get("errors"), answer
    return dict(answer["data"])


async def _settled(socket: GraphQLWebSocket, automation_id: str) -> str:
    """Wait for the automation's ack to leave PENDING; its status."""
    while True:
        message = await socket.next_message()
        assert message["type"] == "next", message
        event = message["payload"]["data"]["automationEvents"]
        ack = event["ack"] if event["kind"] == "ACK_CHANGED" and event["automationId"] == automation_id else None
        if ack is not None and ack["status"] != "PENDING":
            return str(ack["status"])


async def measure(address: str) -> dict[str, Any]:
    latencies: list[float] = []
    statuses: dict[str, int] = {}
    async with httpx.AsyncClient(base_url=f"http://{address}", timeout=30) as http:
        workspace_id = (await _graphql(http, "{ workspaces { id } }"))["workspaces"][0]["id"]
        profiles = (await _graphql(http, PROFILES, w=workspace_id))["agentProfiles"]
        scripted = next(p["id"] for p in profiles if p["kind"] == "SCRIPTED")
        socket = await GraphQLWebSocket.open(address)
        try:
            await socket.listen(EVENTS, w=workspace_id)
            for i in range(CREATES + 1):
                variables = {
                    "workspaceId": workspace_id,
                    "name": f"bench ack {uuid.uuid4()}",
                    "prompt": "Summarise yesterday's merged pull requests",
                    "agentProfileId": scripted,
                    "triggers": [{"type": "SCHEDULED", "expression": "0 9 * * 1-5", "timezone": "UTC"}],
                }
                payload = (await _graphql(http, CREATE, i=variables))["createAutomation"]
                answered = time.perf_counter()
                assert payload["__typename"] == "AutomationPayload", payload
                async with asyncio.timeout(TIMEOUT_SECONDS):
                    status = await _settled(socket, payload["automation"]["id"])
                if i == 0:
                    continue
                latencies.append(time.perf_counter() - answered)
                statuses[status] = statuses.get(status, 0) + 1
        finally:
            await socket.close()
    return {"creates": CREATES, "statuses": statuses, "save_to_ack": summary(latencies)}


async def run() -> dict[str, Any]:
    with backends() as where, served(where.database_url, where.redis_url, where.folder) as (address, _pid):
        settings = Settings(database_url=where.database_url, redis_url=where.redis_url, data_dir=where.folder / "data")
        with running_worker(settings):
            figures = await measure(address)
    return {"database": where.database, **figures, "targets": {"save_to_ack_p95_ms": TARGET_P95_MS}}


if __name__ == "__main__":
    import json

    print(json.dumps(asyncio.run(run()), indent=2))
