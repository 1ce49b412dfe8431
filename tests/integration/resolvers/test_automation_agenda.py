"""validateCron, when automations fire next (Automation.nextFire, AutomationTrigger.nextFire) and the agenda
of a workspace, through schema.execute."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import update

from kandev.domain.automations.schedule import Schedule
from kandev.models import AutomationTrigger
from kandev.platform.database import Database
from tests.conftest import GraphQLCaller
from tests.support.factories import automation_run

CHECK = """query($e: String!, $tz: String, $n: Int) { validateCron(expression: $e, timezone: $tz, count: $n) {
  valid error description nextFires } }"""
CREATE = """mutation($i: CreateAutomationInput!) { createAutomation(input: $i) { __typename
  ... on Error { message } ... on AutomationPayload { automation { id nextFire
    triggers { id type updatedAt nextFire } } } } }"""
ONE = "query($id: ID!) { automation(id: $id) { nextFire enabled triggers { id type enabled nextFire } } }"
SET_ENABLED = """mutation($i: SetAutomationEnabledInput!) { setAutomationEnabled(input: $i) { __typename } }"""
SET_TRIGGER_ENABLED = """mutation($i: SetAutomationTriggerEnabledInput!) { setAutomationTriggerEnabled(input: $i) {
  __typename } }"""
DELETE = "mutation($id: ID!) { deleteAutomation(automationId: $id) { __typename } }"
AGENDA = """query($ws: ID!) { agenda(workspaceId: $ws) {
  upcoming { nextFire automation { id name } trigger { id type nextFire } }
  recent { id automationId status titleSnapshot createdAt } } }"""


def when(text: str) -> datetime:
    return datetime.fromisoformat(text)


def scheduled(expression: str, timezone: str = "") -> list[dict[str, Any]]:
    return [{"type": "SCHEDULED", "expression": expression, "timezone": timezone}]


async def create(gql: GraphQLCaller, workspace_id: str, name: str = "Nightly", **fields: Any) -> dict[str, Any]:
    payload = (await gql(CREATE, i={"workspaceId": workspace_id, "name": name, "prompt": "/end", **fields}))[
        "createAutomation"
    ]
    assert payload["__typename"] == "AutomationPayload", payload
    return payload["automation"]


async def save_trigger_at(db: Database, trigger_id: str, instant: datetime) -> None:
    """The trigger as if last saved at `instant`, its next fire not stored yet (the agenda computes it)."""
    async with db.transaction() as session:
        await session.execute(
            update(AutomationTrigger)
            .where(AutomationTrigger.id == trigger_id)
            .values(updated_at=instant, next_fire_at=None)
        )


def one_of(found: str, schedule: Schedule, before: datetime, after: datetime) -> bool:
    """The fire after `before` or after `after`: a query made between them saw one of those nows."""
    return when(found) in {schedule.next_after(before), schedule.next_after(after)}


# -- validateCron --------------------------------------------------------------------------------


async def test_validate_cron_describes_a_valid_expression_and_lists_its_next_fires_in_its_zone(gql):
    before = datetime.now(UTC)
    check = (await gql(CHECK, e="0 9 * * 1-5", tz="Europe/Berlin", n=3))["validateCron"]

    assert check["valid"] is True and check["error"] is None
    assert "09:00" in check["description"] and "Europe/Berlin" in check["description"]
    fires = [when(f) for f in check["nextFires"]]
    assert len(fires) == 3 and fires == sorted(fires) and fires[0] > before
    for fire in fires:
        local = fire.astimezone(ZoneInfo("Europe/Berlin"))
        assert (local.hour, local.minute, local.weekday() < 5) == (9, 0, True)


async def test_validate_cron_reads_the_expression_in_the_timezone_and_empty_means_utc(gql):
    in_utc = (await gql(CHECK, e="0 9 * * *", tz="", n=1))["validateCron"]
    in_tokyo = (await gql(CHECK, e="0 9 * * *", tz="Asia/Tokyo", n=1))["validateCron"]
    assert when(in_utc["nextFires"][0]).hour == 9 and "(UTC)" in in_utc["description"]
    assert when(in_tokyo["nextFires"][0]).hour == 0  # 09:00 in Tokyo is 00:00 UTC


@pytest.mark.parametrize(
    ("expression", "timezone", "says"),
    [
        ("61 * * * *", "", "minute"),
        ("every day", "", "five fields"),
        ("@every 10s", "", "at least 1 minute"),
        ("0 9 * * *", "Mars/Olympus_Mons", "IANA"),
        ("x" * 201, "", "at most 200"),
    ],
    ids=["minute out of range", "not cron", "every too short", "unknown timezone", "over-long"],
)
async def test_validate_cron_answers_an_invalid_expression_with_why_and_no_error(gql, expression, timezone, says):
    answer = await gql.raw(CHECK, e=expression, tz=timezone, n=5)
    assert answer.errors is None
    check = answer.data["validateCron"]
    assert check["valid"] is False and says in check["error"]
    assert check["description"] is None and check["nextFires"] == []


async def test_validate_cron_lists_five_fires_by_default_and_at_most_fifty(gql):
    default = (await gql('{ validateCron(expression: "@hourly") { nextFires } }'))["validateCron"]
    assert len(default["nextFires"]) == 5
    assert len((await gql(CHECK, e="@hourly", tz="", n=50))["validateCron"]["nextFires"]) == 50
    for count in (0, 51, -1):
        refused = await gql.raw(CHECK, e="@hourly", tz="", n=count)
        assert refused.errors[0].extensions["code"] == "VALIDATION"
        assert refused.errors[0].extensions["field"] == "count"


async def test_validate_cron_refuses_text_beyond_its_declared_length_before_parsing_it(gql):
    refused = await gql.raw(CHECK, e="* " * 501, tz="", n=1)
    assert refused.errors[0].extensions["code"] == "VALIDATION"
    assert refused.errors[0].extensions["field"] == "expression"


async def test_validate_cron_counts_every_from_now(gql):
    before = datetime.now(UTC)
    fires = [when(f) for f in (await gql(CHECK, e="@every 90m", tz="", n=2))["validateCron"]["nextFires"]]
    after = datetime.now(UTC)
    assert before + timedelta(minutes=90) <= fires[0] <= after + timedelta(minutes=90)
    assert fires[1] - fires[0] == timedelta(minutes=90)


# -- nextFire ------------------------------------------------------------------------------------


async def test_a_cron_automation_fires_next_at_its_schedules_next_occurrence(gql, workspace_id):
    before = datetime.now(UTC)
    made = await create(gql, workspace_id, triggers=scheduled("30 8 * * *", "America/New_York"))
    after = datetime.now(UTC)

    schedule = Schedule.parse("30 8 * * *", "America/New_York")
    assert one_of(made["nextFire"], schedule, before, after)
    assert made["triggers"][0]["nextFire"] == made["nextFire"]


async def test_an_every_schedule_fires_at_its_last_save_plus_whole_periods(gql, db, workspace_id):
    made = await create(gql, workspace_id, triggers=scheduled("@every 1h"))
    saved = when(made["triggers"][0]["updatedAt"])
    assert when(made["nextFire"]) == saved + timedelta(hours=1)

    anchor = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=5, minutes=17, seconds=3)
    await save_trigger_at(db, made["triggers"][0]["id"], anchor)
    before = datetime.now(UTC)
    found = (await gql(ONE, id=made["id"]))["automation"]
    after = datetime.now(UTC)
    assert one_of(found["nextFire"], Schedule.parse("@every 1h", anchor=anchor), before, after)
    assert (when(found["nextFire"]) - anchor) % timedelta(hours=1) == timedelta(0)
    assert found["triggers"][0]["nextFire"] == found["nextFire"]


UPDATE = """mutation($i: UpdateAutomationInput!) { updateAutomation(input: $i) { __typename } }"""


async def test_the_every_anchor_moves_with_a_new_schedule_only_not_with_enabling_or_other_saves(gql, db, workspace_id):
    made = await create(gql, workspace_id, triggers=scheduled("@every 1h"))
    trigger_id = made["triggers"][0]["id"]
    anchor = datetime(2026, 1, 1, 0, 0, 17, tzinfo=UTC)
    await save_trigger_at(db, trigger_id, anchor)

    await gql(SET_TRIGGER_ENABLED, i={"triggerId": trigger_id, "enabled": False})
    await gql(SET_TRIGGER_ENABLED, i={"triggerId": trigger_id, "enabled": True})
    await gql(SET_ENABLED, i={"automationId": made["id"], "enabled": False})
    await gql(SET_ENABLED, i={"automationId": made["id"], "enabled": True})
    await gql(UPDATE, i={"automationId": made["id"], "name": "Renamed", "triggers": scheduled("@every 1h")})
    await gql(UPDATE, i={"automationId": made["id"], "triggers": [{**scheduled("@every 1h")[0], "enabled": False}]})
    await gql(SET_TRIGGER_ENABLED, i={"triggerId": trigger_id, "enabled": True})
    kept = (await gql(ONE, id=made["id"]))["automation"]
    assert (when(kept["nextFire"]) - anchor) % timedelta(hours=1) == timedelta(0)

    before = datetime.now(UTC)
    await gql(UPDATE, i={"automationId": made["id"], "triggers": scheduled("@every 2h")})
    moved = when((await gql(ONE, id=made["id"]))["automation"]["nextFire"])
    assert before + timedelta(hours=2) <= moved <= datetime.now(UTC) + timedelta(hours=2)


async def test_a_disabled_automation_or_schedule_has_no_next_fire(gql, workspace_id):
    made = await create(gql, workspace_id, triggers=scheduled("*/5 * * * *"))
    assert made["nextFire"] is not None
    await gql(SET_ENABLED, i={"automationId": made["id"], "enabled": False})
    off = (await gql(ONE, id=made["id"]))["automation"]
    assert off["nextFire"] is None and off["triggers"][0]["nextFire"] is None

    await gql(SET_ENABLED, i={"automationId": made["id"], "enabled": True})
    await gql(SET_TRIGGER_ENABLED, i={"triggerId": made["triggers"][0]["id"], "enabled": False})
    trigger_off = (await gql(ONE, id=made["id"]))["automation"]
    assert trigger_off["nextFire"] is None and trigger_off["triggers"][0]["nextFire"] is None


async def test_webhook_and_github_only_automations_have_no_next_fire(gql, workspace_id):
    hook = await create(gql, workspace_id, triggers=[{"type": "WEBHOOK"}])
    assert hook["nextFire"] is None and hook["triggers"][0]["nextFire"] is None
    pushes = await create(gql, workspace_id, triggers=[{"type": "GITHUB_PUSH"}])
    assert pushes["nextFire"] is None and pushes["triggers"][0]["nextFire"] is None
    bare = await create(gql, workspace_id)
    assert bare["nextFire"] is None


# -- agenda --------------------------------------------------------------------------------------


async def test_the_agenda_lists_enabled_scheduled_automations_soonest_first(gql, workspace_id):
    later = await create(gql, workspace_id, "A later", triggers=scheduled("@every 3h"))
    sooner = await create(gql, workspace_id, "B sooner", triggers=scheduled("@every 1h"))
    middle = await create(gql, workspace_id, "C middle", triggers=scheduled("@every 2h"))
    # The same next fire: the name decides.
    new_year_z = await create(gql, workspace_id, "Z new year", triggers=scheduled("0 0 1 1 *"))
    new_year_y = await create(gql, workspace_id, "Y new year", triggers=scheduled("0 0 1 1 *"))
    disabled = await create(gql, workspace_id, "Off", enabled=False, triggers=scheduled("@every 1h"))
    trigger_off = await create(gql, workspace_id, "Trigger off", triggers=scheduled("@every 1h"))
    await gql(SET_TRIGGER_ENABLED, i={"triggerId": trigger_off["triggers"][0]["id"], "enabled": False})
    await create(gql, workspace_id, "Hook", triggers=[{"type": "WEBHOOK"}])
    deleted = await create(gql, workspace_id, "Gone", triggers=scheduled("@every 1h"))
    await gql(DELETE, id=deleted["id"])

    upcoming = (await gql(AGENDA, ws=workspace_id))["agenda"]["upcoming"]

    assert [item["automation"]["id"] for item in upcoming] == [
        sooner["id"],
        middle["id"],
        later["id"],
        new_year_y["id"],
        new_year_z["id"],
    ]
    assert disabled["id"] not in repr(upcoming)
    for item, made in zip(upcoming, (sooner, middle, later), strict=False):
        assert item["trigger"] == {"id": made["triggers"][0]["id"], "type": "SCHEDULED", "nextFire": item["nextFire"]}
        assert item["nextFire"] == made["nextFire"]
    fires = [when(item["nextFire"]) for item in upcoming]
    assert fires == sorted(fires)


async def test_the_agenda_feed_is_the_newest_fifty_runs_of_the_workspaces_live_automations(
    gql, db, bob, bob_workspace, workspace_id
):
    nightly = await create(gql, workspace_id, "Nightly")
    hourly = await create(gql, workspace_id, "Hourly")
    gone = await create(gql, workspace_id, "Gone")
    theirs = await create(GraphQLCaller(bob), bob_workspace, "Bob's")
    start = datetime(2026, 11, 1, tzinfo=UTC)
    for index in range(60):
        automation = nightly if index % 2 else hourly
        status = "skipped" if index % 5 == 0 else "succeeded"
        at = start + timedelta(minutes=index)
        await automation_run(db, automation["id"], at, title_snapshot=f"Run {index}", status=status)
    await automation_run(db, theirs["id"], start + timedelta(days=1), title_snapshot="Bob's run")
    await automation_run(db, gone["id"], start + timedelta(days=1), title_snapshot="Deleted's run")
    await gql(DELETE, id=gone["id"])

    recent = (await gql(AGENDA, ws=workspace_id))["agenda"]["recent"]

    assert [run["titleSnapshot"] for run in recent] == [f"Run {index}" for index in range(59, 9, -1)]
    assert {run["automationId"] for run in recent} == {nightly["id"], hourly["id"]}
    assert recent[0]["status"] == "SUCCEEDED" and recent[4]["status"] == "SKIPPED"  # Run 55


async def test_the_agenda_of_a_workspace_the_caller_cannot_see_is_not_found(gql, bob, workspace_id):
    await create(gql, workspace_id, triggers=scheduled("@hourly"))
    for workspace in (workspace_id, "no-such-workspace"):
        refused = await GraphQLCaller(bob).raw(AGENDA, ws=workspace)
        assert refused.errors[0].extensions["code"] == "NOT_FOUND"
    own = (await bob.workspaces.create("Bob's")).id
    assert (await GraphQLCaller(bob)(AGENDA, ws=own))["agenda"] == {"upcoming": [], "recent": []}


LIST_WITH_FIRES = """query($ws: ID!) { automations(workspaceId: $ws) { id nextFire triggers { nextFire } } }"""


async def test_next_fires_and_the_agenda_cost_the_same_statements_for_2_and_12_automations(gql, db, workspace_id):
    from tests.integration.test_sidebar_queries import statements_for

    async def costs() -> tuple[int, int]:
        listed, _ = await statements_for(gql, db, LIST_WITH_FIRES, ws=workspace_id)
        agenda, _ = await statements_for(gql, db, AGENDA, ws=workspace_id)
        return listed, agenda

    for index in range(2):
        await create(gql, workspace_id, f"A{index}", triggers=scheduled(f"@every {index + 1}h"))
    small = await costs()
    for index in range(10):
        await create(gql, workspace_id, f"B{index}", triggers=scheduled(f"{index} 9 * * *", "Europe/Berlin"))
    assert await costs() == small
    assert small[1] <= 5  # workspace check, automations, triggers, repositories, runs
