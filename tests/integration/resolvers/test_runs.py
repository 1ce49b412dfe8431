"""Runs over GraphQL: runAutomationNow, stopRun, deleteRun, deleteAllRuns, runs(workspaceId) and
automationEvents, with the shown (derived) statuses and one user's runs out of another's reach."""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy import select

from kandev.domain.automations.cleanup import due_cleanups, run_cleanup
from kandev.domain.automations.firing import fire
from kandev.domain.automations.launch import launch_run
from kandev.domain.automations.records import AutomationFields
from kandev.graphql.root import schema
from kandev.graphql.schema.context import Context
from kandev.models import AutomationRun, Task
from tests.conftest import GraphQLCaller

ERRORS = "__typename ... on Error { code message }"
RUN = "id automationId status reason taskId sessionId turnId titleSnapshot triggerType stoppedAt continuationNote"
RUN_NOW = f"""mutation($i: RunAutomationNowInput!) {{ runAutomationNow(input: $i) {{ {ERRORS}
    ... on RunAutomationNowPayload {{ admission reason run {{ {RUN} }} }} }} }}"""
STOP = f"""mutation($i: StopRunInput!) {{ stopRun(input: $i) {{ {ERRORS}
    ... on AutomationRunPayload {{ run {{ {RUN} }} }} }} }}"""
DELETE_RUN = f"""mutation($i: DeleteRunInput!) {{ deleteRun(input: $i) {{ {ERRORS}
    ... on DeleteRunPayload {{ runId }} }} }}"""
DELETE_ALL = f"""mutation($i: DeleteAllRunsInput!) {{ deleteAllRuns(input: $i) {{ {ERRORS}
    ... on DeleteAllRunsPayload {{ automationId deletedCount }} }} }}"""
RUNS = f"""query($ws: ID!, $first: Int, $after: String, $status: AutomationRunStatus,
    $type: AutomationRunTriggerType, $since: DateTime, $until: DateTime) {{
    runs(workspaceId: $ws, first: $first, after: $after, status: $status, triggerType: $type, since: $since,
         until: $until) {{ totalCount pageInfo {{ hasNextPage endCursor }} nodes {{ {RUN} createdAt }} }} }}"""
EVENTS = f"subscription($ws: ID!) {{ automationEvents(workspaceId: $ws) {{ kind automationId run {{ {RUN} }} }} }}"


async def one(gql: GraphQLCaller, document: str, **variables: Any) -> dict[str, Any]:
    return next(iter((await gql(document, **variables)).values()))


async def automation(services: Any, workspace_id: str, **fields: Any) -> str:
    fields.setdefault("name", "Nightly")
    fields.setdefault("prompt", "/say hi")
    return (await services.automations.create(workspace_id, AutomationFields(**fields))).automation.id


async def launched(services: Any, automation_id: str, **data: Any) -> str:
    outcome = await fire(services.ctx, automation_id, trigger_id=None, trigger_type="manual", data=data)
    assert outcome.run_id is not None
    await launch_run(services.ctx, outcome.run_id)
    return outcome.run_id


async def task_of(db: Any, run_id: str) -> Task:
    async with db.read() as session:
        run = await session.get(AutomationRun, run_id)
        assert run is not None and run.task_id is not None
        task = await session.get(Task, run.task_id)
        assert task is not None
        return task


async def test_run_now_fires_a_manual_run_and_at_the_cap_answers_skipped_with_the_skipped_run(
    gql, services, workspace_id
):
    automation_id = await automation(services, workspace_id, title_template="Check {{trigger.type}}")
    first = await one(gql, RUN_NOW, i={"automationId": automation_id})
    second = await one(gql, RUN_NOW, i={"automationId": automation_id})
    await services.automations.set_enabled(automation_id, False)
    disabled = await one(gql, RUN_NOW, i={"automationId": automation_id})

    assert first["admission"] == "FIRED" and first["run"]["status"] == "TRIGGERED"
    assert (first["run"]["triggerType"], first["run"]["titleSnapshot"]) == ("MANUAL", "Check manual")
    assert second["admission"] == "SKIPPED" and second["run"]["status"] == "SKIPPED"
    assert second["run"]["reason"] == second["reason"] and "still active" in second["reason"]
    assert disabled == {
        "__typename": "RunAutomationNowPayload",
        "admission": "REFUSED",
        "reason": "the automation is disabled",
        "run": None,
    }


async def test_an_archived_task_reads_archived_frees_the_cap_and_a_deleted_one_reads_cancelled(
    gql, services, db, workspace_id
):
    automation_id = await automation(services, workspace_id)
    archived_run = await launched(services, automation_id)
    blocked = await fire(services.ctx, automation_id, trigger_id=None, trigger_type="manual")
    await services.tasks.archive((await task_of(db, archived_run)).id)
    deleted_run = await launched(services, automation_id)
    await services.tasks.delete((await task_of(db, deleted_run)).id)

    page = await one(gql, RUNS, ws=workspace_id)
    shown = {n["id"]: n["status"] for n in page["nodes"]}
    assert blocked.admission == "skipped"
    assert shown[archived_run] == "ARCHIVED" and shown[deleted_run] == "CANCELLED"
    only_archived = await one(gql, RUNS, ws=workspace_id, status="ARCHIVED")
    assert [n["id"] for n in only_archived["nodes"]] == [archived_run] and only_archived["totalCount"] == 1


async def test_the_active_run_rule_in_sql_and_in_python_agree_on_every_case(services, db, workspace_id):
    from kandev.domain.automations.runs import active_sql, is_active, task_columns

    automation_id = await automation(services, workspace_id, max_concurrent_runs=10)
    triggered = (await fire(services.ctx, automation_id, trigger_id=None, trigger_type="manual")).run_id
    running = await launched(services, automation_id)
    parked = await launched(services, automation_id)
    archived = await launched(services, automation_id)
    stopped = await launched(services, automation_id)
    async with db.transaction() as session:
        (await session.get(AutomationRun, parked)).status = "succeeded"  # its turn ended: parked for a reply
        (await session.get(AutomationRun, stopped)).stopped_at = (await session.get(AutomationRun, stopped)).created_at
    await services.tasks.archive((await task_of(db, archived)).id)

    async with db.read() as session:
        rows = (
            await session.execute(
                select(
                    AutomationRun.id,
                    active_sql(),
                    AutomationRun.status,
                    AutomationRun.stopped_at,
                    AutomationRun.task_id,
                    *task_columns(),
                )
                .outerjoin(Task, Task.id == AutomationRun.task_id)
                .where(AutomationRun.automation_id == automation_id)
            )
        ).all()
    in_sql = {row[0]: bool(row[1]) for row in rows}
    in_python = {row[0]: is_active(*row[2:]) for row in rows}
    expected = {triggered: True, running: True, parked: False, archived: False, stopped: False}
    assert in_sql == in_python == expected


async def test_runs_pages_newest_first_across_automations_and_filters_by_type_and_time(gql, services, workspace_id):
    first_automation = await automation(services, workspace_id, max_concurrent_runs=10)
    second_automation = await automation(services, workspace_id, name="Other", max_concurrent_runs=10)
    fired = []
    for automation_id, kind in [
        (first_automation, "manual"),
        (second_automation, "webhook"),
        (first_automation, "manual"),
    ]:
        fired.append((await fire(services.ctx, automation_id, trigger_id=None, trigger_type=kind)).run_id)

    page_one = await one(gql, RUNS, ws=workspace_id, first=2)
    page_two = await one(gql, RUNS, ws=workspace_id, first=2, after=page_one["pageInfo"]["endCursor"])
    webhooks = await one(gql, RUNS, ws=workspace_id, type="WEBHOOK")
    since_second = await one(gql, RUNS, ws=workspace_id, since=page_one["nodes"][1]["createdAt"])
    until_second = await one(gql, RUNS, ws=workspace_id, until=page_one["nodes"][1]["createdAt"])

    assert [n["id"] for n in page_one["nodes"] + page_two["nodes"]] == fired[::-1]
    assert page_one["pageInfo"]["hasNextPage"] and not page_two["pageInfo"]["hasNextPage"]
    assert page_one["totalCount"] == 3
    assert [n["id"] for n in webhooks["nodes"]] == [fired[1]]
    assert [n["id"] for n in since_second["nodes"]] == [fired[2], fired[1]]
    assert [n["id"] for n in until_second["nodes"]] == [fired[0]]


async def test_delete_run_and_delete_all_runs_take_their_hidden_tasks_with_them(gql, services, db, workspace_id):
    automation_id = await automation(services, workspace_id, max_concurrent_runs=10)
    lone = await launched(services, automation_id)
    rest = [await launched(services, automation_id) for _ in range(2)]
    tasks = [(await task_of(db, run_id)).id for run_id in [lone, *rest]]

    deleted = await one(gql, DELETE_RUN, i={"runId": lone})
    all_deleted = await one(gql, DELETE_ALL, i={"automationId": automation_id})

    assert deleted == {"__typename": "DeleteRunPayload", "runId": lone}
    assert all_deleted["deletedCount"] == 2
    assert (await one(gql, RUNS, ws=workspace_id))["nodes"] == []
    assert sorted(await due_cleanups(services.ctx)) == sorted(tasks)  # recorded with the deletions
    for task_id in tasks:  # what the cleanup job does
        await run_cleanup(services.ctx, task_id)
    async with db.read() as session:
        gone = await session.scalars(select(Task.deleted_at).where(Task.id.in_(tasks)))
        assert all(at is not None for at in gone)


async def test_stopping_a_run_not_started_yet_withdraws_its_prompt_and_reads_cancelled(gql, services, db, workspace_id):
    automation_id = await automation(services, workspace_id)
    run_id = await launched(services, automation_id)

    stopped = await one(gql, STOP, i={"runId": run_id})
    again = await one(gql, STOP, i={"runId": run_id})

    assert stopped["run"]["status"] == "CANCELLED" and stopped["run"]["stoppedAt"] is not None
    assert again["run"]["stoppedAt"] == stopped["run"]["stoppedAt"]
    from kandev.models import QueuedPrompt

    async with db.read() as session:
        states = list(
            await session.scalars(
                select(QueuedPrompt.state).where(QueuedPrompt.session_id == stopped["run"]["sessionId"])
            )
        )
    assert states == ["CANCELLED"]


async def test_automation_events_deliver_a_run_status_change_after_commit(services, workspace_id):
    automation_id = await automation(services, workspace_id)
    stream = await schema.subscribe(
        EVENTS, variable_values={"ws": workspace_id}, context_value=Context.for_services(services)
    )
    assert not isinstance(stream, type(None))
    seen = []
    async with asyncio.timeout(10):
        first = await anext(stream)  # type: ignore[arg-type]
        run_id = await launched(services, automation_id)
        while len(seen) < 2:
            event = (await anext(stream)).data["automationEvents"]  # type: ignore[union-attr]
            if event["kind"] != "THREAD_MESSAGE":  # the run's request in its thread (tested with the thread)
                seen.append(event)
    await stream.aclose()  # type: ignore[union-attr]
    assert first.data["automationEvents"]["kind"] == "SUBSCRIBED"
    assert [(e["kind"], e["automationId"], e["run"]["id"], e["run"]["status"]) for e in seen] == [
        ("RUN_CREATED", automation_id, run_id, "TRIGGERED"),
        ("RUN_UPDATED", automation_id, run_id, "TASK_CREATED"),
    ]


async def test_another_user_can_neither_see_nor_touch_the_runs_of_a_workspace_they_cannot_see(
    gql, services, bob, workspace_id
):
    automation_id = await automation(services, workspace_id)
    run_id = await launched(services, automation_id)
    as_bob = GraphQLCaller(bob)

    refused = await as_bob.raw(RUNS, ws=workspace_id)
    for document, variables in [
        (RUN_NOW, {"i": {"automationId": automation_id}}),
        (STOP, {"i": {"runId": run_id}}),
        (DELETE_RUN, {"i": {"runId": run_id}}),
        (DELETE_ALL, {"i": {"automationId": automation_id}}),
    ]:
        answer = await one(as_bob, document, **variables)
        assert answer["__typename"] == "NotFoundError", (document, answer)
    events = await schema.subscribe(
        EVENTS, variable_values={"ws": workspace_id}, context_value=Context.for_services(bob)
    )
    denied = await anext(events)  # type: ignore[arg-type]

    assert refused.errors[0].extensions["code"] == "NOT_FOUND"
    assert denied.errors and denied.data is None
    assert [n["status"] for n in (await one(gql, RUNS, ws=workspace_id))["nodes"]] == ["TASK_CREATED"]
