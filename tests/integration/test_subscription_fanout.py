"""An event reaching many subscribers of the same operation is executed once: the SQL it costs does not
grow with the number of subscribers, and every one of them still receives it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Any

import httpx
from graphql.execution.executor import Executor
from sqlalchemy import event

from kandev.graphql.schema.enums import TaskEventKind
from tests.support.client_ops import client_operations
from tests.support.graphql_ws import GraphQLWebSocket
from tests.support.server import last_app_state, running_server

CREATE = "mutation($i: CreateTaskInput!) { createTask(input: $i) { __typename } }"


@contextlib.contextmanager
def counted(engine: Any) -> Iterator[list[str]]:
    statements: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        statements.append(statement)

    event.listen(engine.sync_engine, "before_cursor_execute", record)
    try:
        yield statements
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", record)


async def statements_for_one_event(address: str, workspace_id: str, subscribers: int) -> tuple[int, list[Any]]:
    """SQL statements from a createTask to the moment all `subscribers` (the web client's taskEvents) have it."""
    sockets = [await GraphQLWebSocket.open(address) for _ in range(subscribers)]
    try:
        for socket in sockets:
            await socket.listen(client_operations()["TASK_EVENTS"], w=workspace_id)
        async with httpx.AsyncClient(base_url=f"http://{address}", timeout=10) as http:
            with counted(last_app_state().db.engine) as statements:
                await http.post(
                    "/graphql",
                    json={"query": CREATE, "variables": {"i": {"workspaceId": workspace_id, "title": "Fan"}}},
                )
                async with asyncio.timeout(20):
                    received = [await socket.next_message() for socket in sockets]
            return len(statements), received
    finally:
        for socket in sockets:
            await socket.close()


async def test_an_event_is_executed_once_and_costs_the_same_sql_for_one_subscriber_and_for_twenty(
    settings, workspace_id, monkeypatch
):
    executions: list[object] = []
    execute = Executor.execute_operation

    def counting(self: Executor, *args: Any, **kwargs: Any) -> Any:
        executions.append(self.root_value)
        return execute(self, *args, **kwargs)

    async with running_server(settings) as address:
        one, [alone] = await statements_for_one_event(address, workspace_id, 1)
        monkeypatch.setattr(Executor, "execute_operation", counting)
        twenty, together = await statements_for_one_event(address, workspace_id, 20)
    assert one == twenty, (one, twenty)
    events = [root for root in executions if getattr(root, "kind", None) == TaskEventKind.CREATED]
    assert len(events) == 1, f"twenty subscribers, {len(events)} executions of the event"
    payloads = [message["payload"] for message in together]
    assert all(p["data"]["taskEvents"]["kind"] == "CREATED" for p in payloads)
    assert all(p["data"]["taskEvents"]["task"]["pendingAction"] == "NONE" for p in payloads)
    assert len({p["data"]["taskEvents"]["task"]["id"] for p in payloads}) == 1, "the same event reached all twenty"
    assert alone["payload"]["data"]["taskEvents"]["task"]["title"] == "Fan"


async def test_subscribers_of_different_operations_each_get_the_fields_they_asked_for(settings, workspace_id):
    async with running_server(settings) as address:
        sockets = [await GraphQLWebSocket.open(address) for _ in range(2)]
        try:
            await sockets[0].listen(
                "subscription($w: ID!) { taskEvents(workspaceId: $w) { kind task { id } } }", w=workspace_id
            )
            await sockets[1].listen(
                "subscription($w: ID!) { taskEvents(workspaceId: $w) { task { title } } }", w=workspace_id
            )
            async with httpx.AsyncClient(base_url=f"http://{address}", timeout=10) as http:
                await http.post(
                    "/graphql",
                    json={"query": CREATE, "variables": {"i": {"workspaceId": workspace_id, "title": "Two"}}},
                )
            async with asyncio.timeout(10):
                first, second = [(await s.next_message())["payload"]["data"]["taskEvents"] for s in sockets]
        finally:
            for socket in sockets:
                await socket.close()
    assert first["kind"] == "CREATED" and set(first["task"]) == {"id"}
    assert second == {"task": {"title": "Two"}}


async def test_subscribers_after_the_first_are_sent_the_shared_result_without_their_own_event_steps(
    settings, workspace_id, monkeypatch
):
    per_event_steps: list[object] = []
    build = Executor.build_per_event_executor

    def counting(self: Executor, payload: Any) -> Executor:
        per_event_steps.append(payload)
        return build(self, payload)

    async with running_server(settings) as address:
        monkeypatch.setattr(Executor, "build_per_event_executor", counting)
        _, received = await statements_for_one_event(address, workspace_id, 20)
    created = [p for p in per_event_steps if getattr(p, "kind", None) == TaskEventKind.CREATED]
    assert len(created) == 1, f"twenty subscribers, {len(created)} went through graphql-core's per-event steps"
    assert len({m["id"] for m in received}) == 20, "each subscriber is sent its own operation's id"
    assert all(m["type"] == "next" and m["payload"]["data"]["taskEvents"]["kind"] == "CREATED" for m in received)
