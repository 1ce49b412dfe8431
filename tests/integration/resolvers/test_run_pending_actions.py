"""AutomationRun.pendingAction: what a run's task waits on, read with the runs page at no extra statement and
pushed live on automationEvents (RUN_UPDATED) whenever it changes, for the task's newest run only."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy import update

from kandev.domain.automations.firing import fire
from kandev.domain.automations.records import AutomationFields
from kandev.domain.services import Services
from kandev.domain.sessions.clarifications import Answer
from kandev.domain.sessions.permissions import record_request
from kandev.domain.sessions.turns import claim_turn, finish_turn
from kandev.graphql.root import schema
from kandev.graphql.schema.context import Context
from kandev.models import Task
from kandev.models.base import utcnow
from kandev.models.enums import AutomationContext, AutomationDestination
from tests.integration.test_sidebar_queries import counted_statements, statements_for
from tests.support.factories import new_task
from tests.support.pending import add_permission, add_question, launched, session_of
from tests.support.users import as_agent
from tests.support.workflows import gate_in_progress, steps_by_name

RUN = "id status pendingAction"
EVENTS = f"subscription($ws: ID!) {{ automationEvents(workspaceId: $ws) {{ kind automationId run {{ {RUN} }} }} }}"
RUNS = f"query($ws: ID!, $first: Int) {{ runs(workspaceId: $ws, first: $first) {{ nodes {{ {RUN} }} }} }}"
AUTOMATION_RUNS = f"""query($id: ID!) {{ automationRuns(automationId: $id) {{ nodes {{ {RUN} }} }} }}"""
QUESTION = [{"prompt": "Postgres or SQLite?", "options": [{"label": "Postgres"}, {"label": "SQLite"}]}]


class Subscriber:
    """One automationEvents subscription, read message by message, every wait bounded."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    async def next(self, timeout: float = 10) -> dict[str, Any]:
        """The next message about a run or the subscription: thread entries and acks (every save sends one)
        are tested on their own."""
        async with asyncio.timeout(timeout):
            while True:
                result = await anext(self.stream)
                assert not result.errors, result.errors
                if result.data["automationEvents"]["kind"] not in ("THREAD_MESSAGE", "ACK_CHANGED"):
                    return dict(result.data["automationEvents"])

    async def until(self, run_id: str) -> list[dict[str, Any]]:
        """Every message up to and including the first about `run_id` (a sentinel run fired last)."""
        async with asyncio.timeout(30):  # the whole read, not only each message, is bounded
            seen = [await self.next()]
            while (seen[-1]["run"] or {}).get("id") != run_id:
                seen.append(await self.next())
        return seen


@asynccontextmanager
async def subscribed(services: Services, workspace_id: str) -> AsyncIterator[Subscriber]:
    stream = await schema.subscribe(
        EVENTS, variable_values={"ws": workspace_id}, context_value=Context.for_services(services)
    )
    subscriber = Subscriber(stream)
    try:
        assert (await subscriber.next())["kind"] == "SUBSCRIBED"
        yield subscriber
    finally:
        await stream.aclose()  # type: ignore[union-attr]


async def automation(services: Services, workspace_id: str, name: str = "Nightly", **fields: Any) -> str:
    created = await services.automations.create(workspace_id, AutomationFields(name=name, prompt="/say hi", **fields))
    return created.automation.id


async def sentinel(services: Services, workspace_id: str) -> str:
    """A run of another automation: its RUN_CREATED marks the end of what an earlier step published."""
    outcome = await fire(
        services.ctx, await automation(services, workspace_id, "Sentinel"), trigger_id=None, trigger_type="manual"
    )
    assert outcome.run_id is not None
    return outcome.run_id


async def start_turn(services: Services, session_id: str) -> str:
    claimed = await claim_turn(services.ctx, session_id, worker_name="test-worker", job_id=None, lease_seconds=60)
    assert claimed is not None
    return claimed.turn_id


def updates(seen: list[dict[str, Any]], run_id: str) -> list[str]:
    return [m["run"]["pendingAction"] for m in seen if m["kind"] == "RUN_UPDATED" and m["run"]["id"] == run_id]


async def test_a_subscriber_sees_the_run_wait_for_the_operator_when_its_agent_asks_and_stop_after_the_answer(
    services, workspace_id
):
    run_id, task_id, session_id = await launched(services, await automation(services, workspace_id))
    agent = as_agent(services, session_id, task_id)
    async with subscribed(services, workspace_id) as events:
        question = await agent.clarifications.ask(QUESTION, "storage")
        asked = await events.next()
        await services.clarifications.answer(question.id, [Answer("q1", ["Postgres"])])
        answered = await events.next()

    assert (asked["kind"], asked["run"]["id"], asked["run"]["pendingAction"]) == (
        "RUN_UPDATED",
        run_id,
        "CLARIFICATION",
    )
    assert (answered["kind"], answered["run"]["id"], answered["run"]["pendingAction"]) == (
        "RUN_UPDATED",
        run_id,
        "NONE",
    )


async def test_a_permission_request_cancelled_at_turn_end_clears_the_run_in_the_one_update_of_that_turn_end(
    services, workspace_id
):
    run_id, _, session_id = await launched(services, await automation(services, workspace_id))
    turn_id = await start_turn(services, session_id)
    async with subscribed(services, workspace_id) as events:
        await record_request(
            services.ctx, session_id=session_id, turn_id=turn_id, title="Run make", tool_call={}, options=[]
        )
        asked = await events.next()
        await finish_turn(services.ctx, turn_id, stop_reason="end_turn")
        seen = await events.until(await sentinel(services, workspace_id))

    assert (asked["kind"], asked["run"]["id"], asked["run"]["pendingAction"]) == ("RUN_UPDATED", run_id, "PERMISSION")
    # The turn end settles the run and cancels the request in one transaction: one message, as of its commit.
    ended = [m for m in seen if (m["run"] or {}).get("id") == run_id]
    assert [(m["kind"], m["run"]["status"], m["run"]["pendingAction"]) for m in ended] == [
        ("RUN_UPDATED", "SUCCEEDED", "NONE")
    ]


async def test_a_run_tasks_question_to_its_parent_is_pending_until_the_parent_answers(services, db, workspace_id):
    run_id, task_id, session_id = await launched(services, await automation(services, workspace_id))
    parent_id = await new_task(services, workspace_id, "Parent")
    async with db.transaction() as s:  # an automation's task made an autopilot child, for this protocol only
        await s.execute(update(Task).where(Task.id == task_id).values(parent_id=parent_id))
    parent_session = await session_of(db, parent_id)
    child = as_agent(services, session_id, task_id)
    parent = as_agent(services, parent_session, parent_id)
    async with subscribed(services, workspace_id) as events:
        asked = await child.parent_questions.ask(QUESTION, None)
        waiting = await events.until(run_id)
        await parent.parent_questions.answer(task_id, asked.question.id, "Postgres", session_id)
        answered = await events.until(run_id)

    assert updates(waiting, run_id) == ["CLARIFICATION"]
    assert updates(answered, run_id) == ["NONE"]


async def test_on_a_continue_session_task_only_its_newest_run_carries_the_pending_action(gql, services, workspace_id):
    automation_id = await automation(services, workspace_id, context=AutomationContext.CONTINUE_SESSION)
    first_run, task_id, session_id = await launched(services, automation_id)
    await finish_turn(services.ctx, await start_turn(services, session_id), stop_reason="end_turn")
    second_run, continued_task, _ = await launched(services, automation_id)
    assert continued_task == task_id
    agent = as_agent(services, session_id, task_id)
    async with subscribed(services, workspace_id) as events:
        await agent.clarifications.ask(QUESTION, None)
        seen = await events.until(await sentinel(services, workspace_id))
    listed = (await gql(AUTOMATION_RUNS, id=automation_id))["automationRuns"]["nodes"]

    assert updates(seen, second_run) == ["CLARIFICATION"]
    assert updates(seen, first_run) == []
    assert {n["id"]: n["pendingAction"] for n in listed} == {second_run: "CLARIFICATION", first_run: "NONE"}


async def test_an_ordinary_tasks_question_sends_no_automation_event_and_reads_no_run(services, db, workspace_id):
    task_id = await new_task(services, workspace_id, "Ordinary")
    session_id = await session_of(db, task_id)
    agent = as_agent(services, session_id, task_id)
    async with subscribed(services, workspace_id) as events:
        with counted_statements(db) as statements:
            question = await agent.clarifications.ask(QUESTION, None)
            await services.clarifications.reject(question.id)
        sentinel_run = await sentinel(services, workspace_id)
        seen = await events.until(sentinel_run)

    assert [(m["kind"], m["run"]["id"]) for m in seen] == [("RUN_CREATED", sentinel_run)]
    assert not [s for s in statements if "automation_runs" in s]


async def test_the_runs_page_reads_pending_actions_in_the_same_statements_for_1_and_6_runs(
    gql, services, db, workspace_id
):
    automation_id = await automation(services, workspace_id, max_concurrent_runs=10)
    first = await launched(services, automation_id)
    await add_question(db, first[2], utcnow())
    small, small_page = await statements_for(gql, db, RUNS, ws=workspace_id, first=50)
    more = [await launched(services, automation_id) for _ in range(5)]
    await add_permission(db, more[0][2], utcnow())
    await add_question(db, more[1][2], utcnow())
    large, large_page = await statements_for(gql, db, RUNS, ws=workspace_id, first=50)

    assert small == large
    assert [n["pendingAction"] for n in small_page["runs"]["nodes"]] == ["CLARIFICATION"]
    pending = {n["id"]: n["pendingAction"] for n in large_page["runs"]["nodes"]}
    assert pending == {
        first[0]: "CLARIFICATION",
        more[0][0]: "PERMISSION",
        more[1][0]: "CLARIFICATION",
        **{run[0]: "NONE" for run in more[2:]},
    }


async def test_a_board_runs_completion_pending_shows_on_its_run_until_a_move_clears_it(services, workspace_id):
    step_id = await gate_in_progress(services, workspace_id)
    steps = await steps_by_name(services, workspace_id)
    automation_id = await automation(
        services,
        workspace_id,
        destination=AutomationDestination.NORMAL,
        workflow_id=steps["In Progress"].workflow_id,
        workflow_step_id=step_id,
    )
    run_id, task_id, session_id = await launched(services, automation_id)
    turn_id = await start_turn(services, session_id)
    async with subscribed(services, workspace_id) as events:
        await finish_turn(services.ctx, turn_id, stop_reason="end_turn")
        ended = await events.until(run_id)
        await services.tasks.move(task_id, steps["Review"].id)
        moved = await events.until(run_id)

    assert [(m["kind"], m["run"]["status"], m["run"]["pendingAction"]) for m in ended] == [
        ("RUN_UPDATED", "SUCCEEDED", "COMPLETION_PENDING")
    ]
    assert updates(moved, run_id) == ["NONE"]
