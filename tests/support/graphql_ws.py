"""A minimal graphql-transport-ws client for tests, over the `websockets` package."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

PROTOCOL = "graphql-transport-ws"


class GraphQLWebSocket:
    def __init__(self, connection: ClientConnection) -> None:
        self.connection = connection

    @classmethod
    async def open(cls, address: str, payload: dict[str, Any] | None = None) -> GraphQLWebSocket:
        connection = await connect(f"ws://{address}/graphql", subprotocols=[PROTOCOL], open_timeout=10)
        await connection.send(json.dumps({"type": "connection_init", "payload": payload or {}}))
        ack = json.loads(await connection.recv())
        assert ack["type"] == "connection_ack", ack
        return cls(connection)

    async def subscribe(self, query: str, **variables: Any) -> str:
        op_id = uuid.uuid4().hex
        message = {"id": op_id, "type": "subscribe", "payload": {"query": query, "variables": variables}}
        await self.connection.send(json.dumps(message))
        return op_id

    async def listen(self, query: str, timeout: float = 10, **variables: Any) -> str:
        """Subscribe and wait for the server's SUBSCRIBED message: from then on nothing published is missed."""
        op_id = await self.subscribe(query, **variables)
        async with asyncio.timeout(timeout):
            first = await self.next_message()
        assert first["type"] == "next" and not first["payload"].get("errors"), first
        [event] = first["payload"]["data"].values()
        assert event.get("kind", "SUBSCRIBED") == "SUBSCRIBED", first
        return op_id

    async def next_message(self) -> dict[str, Any]:
        """The next data-bearing message; pings are answered on the way."""
        while True:
            message = json.loads(await self.connection.recv())
            if message["type"] == "ping":
                await self.connection.send(json.dumps({"type": "pong"}))
                continue
            if message["type"] == "pong":
                continue
            return message

    async def close(self) -> None:
        await self.connection.close()
