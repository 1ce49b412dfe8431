"""Unstorable strings, integers beyond 32 bits and oversized prompts in tool arguments get a typed tool
error naming the argument (never its value) and change nothing."""

from __future__ import annotations

import pytest

from kandev.domain.validation import MAX_PROMPT_BYTES
from tests.integration.mcp_bridge.conftest import agent_on, call_tool
from tests.support.counts import row_counts
from tests.support.factories import new_task

BAD_TEXT = {"nul": "secret\x00value", "surrogate": "secret\ud800value"}


async def workflow_of(surface, external, workspace_id: str) -> str:
    failed, listed = await call_tool(surface, external, "list_workflows_kandev", workspace_id=workspace_id)
    assert not failed
    return listed["workflows"][0]["id"]


@pytest.mark.parametrize("kind", sorted(BAD_TEXT))
@pytest.mark.parametrize("argument", ["title", "description", "external_id"])
async def test_bad_text_in_a_tool_argument_is_invalid_arguments_naming_it(
    surface, external, db, workspace_id, kind, argument
):
    before = await row_counts(db)
    arguments = {"workspace_id": workspace_id, "title": "ok", argument: BAD_TEXT[kind]}
    failed, result = await call_tool(surface, external, "create_task_kandev", **arguments)
    assert failed and result["code"] == "INVALID_ARGUMENTS"
    assert f"'{argument}'" in result["error"]
    assert "secret" not in result["error"] and "value" not in result["error"]
    assert await row_counts(db) == before


@pytest.mark.parametrize("kind", sorted(BAD_TEXT))
async def test_bad_text_inside_a_nested_argument_names_its_path(surface, external, db, services, workspace_id, kind):
    task_id = await new_task(services, workspace_id, "Sources")
    before = await row_counts(db)
    sources = [{"type": "folder", "path": BAD_TEXT[kind]}]
    failed, result = await call_tool(
        surface, external, "add_workspace_sources_kandev", task_id=task_id, sources=sources
    )
    assert failed and result["code"] == "INVALID_ARGUMENTS"
    assert "'sources[0].path'" in result["error"]
    assert await row_counts(db) == before


@pytest.mark.parametrize("value", [2**31, 2**63, -(2**31) - 1, 1e20])
@pytest.mark.parametrize("argument", ["position", "wip_limit"])
async def test_an_integer_beyond_32_bits_is_invalid_arguments_naming_it(
    surface, external, db, workspace_id, argument, value
):
    workflow_id = await workflow_of(surface, external, workspace_id)
    before = await row_counts(db)
    arguments = {"workflow_id": workflow_id, "name": "Huge", argument: value}
    failed, result = await call_tool(surface, external, "create_workflow_step_kandev", **arguments)
    assert failed and result["code"] == "INVALID_ARGUMENTS", result
    assert f"'{argument}'" in result["error"]
    assert await row_counts(db) == before


async def test_a_list_limit_of_two_to_the_63_is_invalid_arguments_naming_it(surface, external, workspace_id):
    failed, result = await call_tool(surface, external, "list_tasks_kandev", workspace_id=workspace_id, limit=2**63)
    assert failed and result["code"] == "INVALID_ARGUMENTS"
    assert "'limit'" in result["error"]


async def test_a_prompt_over_one_mib_is_refused_on_create_and_message(surface, external, db, services, workspace_id):
    too_long = "x" * (MAX_PROMPT_BYTES + 1)
    before = await row_counts(db)
    failed, result = await call_tool(
        surface, external, "create_task_kandev", workspace_id=workspace_id, title="t", description=too_long
    )
    assert failed and result["code"] == "VALIDATION" and "prompt" in result["error"]
    assert await row_counts(db) == before

    target = await new_task(services, workspace_id, "Target")
    await services.sessions.start_task(target, "hello", None)
    agent = await agent_on(services, await new_task(services, workspace_id, "Sender"))
    before = await row_counts(db)
    failed, result = await call_tool(surface, agent, "message_task_kandev", task_id=target, prompt=too_long)
    assert failed and result["code"] == "VALIDATION" and "prompt" in result["error"]
    assert await row_counts(db) == before
