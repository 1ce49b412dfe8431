"""The MCP seam: a tool whose operation fails unexpectedly answers is_error with code INTERNAL, never the failure."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import pytest

from kandev.edge.mcp_bridge.surface import McpCaller
from kandev.edge.mcp_bridge.tool_surface import KandevToolSurface
from kandev.platform.database import Database
from kandev.wiring import AppState
from tests.integration.mcp_bridge.conftest import call_tool
from tests.support.databases import sqlite_url


@pytest.fixture
async def tableless(settings, bus, redis_url, principal, jobs, tmp_path) -> AsyncIterator[KandevToolSurface]:
    """The real tool surface over a database that has no tables: every operation's query raises."""
    import redis.asyncio as aioredis

    db = Database(sqlite_url(tmp_path / "never-migrated.db"))
    redis = aioredis.from_url(redis_url)
    state = AppState(settings=settings, db=db, bus=bus, redis=redis, local_principal=principal, jobs=jobs)
    try:
        yield KandevToolSurface(lambda: state)
    finally:
        await redis.aclose()
        await db.dispose()


async def test_a_tool_whose_operation_raises_answers_internal_without_the_exception_text(tableless, principal, caplog):
    caller = McpCaller(principal=principal, endpoint="external")
    with caplog.at_level(logging.ERROR):
        is_error, answer = await call_tool(tableless, caller, "list_workspaces_kandev")
    assert is_error
    assert answer["code"] == "INTERNAL"
    assert "no such table" not in str(answer) and "workspaces" not in answer["error"]
    # The incident is kept for the operator, with the real cause and its traceback.
    assert any(r.exc_info and "no such table" in str(r.exc_info[1]) for r in caplog.records)


async def test_the_same_tool_on_a_working_database_answers(tool_surface, external):
    is_error, answer = await call_tool(tool_surface, external, "list_workspaces_kandev")
    assert not is_error, answer
