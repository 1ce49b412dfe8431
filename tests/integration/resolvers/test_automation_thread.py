"""An automation's thread and next-run indicator over GraphQL: Automation.thread and nextRun, automationThread
for a deleted automation, THREAD_MESSAGE entries and the indicator live on automationEvents, and neither the
thread nor its events within another user's reach."""

from __future__ import annotations

import asyncio
from typing import Any

from kandev.domain.automations.firing import fire
from kandev.domain.automations.launch import launch_run
from kandev.domain.automations.preflight import check_and_store
from kandev.domain.automations.records import AutomationFields, TriggerFields
from kandev.graphql.root import schema
from kandev.graphql.schema.context import Context
from kandev.models.enums import TriggerType
from tests.conftest import GraphQLCaller

ENTRY = "id kind text runId taskId createdAt"
INDICATOR = "state label at relative webhookMethod webhookPath runningSince elapsedSeconds slowAfterSeconds slow"
AUTOMATION = f"""query($id: ID!) {{ automation(id: $id) {{ nextRun {{ {INDICATOR} }}
    thread(first: 50) {{ pageInfo {{ hasNextPage }} nodes {{ {ENTRY} }} }} }} }}"""
THREAD = f"""query($id: ID!, $first: Int!, $after: String) {{ automationThread(automationId: $id, first: $first,
    after: $after) {{ pageInfo {{ hasNextPage endCursor }} nodes {{ {ENTRY} }} }} }}"""
EVENTS = f"""subscription($ws: ID!) {{ automationEvents(workspaceId: $ws) {{ kind automationId
    threadMessage {{ {ENTRY} }} nextRun {{ state label }} }} }}"""


async def automation(services: Any, workspace_id: str, **fields: Any) -> str:
    fields.setdefault("name", "Nightly")
    fields.setdefault("prompt", "/say hi")
    return (await services.automations.create(workspace_id, AutomationFields(**fields))).automation.id


async def test_the_indicator_says_when_it_fires_what_webhook_it_waits_on_disabled_and_running(
    gql, services, workspace_id
):
    every_hour = [TriggerFields(type=TriggerType.SCHEDULED, config={"expression": "0 * * * *", "timezone": ""})]
    scheduled = await automation(services, workspace_id, triggers=every_hour)
    hook = await automation(services, workspace_id, name="Hook", triggers=[TriggerFields(type=TriggerType.WEBHOOK)])

    indicator = (await gql(AUTOMATION, id=scheduled))["automation"]["nextRun"]
    assert indicator["state"] == "SCHEDULED" and indicator["at"] is not None
    assert indicator["relative"].startswith("in ") and indicator["label"].startswith("Next run at ")
    assert indicator["slowAfterSeconds"] == 600 and not indicator["slow"]
    indicator = (await gql(AUTOMATION, id=hook))["automation"]["nextRun"]
    assert (indicator["state"], indicator["webhookMethod"], indicator["webhookPath"]) == (
        "WEBHOOK",
        "POST",
        f"/api/v1/automations/webhook/{hook}",
    )
    await services.automations.set_enabled(hook, False)
    assert (await gql(AUTOMATION, id=hook))["automation"]["nextRun"]["state"] == "DISABLED"

    await fire(services.ctx, scheduled, trigger_id=None, trigger_type="manual")  # admitted: active, no worker
    indicator = (await gql(AUTOMATION, id=scheduled))["automation"]["nextRun"]
    assert indicator["state"] == "RUNNING" and indicator["runningSince"] is not None
    assert indicator["elapsedSeconds"] >= 0 and indicator["label"].startswith("Running for ")


async def test_a_deleted_automations_thread_stays_readable_page_by_page(gql, services, workspace_id):
    automation_id = await automation(services, workspace_id)
    await check_and_store(services.ctx, automation_id)
    await services.automations.delete(automation_id)

    assert (await gql.raw(AUTOMATION, id=automation_id)).errors[0].extensions["code"] == "NOT_FOUND"
    first = (await gql(THREAD, id=automation_id, first=2))["automationThread"]
    rest = (await gql(THREAD, id=automation_id, first=10, after=first["pageInfo"]["endCursor"]))["automationThread"]
    entries = first["nodes"] + rest["nodes"]
    assert [e["kind"] for e in entries] == ["CREATION_INTENT", "PREFLIGHT_ACK", "NEXT_RUN_MARKER", "DELETED"]
    assert first["pageInfo"]["hasNextPage"] and not rest["pageInfo"]["hasNextPage"]


async def test_new_thread_entries_and_the_indicator_arrive_on_automation_events(services, workspace_id):
    automation_id = await automation(services, workspace_id)
    stream = await schema.subscribe(
        EVENTS, variable_values={"ws": workspace_id}, context_value=Context.for_services(services)
    )
    seen: list[dict[str, Any]] = []
    async with asyncio.timeout(10):
        assert (await anext(stream)).data["automationEvents"]["kind"] == "SUBSCRIBED"  # type: ignore[arg-type]
        outcome = await fire(services.ctx, automation_id, trigger_id=None, trigger_type="manual")
        assert outcome.run_id is not None
        await launch_run(services.ctx, outcome.run_id)
        while len(seen) < 3:
            seen.append((await anext(stream)).data["automationEvents"])  # type: ignore[arg-type, union-attr]
    await stream.aclose()  # type: ignore[union-attr]

    created, launched, entry = seen
    assert created["kind"] == "RUN_CREATED" and created["nextRun"]["state"] == "RUNNING"
    assert launched["kind"] == "RUN_UPDATED"
    assert entry["kind"] == "THREAD_MESSAGE" and entry["automationId"] == automation_id
    assert (entry["threadMessage"]["kind"], entry["threadMessage"]["runId"]) == ("RUN_REQUEST", outcome.run_id)


async def test_another_user_cannot_read_the_thread_of_a_workspace_they_cannot_see(gql, services, bob, workspace_id):
    automation_id = await automation(services, workspace_id)
    refused = await GraphQLCaller(bob).raw(THREAD, id=automation_id, first=5)
    assert refused.errors[0].extensions["code"] == "NOT_FOUND" and refused.data is None
    assert len((await gql(THREAD, id=automation_id, first=5))["automationThread"]["nodes"]) == 1
