"""MCP figures: a simple read tool over MCP against the same GraphQL query over HTTP (one run, ratio of
medians, target 1.2), per protocol era and endpoint, on the wire and through the official Python client;
and, with a real worker and scripted agents, the time from a child's ask_parent_question_kandev call to
the parent's prompt being queued."""

from __future__ import annotations

import json
import statistics
import time
from typing import Any

import httpx
import httpx2
import redis.asyncio as aioredis
from sqlalchemy import select

from bench.backends import backends
from bench.foundation import summary
from kandev.adapters.rq_dispatch import RqDispatcher
from kandev.domain.access.bootstrap import bootstrap
from kandev.domain.access.session_tokens import mint_session_token
from kandev.domain.services import Services
from kandev.domain.tasks.service import CreateTask
from kandev.models import ParentQuestion, QueuedPrompt
from kandev.platform.database import Database
from kandev.platform.event_bus import EventBus
from kandev.platform.settings import Settings
from kandev.wiring import service_context
from tests.integration.mcp_transport.conftest import LEGACY, MODERN, mcp_client
from tests.support.server import running_server
from tests.support.watch import watching
from tests.support.workers import running_worker

CALLS = 200
TARGET_RATIO = 1.2
ASKS = 10
# Set by the client per request, or by httpx for the replayed body.
_PER_REQUEST_HEADERS = {"content-length", "host"}
QUERY = "{ workspaces { id name default_workflow_id: defaultWorkflowId } }"


async def tool_vs_graphql(address: str, era: str, path: str, token: str | None) -> dict[str, Any]:
    """Three ways interleaved, so all see the same machine: the official Python client's `call_tool`; the
    very request that client sent for it (headers and JSON-RPC body, a new id each time) posted with httpx,
    the comparator's own client; and the GraphQL query. The second is the ratio the target is about: both
    sides are then one HTTP request from the same client, so it is Kandev's cost against Kandev's cost. The
    first adds the Python SDK's client-side work, which agents written in other languages do not pay."""
    tool_times: list[float] = []
    wire_times: list[float] = []
    graphql_times: list[float] = []
    sent: list[tuple[dict[str, str], dict[str, Any]]] = []

    async def remember_call(request: httpx2.Request) -> None:
        if request.method == "POST" and (body := json.loads(request.content)).get("method") == "tools/call":
            sent.append(({k: v for k, v in request.headers.items() if k not in _PER_REQUEST_HEADERS}, body))

    async with (
        mcp_client(f"http://{address}{path}", era, token, on_request=remember_call) as client,
        httpx.AsyncClient(base_url=f"http://{address}", timeout=10) as http,
    ):
        for _ in range(20):  # warm up every path
            await client.call_tool("list_workspaces_kandev", {})
            await http.post("/graphql", json={"query": QUERY})
        call_headers, call = sent[-1]
        for i in range(CALLS):
            began = time.perf_counter()
            result = await client.call_tool("list_workspaces_kandev", {})
            tool_times.append(time.perf_counter() - began)
            assert not result.is_error
            began = time.perf_counter()
            response = await http.post(path, json={**call, "id": f"wire-{i}"}, headers=call_headers)
            wire_times.append(time.perf_counter() - began)
            assert response.status_code == 200 and "result" in response.json(), response.text[:200]
            began = time.perf_counter()
            response = await http.post("/graphql", json={"query": QUERY})
            graphql_times.append(time.perf_counter() - began)
            assert response.status_code == 200
    graphql = statistics.median(graphql_times)
    return {
        "tools_call_wire": summary(wire_times),
        "tools_call_python_client": summary(tool_times),
        "graphql_http": summary(graphql_times),
        "ratio_median": round(statistics.median(wire_times) / graphql, 2),
        "ratio_median_python_client": round(statistics.median(tool_times) / graphql, 2),
    }


async def parent_question_latency(
    settings: Settings, services: Services, bus: EventBus, db: Database
) -> dict[str, Any]:
    workspace = (await services.workspaces.list())[0]
    delays: list[float] = []
    ask = {"questions": [{"prompt": "Which way?"}]}
    for i in range(ASKS):
        parent = (
            await services.tasks.create(CreateTask(workspace_id=workspace.id, title=f"P{i}", start_agent=False))
        ).task
        child = (
            await services.tasks.create(
                CreateTask(
                    workspace_id=workspace.id,
                    title=f"C{i}",
                    parent_id=parent.id,
                    autopilot=True,
                    start_agent=False,
                )
            )
        ).task
        session = (
            await services.sessions.start_task(child.id, f"/tool ask_parent_question_kandev {json.dumps(ask)}", None)
        ).session
        async with watching(bus, db, session.id) as watch:
            await watch.turns_ended(1, timeout=60)
        async with db.read() as s:
            question = await s.scalar(select(ParentQuestion).where(ParentQuestion.child_task_id == child.id))
            prompt = await s.get(QueuedPrompt, question.parent_prompt_id)
            tool_call = question.created_at  # the row is written by the tool call, in the same transaction
        delays.append((prompt.created_at - tool_call).total_seconds())
    return {"asks": ASKS, "question_committed_to_parent_prompt_queued": summary(delays)}


async def run() -> dict[str, Any]:
    with backends() as where:
        database_url = where.database_url
        settings = Settings(database_url=database_url, redis_url=where.redis_url, data_dir=where.folder / "data")
        db = Database(database_url)
        bus = EventBus(aioredis.from_url(where.redis_url))
        jobs = RqDispatcher(where.redis_url, bus, turn_timeout=600)
        services = Services(service_context(db, bus, jobs, settings, await bootstrap(db, settings)))
        try:
            workspace = (await services.workspaces.list())[0]
            task = (
                await services.tasks.create(CreateTask(workspace_id=workspace.id, title="bench", start_agent=False))
            ).task
            session = (await services.sessions.start_task(task.id, "hi", None)).session
            async with services.ctx.unit_of_work() as uow:  # what the session's agent would get at launch
                token = await mint_session_token(uow, session.id)
            results: dict[str, Any] = {"database": where.database, "target_ratio_median": TARGET_RATIO}
            async with running_server(settings) as address:
                for era in (LEGACY, MODERN):
                    results[f"{era}_external"] = await tool_vs_graphql(address, era, "/mcp", None)
                    results[f"{era}_session"] = await tool_vs_graphql(address, era, "/mcp/session", token)
                wired = settings.model_copy(update={"public_url": f"http://{address}"})
                with running_worker(wired):
                    results["parent_question"] = await parent_question_latency(wired, services, bus, db)
            return results
        finally:
            jobs.close()
            await bus.close()
            await db.dispose()
