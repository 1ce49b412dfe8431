"""show_rich_output_kandev through the tool surface: accepted presentations persist and replay unchanged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, update

from kandev.domain.context import Principal
from kandev.domain.services import Services
from kandev.edge.mcp_bridge import tools  # noqa: F401 - registers the catalogue
from kandev.edge.mcp_bridge.catalogue import CATALOGUE
from kandev.edge.mcp_bridge.surface import McpCaller
from kandev.models import Message, Session
from tests.conftest import GraphQLCaller
from tests.integration.mcp_bridge.conftest import agent_on, call_tool, unknown_tool
from tests.support.factories import new_task

SECRET = "sk-live-SECRET-VALUE-4242"
MESSAGES = "query($id: ID!) { session(id: $id) { messages { nodes { kind text data } } } }"
CSV_CHART = {
    "version": 1,
    "title": "API latency",
    "description": "From the load test.",
    "blocks": [
        {
            "type": "chart",
            "chart_type": "line",
            "title": "p50 and p95",
            "summary": "Tail latency fell.",
            "csv": {
                "path": "reports/latency.csv",
                "x_column": "recorded_at",
                "series": [
                    {"column": "p50_ms", "label": "p50 (ms)"},
                    {"column": "p95_ms", "label": "p95 (ms)"},
                ],
            },
        },
        {"type": "metrics", "items": [{"label": "Samples", "value": "2"}]},
        {"type": "file", "path": "reports/latency.csv", "mime_type": "text/csv"},
    ],
}


@pytest.fixture
async def agent(services, db, workspace_id, tmp_path: Path) -> McpCaller:
    caller = await agent_on(services, await new_task(services, workspace_id, "Measure"))
    root = tmp_path / "workdir"
    (root / "reports").mkdir(parents=True)
    (root / "reports" / "latency.csv").write_text(
        "recorded_at,p50_ms,p95_ms\n2026-08-13T10:00:00Z,18.2,29.4\n2026-08-14T10:00:00Z,16.4,\n"
    )
    async with db.transaction() as s:
        await s.execute(update(Session).where(Session.id == caller.session_id).values(working_dir=str(root)))
    return caller


async def rich_messages(db, session_id: str) -> list[Message]:
    async with db.read() as s:
        rows = await s.scalars(
            select(Message).where(Message.session_id == session_id, Message.kind == "RICH_OUTPUT").order_by(Message.seq)
        )
        return list(rows)


async def test_an_accepted_csv_chart_persists_resolved_and_replays_after_the_file_changes_or_goes(
    tool_surface, services, db, agent, tmp_path
):
    error, shown = await call_tool(tool_surface, agent, "show_rich_output_kandev", **CSV_CHART)
    assert not error, shown
    assert shown["status"] == "shown" and shown["title"] == "API latency" and shown["blocks"] == 3 and shown["id"]
    [message] = await rich_messages(db, agent.session_id)
    assert message.id == shown["id"] and message.text == "API latency\nFrom the load test."
    chart = message.data["rich_output"]["blocks"][0]
    assert chart["labels"] == ["2026-08-13T10:00:00Z", "2026-08-14T10:00:00Z"]
    assert chart["series"] == [
        {"label": "p50 (ms)", "values": [18.2, 16.4]},
        {"label": "p95 (ms)", "values": [29.4, None]},
    ]
    assert "recorded_at,p50_ms" not in json.dumps(message.data)  # never the raw CSV

    gql = GraphQLCaller(services)
    before = (await gql(MESSAGES, id=agent.session_id))["session"]["messages"]["nodes"]
    csv_file = tmp_path / "workdir" / "reports" / "latency.csv"
    csv_file.write_text("recorded_at,p50_ms,p95_ms\nlater,1,1\n")
    assert (await gql(MESSAGES, id=agent.session_id))["session"]["messages"]["nodes"] == before
    csv_file.unlink()
    after = (await gql(MESSAGES, id=agent.session_id))["session"]["messages"]["nodes"]
    assert after == before
    replayed = next(m for m in after if m["kind"] == "RICH_OUTPUT")
    assert replayed["data"]["rich_output"]["blocks"][0]["series"][0]["values"] == [18.2, 16.4]


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ({**CSV_CHART, "version": 2}, "version"),
        ({**CSV_CHART, "theme": "dark"}, "unknown field: theme"),
        (
            {**CSV_CHART, "blocks": [{"type": "file", "path": "a.txt", "bytes": SECRET}]},
            "unknown field in 'blocks[0]': bytes",
        ),
        (
            {
                **CSV_CHART,
                "blocks": [{**CSV_CHART["blocks"][0], "csv": {**CSV_CHART["blocks"][0]["csv"], "sep": ";"}}],
            },
            "unknown field in 'blocks[0].csv': sep",
        ),
        (
            {
                **CSV_CHART,
                "blocks": [{"type": "metrics", "items": [{"label": "a", "value": "b", "color": SECRET}]}],
            },
            "unknown field in 'blocks[0].items[0]': color",
        ),
        (
            {**CSV_CHART, "blocks": [{"type": "table"}]},
            "blocks[0].type' must be one of: file, chart, metrics",
        ),
        ({**CSV_CHART, "title": SECRET * 10}, "too long"),
        ({**CSV_CHART, "blocks": [{"type": "file", "path": "/etc/passwd"}]}, "not an absolute path"),
        ({**CSV_CHART, "blocks": [{"type": "file", "path": f"data:text/plain,{SECRET}"}]}, "not a data URI"),
        (
            {
                **CSV_CHART,
                "description": "x" * 400,
                "blocks": [{"type": "file", "path": "a" * 999}] * 4,
                "title": "t",
            },
            None,
        ),
    ],
)
async def test_rejected_presentations_are_tool_errors_that_store_nothing(tool_surface, db, agent, arguments, fragment):
    error, payload = await call_tool(tool_surface, agent, "show_rich_output_kandev", **arguments)
    if fragment is None:  # the control case: every field at its limit is fine
        assert not error, payload
        return
    assert error and payload["code"] in ("INVALID_ARGUMENTS", "VALIDATION")
    assert fragment in payload["error"] and SECRET not in json.dumps(payload)
    assert await rich_messages(db, agent.session_id) == []


async def test_input_over_64_kib_is_rejected_before_anything_is_read(tool_surface, db, agent):
    # Every field within its own limit; only the whole is too big.
    chart = {
        "type": "chart",
        "chart_type": "bar",
        "title": "t",
        "summary": "s",
        "labels": ["l" * 120] * 100,
        "series": [{"label": "s", "values": [1.123456789] * 100}] * 4,
    }
    big = {"version": 1, "title": "Big", "description": "d" * 500, "blocks": [chart] * 4}
    assert len(json.dumps(big)) > 64 * 1024
    error, payload = await call_tool(tool_surface, agent, "show_rich_output_kandev", **big)
    assert error and payload["code"] == "VALIDATION" and "64 KiB" in payload["error"]
    assert await rich_messages(db, agent.session_id) == []


async def test_a_csv_error_names_the_row_and_column(tool_surface, db, agent, tmp_path):
    (tmp_path / "workdir" / "reports" / "latency.csv").write_text("recorded_at,p50_ms,p95_ms\na,1,2\nb,oops,3\n")
    error, payload = await call_tool(tool_surface, agent, "show_rich_output_kandev", **CSV_CHART)
    assert error and "row 2 (line 3), column 'p50_ms'" in payload["error"]


async def test_only_an_agent_session_may_show_rich_output(tool_surface, services, principal, agent):
    external = McpCaller(principal=principal, endpoint="external")
    await unknown_tool(tool_surface, external, "show_rich_output_kandev", **CSV_CHART)
    operator = GraphQLCaller(services)
    answer = await operator(
        "mutation($p: JSON!) { showRichOutput(presentation: $p) { __typename ... on Error { code } } }",
        p=CSV_CHART,
    )
    assert answer["showRichOutput"] == {"__typename": "PermissionDeniedError", "code": "PERMISSION_DENIED"}


async def test_a_presentation_from_an_idle_session_belongs_to_its_latest_turn(tool_surface, services, db, agent):
    as_agent = Services(
        services.ctx.with_principal(
            Principal(
                user_id=services.principal.user_id,
                login="agent",
                session_id=agent.session_id,
                task_id=agent.task_id,
            )
        )
    )
    inline = {
        "version": 1,
        "title": "Inline",
        "blocks": [
            {
                "type": "chart",
                "chart_type": "bar",
                "title": "t",
                "summary": "s",
                "labels": ["a"],
                "series": [{"label": "n", "values": [1]}],
            }
        ],
    }
    message = await as_agent.rich_output.show(inline)
    assert message.kind == "RICH_OUTPUT" and message.turn_id is None  # no turn has run in this test


def _objects(schema: Any, where: str = "") -> list[tuple[str, dict[str, Any]]]:
    found: list[tuple[str, dict[str, Any]]] = []
    if isinstance(schema, dict):
        if schema.get("type") == "object":
            found.append((where, schema))
        for key, value in schema.items():
            found += _objects(value, f"{where}/{key}")
    elif isinstance(schema, list):
        for index, value in enumerate(schema):
            found += _objects(value, f"{where}/{index}")
    return found


def test_the_advertised_schema_is_closed_at_every_level():
    objects = _objects(CATALOGUE["show_rich_output_kandev"].input_schema)
    assert len(objects) >= 8
    assert [where for where, o in objects if o.get("additionalProperties") is not False] == []
