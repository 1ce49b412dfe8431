"""A "describe an automation" chat's agent: a hidden task off the board and lists, whose session gets exactly
the authoring tools (named as the spec names them); what it creates is recorded as made in chat, what it
changes is a re-authoring in the automation's thread, and a webhook secret never reaches it."""

from __future__ import annotations

from typing import Any

import pytest

from kandev.domain.errors import PermissionDeniedError
from kandev.domain.services import Services
from kandev.domain.tasks.service import CreateTask, TaskFilter
from kandev.edge.mcp_bridge.surface import McpCaller
from kandev.models.enums import TaskOrigin, ThreadKind
from tests.integration.mcp_bridge.conftest import agent_on, call_tool, token_caller, unknown_tool

AUTHORING_TOOLS = {
    "list_available_agents",
    "validate_cron",
    "dry_run_preflight",
    "create_automation",
    "update_automation",
    "delete_automation",
    "trigger_automation_now",
}


async def authoring(services: Any, db: Any, settings: Any, workspace_id: str) -> tuple[str, McpCaller]:
    started = await services.automations.start_authoring(workspace_id, "every weekday at 9, check the CI", None)
    return started.task.id, await token_caller(services, db, settings, started.task.id, started.session.id)


async def test_an_authoring_chat_is_a_hidden_task_whose_agent_gets_exactly_the_authoring_tools(
    surface, services, db, settings, workspace_id
):
    task_id, caller = await authoring(services, db, settings, workspace_id)

    assert {tool.name for tool in await surface.list_tools(caller)} == AUTHORING_TOOLS
    task = await services.tasks.get(task_id)
    assert task.origin == TaskOrigin.AUTOMATION_AUTHORING
    assert task_id not in [t.id for t in (await services.tasks.list(workspace_id, TaskFilter())).records]
    await unknown_tool(surface, caller, "list_tasks_kandev")


async def test_it_checks_a_schedule_lists_agents_creates_in_chat_reauthors_runs_and_deletes(
    surface, services, db, settings, workspace_id
):
    _, caller = await authoring(services, db, settings, workspace_id)

    error, cron = await call_tool(surface, caller, "validate_cron", expression="0 9 * * 1-5", timezone="Europe/Berlin")
    assert (
        not error and cron["valid"] and len(cron["next_fires"]) == 5 and "Monday through Friday" in cron["description"]
    )
    error, agents = await call_tool(surface, caller, "list_available_agents", workspace_id=workspace_id)
    assert not error and any(agent["available"] for agent in agents["agents"])

    error, created = await call_tool(
        surface,
        caller,
        "create_automation",
        workspace_id=workspace_id,
        name="CI check",
        prompt="/say checked",
        triggers=[{"type": "webhook"}],
    )
    assert not error, created
    automation_id = created["automation_id"]
    assert created["automation"]["created_via"] == "CHAT"
    assert created["automation"]["webhook_secret"].startswith("its webhook secret is not shown here")
    assert (await services.automations.get(automation_id)).has_webhook_secret

    error, updated = await call_tool(surface, caller, "update_automation", automation_id=automation_id, name="CI")
    assert not error and updated["automation"]["name"] == "CI"
    error, ran = await call_tool(surface, caller, "trigger_automation_now", automation_id=automation_id)
    assert not error and ran["admission"] == "FIRED" and ran["run_id"]
    error, deleted = await call_tool(surface, caller, "delete_automation", automation_id=automation_id)
    assert not error and deleted == {"automation_id": automation_id, "deleted": True}

    entries = (await services.automations.thread(automation_id)).entries
    assert [e.kind for e in entries] == [
        ThreadKind.CREATION_INTENT,  # its ack and plan come when the check runs (no worker here)
        ThreadKind.REAUTHORED,
        ThreadKind.DELETED,  # the run it fired never launched (no worker): its request would come with that
    ]
    assert entries[0].text.startswith("Created in a chat by session:")
    assert entries[1].text.startswith("Re-authored in chat by session:") and "Name: CI check → CI" in entries[1].text


async def test_only_a_person_starts_an_authoring_chat_and_a_plain_agent_has_no_authoring_tool(
    surface, services, workspace_id
):
    plain = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Plain"))).task
    agent = await agent_on(services, plain.id)
    await unknown_tool(surface, agent, "create_automation", workspace_id=workspace_id, name="X", prompt="y")
    as_agent = Services(services.ctx.with_principal(agent.principal))
    with pytest.raises(PermissionDeniedError):
        await as_agent.automations.start_authoring(workspace_id, "make one", None)
