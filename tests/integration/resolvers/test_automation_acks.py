"""Pre-flight acks through schema.execute: createAutomation answers lastAck PENDING, reackAutomation sets it
PENDING again, and dryRunPreflight answers the ack of an unsaved definition without storing anything."""

from __future__ import annotations

import sys

from sqlalchemy import func, select

from kandev.domain.automations.preflight import check_and_store
from kandev.models import Automation

ACK = "status routedProfile { id name } tools credentials { name present outcome } nextRun summary detail ackedAt"
ERRORS = "__typename ... on Error { code message } ... on ValidationError { field }"
CREATE = f"""mutation($i: CreateAutomationInput!) {{ createAutomation(input: $i) {{ {ERRORS}
  ... on AutomationPayload {{ automation {{ id lastAck {{ {ACK} }} }} }} }} }}"""
REACK = f"""mutation($i: ReackAutomationInput!) {{ reackAutomation(input: $i) {{ {ERRORS}
  ... on AutomationPayload {{ automation {{ lastAck {{ status detail }} }} }} }} }}"""
DRY_RUN = f"""query($i: CreateAutomationInput!) {{ dryRunPreflight(input: $i) {{ {ERRORS}
  ... on AutomationAck {{ {ACK} }} }} }}"""
READ = f"query($id: ID!) {{ automation(id: $id) {{ lastAck {{ {ACK} }} }} }}"
SCHEDULE = [{"type": "SCHEDULED", "expression": "*/15 * * * *", "timezone": "Europe/Berlin"}]


async def scripted(gql, workspace_id: str) -> str:
    answer = await gql("query($ws: ID!) { agentProfiles(workspaceId: $ws) { id kind } }", ws=workspace_id)
    return next(p["id"] for p in answer["agentProfiles"] if p["kind"] == "SCRIPTED")


async def test_a_created_automation_answers_a_pending_ack_and_reads_the_stored_one_once_checked(
    gql, services, workspace_id
):
    definition = {
        "workspaceId": workspace_id,
        "name": "Quarter-hourly",
        "prompt": "Check the build",
        "agentProfileId": await scripted(gql, workspace_id),
        "triggers": SCHEDULE,
    }
    created = (await gql(CREATE, i=definition))["createAutomation"]
    assert created["automation"]["lastAck"] == {
        "status": "PENDING",
        "routedProfile": None,
        "tools": [],
        "credentials": [],
        "nextRun": None,
        "summary": "",
        "detail": "the pre-flight check is queued",
        "ackedAt": None,
    }
    automation_id = created["automation"]["id"]
    await check_and_store(services.ctx, automation_id)
    ack = (await gql(READ, id=automation_id))["automation"]["lastAck"]
    assert ack["status"] == "OK" and ack["routedProfile"]["name"] == "Scripted" and ack["ackedAt"]
    assert ack["summary"].startswith("Every 15 minutes (Europe/Berlin)")
    assert "create_task_kandev" in ack["tools"]


async def test_reack_sets_the_ack_pending_and_an_unknown_automation_is_not_found(gql, services, workspace_id):
    definition = {"workspaceId": workspace_id, "name": "Any", "prompt": "p", "triggers": SCHEDULE}
    automation_id = (await gql(CREATE, i=definition))["createAutomation"]["automation"]["id"]
    await check_and_store(services.ctx, automation_id)
    assert (await gql(READ, id=automation_id))["automation"]["lastAck"]["status"] == "OK"  # the workspace default
    answer = (await gql(REACK, i={"automationId": automation_id}))["reackAutomation"]
    assert answer["automation"]["lastAck"]["status"] == "PENDING"
    missing = (await gql(REACK, i={"automationId": "nope"}))["reackAutomation"]
    assert missing["__typename"] == "NotFoundError"


async def test_a_dry_run_answers_the_ack_and_stores_nothing_and_a_bad_schedule_is_refused_on_its_field(
    gql, db, workspace_id
):
    definition = {
        "workspaceId": workspace_id,
        "name": "Draft",
        "prompt": "Triage",
        "agentProfileId": await scripted(gql, workspace_id),
        "triggers": SCHEDULE,
    }
    ack = (await gql(DRY_RUN, i=definition))["dryRunPreflight"]
    assert ack["__typename"] == "AutomationAck" and ack["status"] == "OK" and ack["nextRun"]
    bad = {**definition, "triggers": [{"type": "SCHEDULED", "expression": "not cron"}]}
    refused = (await gql(DRY_RUN, i=bad))["dryRunPreflight"]
    assert refused["__typename"] == "ValidationError"
    async with db.read() as session:
        assert await session.scalar(select(func.count()).select_from(Automation)) == 0


async def test_updating_an_agent_profile_to_a_missing_command_re_acks_its_automations_with_a_thread_message(
    gql, services, workspace_id
):
    profile = """mutation($i: CreateAgentProfileInput!) { createAgentProfile(input: $i) { __typename
      ... on CreateAgentProfilePayload { agentProfile { id } } } }"""
    created = await gql(profile, i={"workspaceId": workspace_id, "name": "Pythonic", "command": [sys.executable]})
    profile_id = created["createAgentProfile"]["agentProfile"]["id"]
    definition = {"workspaceId": workspace_id, "name": "Hourly", "prompt": "p", "agentProfileId": profile_id}
    automation_id = (await gql(CREATE, i={**definition, "triggers": SCHEDULE}))["createAutomation"]["automation"]["id"]
    await check_and_store(services.ctx, automation_id)
    assert (await gql(READ, id=automation_id))["automation"]["lastAck"]["status"] == "OK"

    update = """mutation($i: UpdateAgentProfileInput!) { updateAgentProfile(input: $i) { __typename } }"""
    changed = await gql(update, i={"agentProfileId": profile_id, "command": ["no-such-agent-kandev-gql"]})
    assert changed["updateAgentProfile"]["__typename"] == "AgentProfilePayload"
    assert (await gql(READ, id=automation_id))["automation"]["lastAck"]["status"] == "PENDING"
    await check_and_store(services.ctx, automation_id)
    thread = "query($id: ID!) { automation(id: $id) { lastAck { status detail } thread { nodes { kind text } } } }"
    read = (await gql(thread, id=automation_id))["automation"]
    assert read["lastAck"] == {
        "status": "FAILED",
        "detail": "agent profile 'Pythonic' is unavailable: command 'no-such-agent-kandev-gql' is not on PATH",
    }
    assert read["thread"]["nodes"][-2:] == [
        {
            "kind": "PREFLIGHT_ACK",
            "text": "Agent profile 'Pythonic' became unavailable: command 'no-such-agent-kandev-gql' is not on PATH. "
            "The pre-flight check runs again.",
        },
        {"kind": "PREFLIGHT_ACK", "text": read["thread"]["nodes"][-1]["text"]},
    ]
    assert read["thread"]["nodes"][-1]["text"].startswith("Pre-flight check: FAILED.")
