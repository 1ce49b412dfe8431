"""Schemathesis against /graphql on a real server: every query and mutation the schema publishes, fed generated
arguments, never answers with a server error (a 5xx or an INTERNAL error in `errors`)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC
from typing import Any

import graphql
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_graphql import nodes
from schemathesis import GenerationMode

from tests.support.server import running_server

pytestmark = [pytest.mark.reliability, pytest.mark.slow]


@pytest.fixture
async def address(settings: Any) -> AsyncIterator[str]:
    async with running_server(settings) as served:
        yield served


def json_node(value: Any) -> graphql.ValueNode:
    """A JSON value as the GraphQL literal the JSON scalar parses."""
    if value is None:
        return nodes.Null
    if isinstance(value, bool):
        return nodes.Boolean(value)
    if isinstance(value, int):
        return nodes.Int(value)
    if isinstance(value, str):
        return nodes.String(value)
    if isinstance(value, list):
        return nodes.List([json_node(item) for item in value])
    fields = [graphql.ObjectFieldNode(name=graphql.NameNode(value=k), value=json_node(v)) for k, v in value.items()]
    return nodes.Object(fields)


_KEYS = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**31), 2**31 - 1) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
    max_leaves=8,
)
schemathesis.graphql.scalar("JSON", _JSON.map(json_node))
schemathesis.graphql.scalar(
    "DateTime", (st.datetimes(timezones=st.just(UTC)).map(lambda d: d.isoformat()) | st.text()).map(nodes.String)
)

EXAMPLES = {GenerationMode.POSITIVE: 3, GenerationMode.NEGATIVE: 2}  # per operation: bounded, under a minute in all


@dataclass
class Tally:
    operations: int = 0
    examples: int = 0
    by_status: dict[int, int] = field(default_factory=dict)
    server_errors: list[str] = field(default_factory=list)


def check(case: schemathesis.Case, tally: Tally) -> None:
    """Send the case; a 5xx, a non-JSON body or an INTERNAL error is a server error."""
    response = case.call(timeout=30)
    tally.examples += 1
    tally.by_status[response.status_code] = tally.by_status.get(response.status_code, 0) + 1
    where = f"{case.operation.label} with {case.body!r}"
    if response.status_code >= 500:
        tally.server_errors.append(f"HTTP {response.status_code}: {where}")
        return
    try:
        errors = response.json().get("errors") or []
    except ValueError:
        tally.server_errors.append(f"not JSON: {where}")
        return
    internal = [e for e in errors if (e.get("extensions") or {}).get("code") == "INTERNAL"]
    if internal:
        tally.server_errors.append(f"{internal}: {where}")


def fuzz(url: str) -> Tally:
    """Every operation, in both generation modes; failures are collected, not raised, so one run shows them all."""
    schema = schemathesis.graphql.from_url(url, timeout=30)
    tally = Tally()
    for result in schema.get_all_operations():
        operation = result.ok()
        tally.operations += 1
        for mode, examples in EXAMPLES.items():

            @settings(
                max_examples=examples,
                deadline=None,
                database=None,
                derandomize=True,
                suppress_health_check=list(HealthCheck),
            )
            @given(case=operation.as_strategy(generation_mode=mode))
            def run(case: schemathesis.Case) -> None:
                check(case, tally)

            run()
    return tally


async def test_generated_queries_and_mutations_never_get_a_server_error(address: str):
    began = time.monotonic()
    tally = await asyncio.wait_for(asyncio.to_thread(fuzz, f"http://{address}/graphql"), timeout=300)
    elapsed = time.monotonic() - began
    assert tally.operations > 50, "the schema lost its operations?"
    assert tally.examples >= tally.operations * 2
    assert tally.server_errors == [], "\n".join(tally.server_errors[:20])
    print(
        f"\n[reliability] schemathesis /graphql: {tally.operations} operations, {tally.examples} examples, "
        f"statuses {tally.by_status}, {elapsed:.1f}s"
    )
