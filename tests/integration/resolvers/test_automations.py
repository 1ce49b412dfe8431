"""Workspace automations through schema.execute: create, read, update, enable, delete, the trigger layouts,
the webhook secret, another user's reach, and the runs connection."""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from kandev.domain.services import Services
from kandev.models import Automation, AutomationRun, AutomationTrigger
from kandev.models.base import new_id
from kandev.platform.database import Database
from tests.conftest import GraphQLCaller
from tests.support.git_repos import make_repository

FIELDS = """id workspaceId name description agentProfileId executorProfileId destination workflowId
  workflowStepId prompt titleTemplate context maxConcurrentRuns enabled createdVia createdBy hasWebhookSecret
  triggers { id type enabled expression timezone filters }
  repositories { repositoryId baseBranch position }"""
ERRORS = """__typename ... on Error { code message fields } ... on ValidationError { field }
  ... on NotFoundError { entity }"""
PAYLOAD = f"... on AutomationPayload {{ webhookSecret automation {{ {FIELDS} }} }}"
SECRET = "... on WebhookSecretPayload { automationId secret }"
CREATE = f"mutation($i: CreateAutomationInput!) {{ createAutomation(input: $i) {{ {ERRORS} {PAYLOAD} }} }}"
UPDATE = f"mutation($i: UpdateAutomationInput!) {{ updateAutomation(input: $i) {{ {ERRORS} {PAYLOAD} }} }}"
SET_ENABLED = f"""mutation($i: SetAutomationEnabledInput!) {{ setAutomationEnabled(input: $i) {{ {ERRORS}
  {PAYLOAD} }} }}"""
SET_TRIGGER_ENABLED = f"""mutation($i: SetAutomationTriggerEnabledInput!) {{ setAutomationTriggerEnabled(input: $i)
  {{ {ERRORS} {PAYLOAD} }} }}"""
DELETE = f"""mutation($id: ID!) {{ deleteAutomation(automationId: $id) {{ {ERRORS}
  ... on DeleteAutomationPayload {{ automationId }} }} }}"""
REVEAL = f"mutation($id: ID!) {{ revealWebhookSecret(automationId: $id) {{ {ERRORS} {SECRET} }} }}"
ROTATE = f"mutation($id: ID!) {{ rotateWebhookSecret(automationId: $id) {{ {ERRORS} {SECRET} }} }}"
LIST = f"query($ws: ID!) {{ automations(workspaceId: $ws) {{ {FIELDS} }} }}"
ONE = f"query($id: ID!) {{ automation(id: $id) {{ {FIELDS} }} }}"
RUNS = """query($id: ID!, $first: Int, $after: String, $status: AutomationRunStatus,
  $triggerType: AutomationRunTriggerType) {
  automationRuns(automationId: $id, first: $first, after: $after, status: $status, triggerType: $triggerType) {
    totalCount pageInfo { hasNextPage endCursor } edges { cursor node { id status triggerType triggerId
      titleSnapshot } } } }"""

NESTED_RUNS = """query($id: ID!) { automation(id: $id) {
  runs(first: 2) { nodes { titleSnapshot } pageInfo { hasNextPage } } } }"""

SCHEDULE = {"type": "SCHEDULED", "expression": "*/15 * * * *", "timezone": "Europe/Berlin"}
PR = {"type": "GITHUB_PR", "filters": {"repositories": ["acme/api"], "base_branches": ["release/*"]}}
WEBHOOK = {"type": "WEBHOOK"}


async def run(gql: GraphQLCaller, document: str, **variables: Any) -> dict[str, Any]:
    return next(iter((await gql(document, **variables)).values()))


async def create(gql: GraphQLCaller, workspace_id: str, **fields: Any) -> dict[str, Any]:
    payload = await run(gql, CREATE, i={"workspaceId": workspace_id, "name": "Nightly", "prompt": "/end", **fields})
    assert payload["__typename"] == "AutomationPayload", payload
    return payload


async def count_automations(db: Database) -> int:
    async with db.read() as session:
        return await session.scalar(select(func.count()).select_from(Automation)) or 0


async def repository(services: Services, workspace_id: str, folder: Path, name: str) -> str:
    path = make_repository(folder / name, branches=("develop",))
    return (await services.repositories.create(workspace_id, name, str(path))).id


# -- create and read -------------------------------------------------------------------------


async def test_an_automation_is_created_with_its_defaults_and_read_by_id_and_in_its_workspace(gql, workspace_id):
    made = (await create(gql, workspace_id, description="  every night  "))["automation"]

    assert made["destination"] == "HIDDEN" and made["context"] == "NEW_TASK_PER_RUN"
    assert made["maxConcurrentRuns"] == 1 and made["enabled"] is True and made["createdVia"] == "FORM"
    assert made["description"] == "every night" and made["createdBy"] == "user:local"
    assert made["triggers"] == [] and made["repositories"] == [] and made["hasWebhookSecret"] is False
    assert (await run(gql, ONE, id=made["id"])) == made
    assert (await run(gql, LIST, ws=workspace_id)) == [made]


STEPS = "query($id: ID!) { workflow(id: $id) { steps { id } } }"


async def test_a_normal_destination_takes_a_workflow_of_the_workspace_and_optionally_one_of_its_steps(
    gql, services, workspace_id
):
    default_workflow = (await services.workspaces.list())[0].default_workflow_id
    other = (await services.workflows.create(workspace_id, "Pipeline")).workflow
    made = (await create(gql, workspace_id, destination="NORMAL", workflowId=default_workflow))["automation"]
    assert made["destination"] == "NORMAL" and made["workflowStepId"] is None

    second = (await gql(STEPS, id=default_workflow))["workflow"]["steps"][1]["id"]
    with_step = await run(gql, UPDATE, i={"automationId": made["id"], "workflowStepId": second})
    assert with_step["automation"]["workflowStepId"] == second
    # Another workflow: the old step is not one of its steps, so it goes unless a new one is given.
    moved = await run(gql, UPDATE, i={"automationId": made["id"], "workflowId": other.id})
    assert moved["automation"]["workflowId"] == other.id and moved["automation"]["workflowStepId"] is None
    foreign_step = await run(gql, UPDATE, i={"automationId": made["id"], "workflowStepId": second})
    assert (foreign_step["__typename"], foreign_step["field"]) == ("ValidationError", "workflowStepId")


async def test_repositories_are_saved_in_order_with_the_default_branch_when_none_is_given(
    gql, services, workspace_id, tmp_path
):
    api = await repository(services, workspace_id, tmp_path, "api")
    web = await repository(services, workspace_id, tmp_path, "web")
    made = await create(
        gql, workspace_id, repositories=[{"repositoryId": web, "baseBranch": "develop"}, {"repositoryId": api}]
    )
    assert made["automation"]["repositories"] == [
        {"repositoryId": web, "baseBranch": "develop", "position": 0},
        {"repositoryId": api, "baseBranch": "main", "position": 1},
    ]
    reordered = await run(
        gql, UPDATE, i={"automationId": made["automation"]["id"], "repositories": [{"repositoryId": api}]}
    )
    assert reordered["automation"]["repositories"] == [{"repositoryId": api, "baseBranch": "main", "position": 0}]
    scratch = await run(gql, UPDATE, i={"automationId": made["automation"]["id"], "repositories": []})
    assert scratch["automation"]["repositories"] == []


async def test_a_chat_made_automation_says_so_and_continue_session_keeps_one_active_run(gql, workspace_id):
    made = (await create(gql, workspace_id, createdVia="CHAT", context="CONTINUE_SESSION"))["automation"]
    assert made["createdVia"] == "CHAT" and made["context"] == "CONTINUE_SESSION" and made["maxConcurrentRuns"] == 1


# -- every rule refuses with a typed error on its field and writes nothing --------------------


async def _foreign_ids(bob: Services, bob_workspace: str) -> dict[str, str]:
    from kandev.models.enums import AgentKind
    from tests.support.factories import new_agent_profile

    profile = await new_agent_profile(bob, bob_workspace, "Bob's agent", AgentKind.SCRIPTED)
    workflow = (await bob.workflows.create(bob_workspace, "Bob's flow")).workflow
    return {"agent": profile.id, "workflow": workflow.id}


REFUSED = [
    ("blank name", {"name": "   "}, "name"),
    ("long name", {"name": "x" * 201}, "name"),
    ("blank prompt", {"prompt": "  "}, "prompt"),
    ("unknown agent profile", {"agentProfileId": "nope"}, "agentProfileId"),
    ("unknown executor profile", {"executorProfileId": "nope"}, "executorProfileId"),
    ("normal without workflow", {"destination": "NORMAL"}, "workflowId"),
    ("unknown workflow", {"workflowId": "nope"}, "workflowId"),
    ("step without workflow", {"workflowStepId": "nope"}, "workflowStepId"),
    ("no concurrency", {"maxConcurrentRuns": 0}, "maxConcurrentRuns"),
    ("continue with two runs", {"context": "CONTINUE_SESSION", "maxConcurrentRuns": 2}, "maxConcurrentRuns"),
    ("unknown repository", {"repositories": [{"repositoryId": "nope"}]}, "repositories[0].repositoryId"),
    ("two webhooks", {"triggers": [WEBHOOK, WEBHOOK]}, "triggers"),
    ("webhook beside a schedule", {"triggers": [SCHEDULE, WEBHOOK]}, "triggers"),
    ("two schedules", {"triggers": [SCHEDULE, SCHEDULE]}, "triggers"),
    ("two github conditions", {"triggers": [PR, {"type": "GITHUB_PUSH"}]}, "triggers"),
    ("schedule without expression", {"triggers": [{"type": "SCHEDULED"}]}, "triggers[0].expression"),
    ("not a cron expression", {"triggers": [{**SCHEDULE, "expression": "every day"}]}, "triggers[0].expression"),
    ("unknown filter", {"triggers": [{"type": "GITHUB_PUSH", "filters": {"paths": ["x"]}}]}, "triggers[0].config"),
    ("webhook with settings", {"triggers": [{"type": "WEBHOOK", "expression": "@daily"}]}, "triggers[0].config"),
    (
        "unknown CI conclusion",
        {"triggers": [{"type": "GITHUB_CI", "filters": {"conclusions": ["exploded"]}}]},
        "triggers[0].config.conclusions",
    ),
    (
        "a filter that is not a list",
        {"triggers": [{**PR, "filters": {"authors": "bob"}}]},
        "triggers[0].config.authors",
    ),
]


@pytest.mark.parametrize(("fields", "field"), [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
async def test_a_create_that_breaks_a_rule_is_refused_on_its_field_and_writes_nothing(
    gql, db, workspace_id, fields, field
):
    answer = await run(gql, CREATE, i={"workspaceId": workspace_id, "name": "Nightly", "prompt": "/end", **fields})

    assert answer["__typename"] == "ValidationError", answer
    assert answer["field"] == field
    assert await count_automations(db) == 0


async def test_an_unknown_timezone_is_refused_on_the_schedule(gql, db, workspace_id):
    trigger = {**SCHEDULE, "timezone": "Mars/Olympus_Mons"}
    answer = await run(gql, CREATE, i={"workspaceId": workspace_id, "name": "N", "prompt": "p", "triggers": [trigger]})
    assert answer["__typename"] == "ValidationError" and answer["field"].startswith("triggers[0].")
    assert await count_automations(db) == 0


async def test_profiles_workflows_and_repositories_of_another_workspace_are_refused(
    gql, db, bob, bob_workspace, workspace_id, tmp_path
):
    foreign = await _foreign_ids(bob, bob_workspace)
    foreign_repository = await repository(bob, bob_workspace, tmp_path, "bobs")
    for fields, field in [
        ({"agentProfileId": foreign["agent"]}, "agentProfileId"),
        ({"destination": "NORMAL", "workflowId": foreign["workflow"]}, "workflowId"),
        ({"repositories": [{"repositoryId": foreign_repository}]}, "repositories[0].repositoryId"),
    ]:
        answer = await run(gql, CREATE, i={"workspaceId": workspace_id, "name": "N", "prompt": "p", **fields})
        assert (answer["__typename"], answer["field"]) == ("ValidationError", field)
    assert await count_automations(db) == 0


async def test_a_repository_listed_twice_is_refused(gql, services, db, workspace_id, tmp_path):
    api = await repository(services, workspace_id, tmp_path, "api")
    twice = [{"repositoryId": api}, {"repositoryId": api, "baseBranch": "develop"}]
    answer = await run(gql, CREATE, i={"workspaceId": workspace_id, "name": "N", "prompt": "p", "repositories": twice})
    assert (answer["__typename"], answer["field"]) == ("ValidationError", "repositories")
    assert await count_automations(db) == 0


async def test_a_refused_update_changes_nothing(gql, workspace_id):
    made = (await create(gql, workspace_id, triggers=[SCHEDULE]))["automation"]

    for fields, field in [
        ({"name": "Renamed", "maxConcurrentRuns": 3, "context": "CONTINUE_SESSION"}, "maxConcurrentRuns"),
        ({"name": "Renamed", "triggers": [WEBHOOK, SCHEDULE]}, "triggers"),
        ({"name": "Renamed", "destination": "NORMAL"}, "workflowId"),
        ({"prompt": "new", "triggers": [{**SCHEDULE, "expression": "61 * * * *"}]}, "triggers[0].expression"),
    ]:
        answer = await run(gql, UPDATE, i={"automationId": made["id"], **fields})
        assert (answer["__typename"], answer["field"]) == ("ValidationError", field)
    assert await run(gql, ONE, id=made["id"]) == made


async def test_an_update_changes_only_the_fields_given_and_null_clears_a_nullable_one(gql, workspace_id):
    made = (await create(gql, workspace_id, titleTemplate="Run {{trigger.type}}", description="d"))["automation"]
    updated = await run(gql, UPDATE, i={"automationId": made["id"], "description": None, "maxConcurrentRuns": 3})
    after = updated["automation"]
    assert after["description"] == "" and after["maxConcurrentRuns"] == 3
    assert {k: v for k, v in after.items() if k not in ("description", "maxConcurrentRuns")} == {
        k: v for k, v in made.items() if k not in ("description", "maxConcurrentRuns")
    }


# -- trigger layouts -----------------------------------------------------------------------------


async def trigger_rows(db: Database, automation_id: str) -> list[str]:
    async with db.read() as session:
        rows = await session.scalars(
            select(AutomationTrigger.type).where(AutomationTrigger.automation_id == automation_id)
        )
        return sorted(rows)


async def test_switching_to_the_webhook_layout_deletes_the_schedule_and_condition_and_back_deletes_the_webhook(
    gql, db, workspace_id
):
    made = (await create(gql, workspace_id, triggers=[SCHEDULE, PR]))["automation"]
    assert [t["type"] for t in made["triggers"]] == ["SCHEDULED", "GITHUB_PR"]
    assert made["triggers"][0]["expression"] == "*/15 * * * *" and made["triggers"][0]["filters"] is None
    assert made["triggers"][1]["filters"]["base_branches"] == ["release/*"]

    to_webhook = await run(gql, UPDATE, i={"automationId": made["id"], "triggers": [WEBHOOK]})
    assert [t["type"] for t in to_webhook["automation"]["triggers"]] == ["WEBHOOK"]
    assert to_webhook["webhookSecret"] and to_webhook["automation"]["hasWebhookSecret"] is True
    assert await trigger_rows(db, made["id"]) == ["webhook"]

    back = await run(gql, UPDATE, i={"automationId": made["id"], "triggers": [SCHEDULE]})
    assert [t["type"] for t in back["automation"]["triggers"]] == ["SCHEDULED"]
    assert back["webhookSecret"] is None and back["automation"]["hasWebhookSecret"] is False
    assert await trigger_rows(db, made["id"]) == ["scheduled"]
    revealed = await run(gql, REVEAL, id=made["id"])
    assert revealed["__typename"] == "ConflictError"


async def test_a_trigger_of_a_type_the_automation_has_keeps_its_id_and_an_omitted_trigger_set_is_kept(
    gql, workspace_id
):
    made = (await create(gql, workspace_id, triggers=[SCHEDULE, PR]))["automation"]
    ids = {t["type"]: t["id"] for t in made["triggers"]}
    changed = {**SCHEDULE, "expression": "0 9 * * 1-5", "timezone": ""}
    updated = (await run(gql, UPDATE, i={"automationId": made["id"], "triggers": [changed]}))["automation"]
    assert [(t["id"], t["expression"], t["timezone"]) for t in updated["triggers"]] == [
        (ids["SCHEDULED"], "0 9 * * 1-5", "")
    ]
    renamed = (await run(gql, UPDATE, i={"automationId": made["id"], "name": "Weekdays"}))["automation"]
    assert renamed["triggers"] == updated["triggers"]


async def test_github_conditions_get_their_default_filters(gql, workspace_id):
    made = (await create(gql, workspace_id, triggers=[{"type": "GITHUB_CI"}]))["automation"]
    assert made["triggers"][0]["filters"] == {"conclusions": ["failure"]}
    pr = (await run(gql, UPDATE, i={"automationId": made["id"], "triggers": [{"type": "GITHUB_PR"}]}))["automation"]
    assert pr["triggers"][0]["filters"] == {"events": ["opened"], "exclude_drafts": False}


async def test_an_automation_and_each_trigger_are_enabled_on_their_own(gql, workspace_id):
    made = (await create(gql, workspace_id, triggers=[SCHEDULE, PR]))["automation"]
    off = await run(gql, SET_ENABLED, i={"automationId": made["id"], "enabled": False})
    assert off["automation"]["enabled"] is False
    schedule_id = made["triggers"][0]["id"]
    trigger_off = await run(gql, SET_TRIGGER_ENABLED, i={"triggerId": schedule_id, "enabled": False})
    assert [t["enabled"] for t in trigger_off["automation"]["triggers"]] == [False, True]
    on = await run(gql, SET_ENABLED, i={"automationId": made["id"], "enabled": True})
    assert on["automation"]["enabled"] is True and on["automation"]["triggers"][0]["enabled"] is False
    unknown = await run(gql, SET_TRIGGER_ENABLED, i={"triggerId": "nope", "enabled": True})
    assert (unknown["__typename"], unknown["entity"]) == ("NotFoundError", "automation trigger")


async def test_a_deleted_automation_disappears_from_every_read_and_write(gql, workspace_id):
    made = (await create(gql, workspace_id, triggers=[WEBHOOK]))["automation"]
    deleted = await run(gql, DELETE, id=made["id"])
    assert deleted == {"__typename": "DeleteAutomationPayload", "automationId": made["id"]}

    assert await run(gql, LIST, ws=workspace_id) == []
    missing = await gql.raw(ONE, id=made["id"])
    assert missing.errors[0].extensions["code"] == "NOT_FOUND"
    for document, variables in [
        (UPDATE, {"i": {"automationId": made["id"], "name": "x"}}),
        (SET_ENABLED, {"i": {"automationId": made["id"], "enabled": True}}),
        (SET_TRIGGER_ENABLED, {"i": {"triggerId": made["triggers"][0]["id"], "enabled": True}}),
        (DELETE, {"id": made["id"]}),
        (REVEAL, {"id": made["id"]}),
        (ROTATE, {"id": made["id"]}),
    ]:
        assert (await run(gql, document, **variables))["__typename"] == "NotFoundError"


# -- the webhook secret --------------------------------------------------------------------------


async def test_the_webhook_secret_is_shown_once_revealed_again_and_rotated(gql, db, workspace_id):
    created = await create(gql, workspace_id, triggers=[WEBHOOK])
    secret, automation_id = created["webhookSecret"], created["automation"]["id"]
    assert isinstance(secret, str) and len(secret) >= 40

    renamed = await run(gql, UPDATE, i={"automationId": automation_id, "name": "Hook", "triggers": [WEBHOOK]})
    assert renamed["webhookSecret"] is None  # the kept webhook keeps its secret, not shown again
    revealed = await run(gql, REVEAL, id=automation_id)
    assert revealed == {"__typename": "WebhookSecretPayload", "automationId": automation_id, "secret": secret}

    rotated = await run(gql, ROTATE, id=automation_id)
    assert rotated["secret"] != secret and len(rotated["secret"]) >= 40
    assert (await run(gql, REVEAL, id=automation_id))["secret"] == rotated["secret"]
    async with db.read() as session:
        stored = await session.scalar(
            select(Automation.webhook_secret_ciphertext).where(Automation.id == automation_id)
        )
    assert stored and rotated["secret"].encode() not in stored and secret.encode() not in stored


async def test_the_webhook_secret_never_reaches_logs_or_error_texts(gql, workspace_id, caplog):
    caplog.set_level(logging.DEBUG)
    created = await create(gql, workspace_id, triggers=[WEBHOOK])
    secret, automation_id = created["webhookSecret"], created["automation"]["id"]
    answers = [
        await run(gql, UPDATE, i={"automationId": automation_id, "triggers": [WEBHOOK, WEBHOOK]}),
        await run(gql, UPDATE, i={"automationId": automation_id, "maxConcurrentRuns": 0}),
        await run(gql, CREATE, i={"workspaceId": workspace_id, "name": secret, "prompt": "p", "maxConcurrentRuns": 0}),
    ]
    rotated = (await run(gql, ROTATE, id=automation_id))["secret"]
    text = repr(answers) + repr(await run(gql, ONE, id=automation_id)) + caplog.text
    assert all(a["__typename"] == "ValidationError" for a in answers)
    assert secret not in text and rotated not in text


async def test_an_agent_session_may_not_reveal_or_rotate_a_webhook_secret(gql, services, workspace_id):
    automation_id = (await create(gql, workspace_id, triggers=[WEBHOOK]))["automation"]["id"]
    agent = Services(
        services.ctx.with_principal(
            replace(services.principal, session_id=new_id(), task_id=new_id(), workspace_id=workspace_id)
        )
    )
    as_agent = GraphQLCaller(agent)
    for document in (REVEAL, ROTATE):
        answer = await run(as_agent, document, id=automation_id)
        assert (answer["__typename"], answer["code"]) == ("PermissionDeniedError", "PERMISSION_DENIED")


# -- another user --------------------------------------------------------------------------------


async def test_another_user_can_neither_read_nor_change_an_automation_of_a_workspace_they_cannot_see(
    gql, bob, bob_workspace, workspace_id
):
    made = (await create(gql, workspace_id, triggers=[WEBHOOK]))["automation"]
    as_bob = GraphQLCaller(bob)

    for document, variables in [(ONE, {"id": made["id"]}), (LIST, {"ws": workspace_id}), (RUNS, {"id": made["id"]})]:
        refused = await as_bob.raw(document, **variables)
        assert refused.errors[0].extensions["code"] == "NOT_FOUND"
    for document, variables in [
        (UPDATE, {"i": {"automationId": made["id"], "name": "Mine"}}),
        (SET_ENABLED, {"i": {"automationId": made["id"], "enabled": False}}),
        (SET_TRIGGER_ENABLED, {"i": {"triggerId": made["triggers"][0]["id"], "enabled": False}}),
        (DELETE, {"id": made["id"]}),
        (REVEAL, {"id": made["id"]}),
        (ROTATE, {"id": made["id"]}),
        (CREATE, {"i": {"workspaceId": workspace_id, "name": "Mine", "prompt": "p"}}),
    ]:
        answer = await run(as_bob, document, **variables)
        assert answer["__typename"] == "NotFoundError", (document, answer)
        assert made["id"] not in repr(answer)
    assert await run(gql, ONE, id=made["id"]) == made
    assert await run(as_bob, LIST, ws=bob_workspace) == []


# -- runs ----------------------------------------------------------------------------------------


async def add_runs(db: Database, automation_id: str, count: int) -> list[str]:
    """Run rows as the firing code will write them (it is not part of this module)."""
    start = datetime(2026, 12, 1, tzinfo=UTC)
    ids = []
    async with db.transaction() as session:
        for index in range(count):
            run_id = new_id()
            session.add(
                AutomationRun(
                    id=run_id,
                    automation_id=automation_id,
                    trigger_type="manual" if index % 3 == 0 else "scheduled",
                    status="skipped" if index % 2 else "succeeded",
                    dedup_key=None if index % 3 == 0 else f"minute:{index}",
                    title_snapshot=f"Run {index}",
                    trigger_data={},
                    created_at=start + timedelta(minutes=index // 2),  # pairs share a time: ids break the tie
                )
            )
            ids.append(run_id)
    return ids


async def test_runs_are_paged_newest_first_with_cursors_and_filtered_by_status_and_trigger_type(gql, db, workspace_id):
    automation_id = (await create(gql, workspace_id))["automation"]["id"]
    await add_runs(db, automation_id, 7)

    seen: list[str] = []
    after = None
    for _ in range(5):  # 7 runs, 3 a page: three pages, bounded should paging never end
        page = await run(gql, RUNS, id=automation_id, first=3, after=after)
        assert page["totalCount"] == 7
        seen += [edge["node"]["titleSnapshot"] for edge in page["edges"]]
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    else:
        pytest.fail("the runs' pages never ended")
    assert len(seen) == len(set(seen)) == 7
    assert [int(s.split()[1]) // 2 for s in seen] == sorted((i // 2 for i in range(7)), reverse=True)

    skipped = await run(gql, RUNS, id=automation_id, status="SKIPPED")
    assert skipped["totalCount"] == 3 and {e["node"]["status"] for e in skipped["edges"]} == {"SKIPPED"}
    manual = await run(gql, RUNS, id=automation_id, triggerType="MANUAL")
    assert [e["node"]["titleSnapshot"] for e in manual["edges"]] == ["Run 6", "Run 3", "Run 0"]
    nested = await gql(NESTED_RUNS, id=automation_id)
    assert nested["automation"]["runs"]["pageInfo"]["hasNextPage"] is True
    assert len(nested["automation"]["runs"]["nodes"]) == 2


async def test_a_run_dedup_key_is_unique_per_automation(gql, db, workspace_id):
    from sqlalchemy.exc import IntegrityError

    automation_id = (await create(gql, workspace_id))["automation"]["id"]
    await add_runs(db, automation_id, 2)
    with pytest.raises(IntegrityError):
        async with db.transaction() as session:
            session.add(
                AutomationRun(
                    automation_id=automation_id, trigger_type="scheduled", dedup_key="minute:1", trigger_data={}
                )
            )


async def test_a_runs_cursor_that_is_not_one_is_refused(gql, workspace_id):
    automation_id = (await create(gql, workspace_id))["automation"]["id"]
    refused = await gql.raw(RUNS, id=automation_id, after="not-a-cursor")
    assert refused.errors[0].extensions["code"] == "VALIDATION"


async def test_switching_layouts_keeps_the_history_of_the_deleted_triggers_runs(gql, db, workspace_id):
    made = (await create(gql, workspace_id, triggers=[SCHEDULE]))["automation"]
    async with db.transaction() as session:
        session.add(
            AutomationRun(
                automation_id=made["id"],
                trigger_id=made["triggers"][0]["id"],
                trigger_type="scheduled",
                status="succeeded",
                dedup_key="minute:1",
                trigger_data={},
            )
        )
    await run(gql, UPDATE, i={"automationId": made["id"], "triggers": [WEBHOOK]})

    page = await run(gql, RUNS, id=made["id"])
    assert [(e["node"]["triggerType"], e["node"]["triggerId"]) for e in page["edges"]] == [("SCHEDULED", None)]


async def test_a_hidden_destination_may_name_a_workflow_of_the_workspace(gql, services, workspace_id):
    workflow_id = (await services.workspaces.list())[0].default_workflow_id
    made = (await create(gql, workspace_id, workflowId=workflow_id))["automation"]
    assert (made["destination"], made["workflowId"]) == ("HIDDEN", workflow_id)


async def test_a_runs_page_is_at_most_the_shared_page_size(gql, workspace_id):
    automation_id = (await create(gql, workspace_id))["automation"]["id"]
    refused = await gql.raw(RUNS, id=automation_id, first=501)
    assert refused.errors[0].extensions["code"] == "VALIDATION"
