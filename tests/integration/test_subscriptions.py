"""taskEvents over a real WebSocket (graphql-transport-ws) on a real server."""

from __future__ import annotations

import asyncio
import logging

import httpx
import pytest
from websockets.exceptions import ConnectionClosed

from tests.support.factories import started_task
from tests.support.graphql_ws import GraphQLWebSocket
from tests.support.server import running_server

SUBSCRIPTION = """subscription($ws: ID!) { taskEvents(workspaceId: $ws) {
  kind task { id title state autopilot pendingAction workflowStepId sessions { id } } } }"""


async def test_a_subscriber_receives_a_task_created_by_a_mutation_on_another_connection(settings):
    async with running_server(settings) as address:
        async with httpx.AsyncClient(base_url=f"http://{address}", timeout=10) as http:
            workspaces = (await http.post("/graphql", json={"query": "{ workspaces { id } }"})).json()
            workspace_id = workspaces["data"]["workspaces"][0]["id"]
            ws = await GraphQLWebSocket.open(address)
            try:
                op_id = await ws.listen(SUBSCRIPTION, ws=workspace_id)
                created = await http.post(
                    "/graphql",
                    json={
                        "query": "mutation($i: CreateTaskInput!) { createTask(input: $i) {"
                        " ... on CreateTaskPayload { task { id } } } }",
                        "variables": {"i": {"workspaceId": workspace_id, "title": "Live one"}},
                    },
                )
                task_id = created.json()["data"]["createTask"]["task"]["id"]
                message = await asyncio.wait_for(ws.next_message(), timeout=10)
            finally:
                await ws.close()
    assert message["type"] == "next" and message["id"] == op_id
    event = message["payload"]["data"]["taskEvents"]
    assert event["kind"] == "CREATED"
    assert event["task"]["id"] == task_id
    assert event["task"]["title"] == "Live one"
    assert event["task"]["state"] == "TODO"
    assert event["task"]["pendingAction"] == "NONE"


async def test_subscribing_to_an_unknown_workspace_gets_a_not_found_error_instead_of_events(settings):
    async with running_server(settings) as address:
        ws = await GraphQLWebSocket.open(address)
        try:
            await ws.subscribe(SUBSCRIPTION, ws="no-such-workspace")
            message = await asyncio.wait_for(ws.next_message(), timeout=10)
        finally:
            await ws.close()
    assert message["type"] == "next"
    assert message["payload"]["data"] is None
    assert message["payload"]["errors"][0]["message"] == "workspace not found"


async def test_every_subscription_first_says_it_listens_so_a_client_loads_its_snapshot_after_that(
    settings, services, workspace_id
):
    started = await started_task(services, workspace_id, "/say hi")
    async with running_server(settings) as address:
        ws = await GraphQLWebSocket.open(address)
        try:
            await ws.subscribe(SUBSCRIPTION, ws=workspace_id)
            tasks_first = await asyncio.wait_for(ws.next_message(), timeout=10)
            await ws.subscribe(
                "subscription($s: ID!) { sessionEvents(sessionId: $s) { kind session { id state } message { id } } }",
                s=started.session_id,
            )
            session_first = await asyncio.wait_for(ws.next_message(), timeout=10)
        finally:
            await ws.close()
    assert tasks_first["payload"] == {"data": {"taskEvents": {"kind": "SUBSCRIBED", "task": None}}}
    state = (await services.sessions.get(started.session_id)).state
    assert session_first["payload"]["data"]["sessionEvents"] == {
        "kind": "SUBSCRIBED",
        "session": {"id": started.session_id, "state": state},
        "message": None,
    }


async def test_a_websocket_message_nested_100000_deep_is_closed_4400_and_logs_no_error(settings, caplog):
    caplog.set_level(logging.INFO)
    nested = "[" * 100_000 + "]" * 100_000
    message = '{"type": "subscribe", "id": "1", "payload": {"query": "{ __typename }", "variables": {"v": %s}}}'
    async with running_server(settings) as address:
        socket = await GraphQLWebSocket.open(address)
        await socket.connection.send(message % nested)
        with pytest.raises(ConnectionClosed) as closed:
            await asyncio.wait_for(socket.connection.recv(), timeout=10)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4400
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
