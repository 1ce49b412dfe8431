"""Live fan-out: one event reaching many subscribers is executed once per distinct operation.

Each subscriber of taskEvents or sessionEvents is authorized on its own when it subscribes. When a message
arrives, every local subscriber with the same visibility (the same principal) is handed one shared event
object, and `SharedEventExecutor` runs each distinct (operation, variables) over it once: 500 browser tabs
with the web client's subscription cost one execution and one set of loader queries per event, not 500.
"""

from __future__ import annotations

import asyncio
import json
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from contextvars import ContextVar
from typing import Any, TypeVar

from graphql import ExecutionResult, OperationDefinitionNode
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext
from strawberry.subscriptions.protocols.graphql_transport_ws.handlers import BaseGraphQLTransportWSHandler, Operation
from strawberry.types import Info

E = TypeVar("E")
# The attribute of a shared event that holds its results, by (operation, variables).
_RESULTS = "_kandev_shared_results"


def shared_event(memo: dict[Hashable, Any], visibility: Hashable, build: Callable[[], E]) -> E:
    """The event for every subscriber who may see what `visibility` sees, built once per message (`memo` is
    the message's, see events.Subscription.memo)."""
    key = ("event", visibility)
    event: E | None = memo.get(key)
    if event is None:
        event = memo[key] = build()
        setattr(event, _RESULTS, {})
    return event


def _operation_key(operation: OperationDefinitionNode, variables: Mapping[str, Any]) -> tuple[int, str]:
    # Documents come from the parser cache, so subscribers sending the same text share one operation node.
    return id(operation), json.dumps(variables, sort_keys=True, default=str)


class SharedEventExecutor(StrawberryGraphQLCoreExecutionContext):
    """graphql-core's executor, executing an operation over a shared event once for all its subscribers."""

    def execute_operation(self, *args: Any, **kwargs: Any) -> Any:
        results: dict[tuple[int, str], Any] | None = getattr(self.root_value, _RESULTS, None)
        if results is None:
            return super().execute_operation(*args, **kwargs)
        key = _operation_key(self.operation, self.variable_values.coerced)
        if key not in results:
            result = super().execute_operation(*args, **kwargs)
            results[key] = asyncio.ensure_future(result) if self.is_awaitable(result) else result
        shared = results[key]
        # Shielded: one subscriber leaving mid-execution must not cancel the others' result.
        return asyncio.shield(shared) if isinstance(shared, asyncio.Future) else shared


class _Serving:
    """The graphql-transport-ws operation a subscription task serves, and its result key once known (its
    operation and variables never change, so the key is computed once, not once per event)."""

    __slots__ = ("key", "operation")

    def __init__(self, operation: Operation[Any, Any]) -> None:
        self.operation = operation
        self.key: tuple[int, str] | None = None


# The Context.extras entry a connection's end calls: it lets go of what holds it open (kandev.edge.open_connections).
RELEASE_KEY = "kandev.release"

# What the running graphql-transport-ws operation task serves (set in that task only).
_serving: ContextVar[_Serving | None] = ContextVar("kandev_ws_operation", default=None)


class SharingTransportWSHandler(BaseGraphQLTransportWSHandler[Any, Any]):
    """strawberry's graphql-transport-ws handler, telling a subscription which operation it serves, and letting
    go of the connection when it ends."""

    async def run_operation(self, operation: Operation[Any, Any]) -> None:
        _serving.set(_Serving(operation))
        await super().run_operation(operation)

    async def shutdown(self) -> None:
        try:
            await super().shutdown()
        finally:
            extras = getattr(self.context, "extras", None)
            release = extras.pop(RELEASE_KEY, None) if isinstance(extras, dict) else None
            if release is not None:
                release()


async def sent_shared(event: object, info: Info[Any, Any]) -> bool:
    """Send this subscriber the result another subscriber of the same event, operation and variables already
    executed, straight to its socket: True when sent. Per subscriber that skips graphql-core's and strawberry's
    per-event steps, which cost as much as sending. False (yield the event instead) when this subscriber is
    the first, when the result carries errors, or outside a graphql-transport-ws operation."""
    serving = _serving.get()
    results: dict[tuple[int, str], Any] | None = getattr(event, _RESULTS, None)
    if serving is None or results is None:
        return False
    if serving.key is None:
        serving.key = _operation_key(info.operation, info.variable_values)
    shared = results.get(serving.key)
    if shared is None:
        return False
    if isinstance(shared, asyncio.Future):
        # Done for all but the first few subscribers: read it without a shield (a future and a callback each).
        result = shared.result() if shared.done() else await asyncio.shield(shared)
    else:
        result = shared
    if not isinstance(result, ExecutionResult) or result.errors or result.extensions:
        return False
    operation = serving.operation
    await operation.send_operation_message({"id": operation.id, "type": "next", "payload": {"data": result.data}})
    return True


# Serialized results, by the identity of the result's data (held here, so the identity stays unique).
_SERIALIZED_KEPT = 64
_serialized: OrderedDict[int, tuple[object, str]] = OrderedDict()


def next_message_text(message: Mapping[str, Any]) -> str | None:
    """The JSON text of a graphql-transport-ws `next` message that carries data only, serializing that data
    once for all the subscribers a shared result goes to; None for any other message."""
    payload = message.get("payload")
    if message.get("type") != "next" or not isinstance(payload, dict) or payload.keys() != {"data"}:
        return None
    data = payload["data"]
    kept = _serialized.get(id(data))
    if kept is not None and kept[0] is data:
        text = kept[1]
    else:
        text = json.dumps(data, separators=(",", ":"))
        _serialized[id(data)] = (data, text)
        if len(_serialized) > _SERIALIZED_KEPT:
            _serialized.popitem(last=False)
    return f'{{"id":{json.dumps(message["id"])},"type":"next","payload":{{"data":{text}}}}}'
