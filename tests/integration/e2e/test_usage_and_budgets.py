"""Usage per turn through real turns (the scripted agent's `/usage` directive reports as ACP agents do), totals that
add up across turns, sessions and replicas, and the budgets that stop a task's agent and an automation's firing."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from kandev.domain.automations.firing import Admission, fire
from kandev.domain.automations.preflight import check_and_store
from kandev.domain.automations.records import AutomationFields
from kandev.domain.automations.runs import active_sql
from kandev.domain.errors import PermissionDeniedError
from kandev.domain.services import Services
from kandev.domain.tasks.service import CreateTask
from kandev.domain.usage.service import UsageGroup
from kandev.models import AutomationRun, Message, QueuedPrompt, TurnUsage
from kandev.models.base import utcnow
from kandev.wiring import SYSTEM, provide_services
from tests.support.watch import watching

pytestmark = pytest.mark.slow

TURN_QUERY = """query($id: ID!) { session(id: $id) { turns { stopReason
  usage { inputTokens outputTokens cacheReadTokens cacheWriteTokens costUsd model contextUsed contextSize
    clamped clampNote } } } }"""


def usage_line(tokens: dict | None = None, **update: object) -> str:
    report = dict(update)
    if tokens is not None:
        report["tokens"] = {"totalTokens": sum(tokens.values()), **tokens}
    return f"/usage {json.dumps(report)}"


TOKENS = {"inputTokens": 100, "outputTokens": 20, "cachedReadTokens": 30, "cachedWriteTokens": 5}


async def run_turn(services, bus, db, task_id: str, prompt: str, session_id: str | None = None):
    if session_id is None:
        delivery = await services.sessions.start_task(task_id, prompt, None)
        session_id = delivery.session.id
    else:
        await services.sessions.send_message(task_id, prompt, session_id=session_id)
    async with watching(bus, db, session_id) as watch:
        await watch.next_turn_end(timeout=60)
    return session_id


async def test_a_turn_records_the_tokens_cost_and_context_its_agent_reports(live, services, bus, db, gql, workspace_id):
    task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Counted"))).task
    # Claude Code's first usage_update of a turn can carry `used: null`: tolerated, the cost still counts.
    prompt = "\n".join(
        [
            usage_line(used=None, size=200000, cost={"amount": 0.25, "currency": "USD"}),
            usage_line(TOKENS, used=1500, size=200000, cost={"amount": 0.40, "currency": "USD"}),
            "/say done",
        ]
    )
    session_id = await run_turn(services, bus, db, task.id, prompt)
    [turn] = (await gql(TURN_QUERY, id=session_id))["session"]["turns"]
    assert turn["stopReason"] == "end_turn"
    assert turn["usage"] == {
        "inputTokens": 100,
        "outputTokens": 20,
        "cacheReadTokens": 30,
        "cacheWriteTokens": 5,
        "costUsd": pytest.approx(0.40),
        "model": None,
        "contextUsed": 1500,
        "contextSize": 200000,
        "clamped": False,
        "clampNote": None,
    }


async def test_absurd_usage_is_clamped_with_a_clear_record_and_the_turn_completes(
    live, services, bus, db, gql, workspace_id
):
    task = await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Absurd"))
    tokens = {"inputTokens": 10**15, "outputTokens": 7, "cachedReadTokens": 0, "cachedWriteTokens": 0}
    prompt = "\n".join(
        [usage_line(tokens, used=5, size=10, cost={"amount": 1e12, "currency": "USD"}), "/say still fine"]
    )
    session_id = await run_turn(services, bus, db, task.task.id, prompt)
    [turn] = (await gql(TURN_QUERY, id=session_id))["session"]["turns"]
    assert turn["stopReason"] == "end_turn"
    usage = turn["usage"]
    assert usage["inputTokens"] == 50_000_000 and usage["outputTokens"] == 7
    assert usage["costUsd"] == 10_000.0
    assert usage["clamped"] is True and "input_tokens" in usage["clampNote"] and "cost_usd" in usage["clampNote"]
    async with db.read() as s:
        notes = [m.text for m in await s.scalars(select(Message).where(Message.session_id == session_id))]
    assert any("usage out of range" in n for n in notes), notes
    assert any(n == "still fine" for n in notes)


async def test_usage_totals_add_up_across_turns_sessions_and_replicas(
    live, services, bus, db, gql, settings, workspace_id
):
    first = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="One"))).task
    second = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Two"))).task

    def report(session_cost: float) -> str:  # ACP's cost is the session's so far: it grows by 0.5 a turn
        return usage_line(TOKENS, used=10, size=100, cost={"amount": session_cost, "currency": "USD"})

    session_a = await run_turn(services, bus, db, first.id, report(0.5))
    await run_turn(services, bus, db, first.id, report(1.0), session_id=session_a)  # the same warm agent
    # Another replica of the server (its own database engine and bus) sends the first task's third prompt.
    async with provide_services(settings, SYSTEM) as replica:
        await replica.sessions.send_message(first.id, report(1.5), session_id=session_a)
    async with watching(bus, db, session_a) as watch:
        await watch.turns_ended(3, timeout=60)
    session_b = await run_turn(services, bus, db, second.id, report(0.5))

    start, end = utcnow() - timedelta(hours=1), utcnow() + timedelta(hours=1)
    by_task = {t.key: t for t in await services.usage.totals(workspace_id, start, end, UsageGroup.TASK)}
    assert by_task[first.id].turns == 3 and by_task[second.id].turns == 1
    assert by_task[first.id].input_tokens == 300 and by_task[first.id].cache_read_tokens == 90
    # Each turn's cost is what the session's cost grew by during it: 0.5 a turn, not 0.5 + 1.0 + 1.5.
    assert by_task[first.id].cost_usd == pytest.approx(1.5)
    by_session = {t.key: t for t in await services.usage.totals(workspace_id, start, end, UsageGroup.SESSION)}
    assert by_session[session_a].turns == 3 and by_session[session_b].turns == 1
    [day] = await services.usage.totals(workspace_id, start, end, UsageGroup.DAY)
    assert day.key == utcnow().strftime("%Y-%m-%d") and day.turns == 4 and day.completed == 4
    assert day.output_tokens == 80 and day.cost_usd == pytest.approx(2.0)
    query = """query($w: ID!, $f: DateTime!, $t: DateTime!) {
      usage(workspaceId: $w, from: $f, to: $t, groupBy: WORKSPACE)
      { key turns inputTokens outputTokens costUsd } }"""
    [whole] = (await gql(query, w=workspace_id, f=start.isoformat(), t=end.isoformat()))["usage"]
    assert whole == {
        "key": workspace_id,
        "turns": 4,
        "inputTokens": 400,
        "outputTokens": 80,
        "costUsd": pytest.approx(2.0),
    }
    card = await gql("query($id: ID!) { task(id: $id) { usage { inputTokens outputTokens costUsd } } }", id=first.id)
    assert card["task"]["usage"] == {"inputTokens": 300, "outputTokens": 60, "costUsd": pytest.approx(1.5)}


UPDATE_BUDGET = """mutation($i: UpdateTaskInput!) { updateTask(input: $i) { __typename
  ... on TaskPayload { task { pendingAction budget { limitUsd spent { costUsd } reached } } } } }"""


async def test_a_spent_task_budget_ends_the_turn_and_holds_the_agent_until_a_person_raises_it(
    live, services, bus, db, gql, workspace_id
):
    task = (
        await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Budgeted", start_agent=False))
    ).task
    set_budget = await gql(UPDATE_BUDGET, i={"taskId": task.id, "budget": {"limitUsd": 1.0}})
    assert set_budget["updateTask"]["task"]["budget"]["reached"] is False
    spend = usage_line(used=10, size=100, cost={"amount": 1.25, "currency": "USD"})
    session_id = await run_turn(services, bus, db, task.id, f"/say working\n{spend}\n/sleep 30\n/say never said")
    async with db.read() as s:
        texts = [m.text for m in await s.scalars(select(Message).where(Message.session_id == session_id))]
    assert "never said" not in texts and any("budget is spent" in t for t in texts), texts
    view = await gql(
        "query($id: ID!) { task(id: $id) { pendingAction budget { spent { costUsd } reached } } }", id=task.id
    )
    assert view["task"] == {"pendingAction": "BUDGET_REACHED", "budget": {"spent": {"costUsd": 1.25}, "reached": True}}
    [turn] = (await gql(TURN_QUERY, id=session_id))["session"]["turns"]
    assert turn["stopReason"] == "cancelled"

    await services.sessions.send_message(task.id, "/say after the raise", session_id=session_id)
    async with db.read() as s:
        held = await s.scalar(
            select(QueuedPrompt).where(QueuedPrompt.session_id == session_id, QueuedPrompt.state == "QUEUED")
        )
    assert held is not None  # queued, not sent: the budget holds it
    raised = await gql(UPDATE_BUDGET, i={"taskId": task.id, "budget": {"limitUsd": 5.0}})
    assert raised["updateTask"]["task"]["pendingAction"] != "BUDGET_REACHED"
    async with watching(bus, db, session_id) as watch:
        await watch.turns_ended(2, timeout=60)
        await watch.message("AGENT", "after the raise")


async def test_an_agent_cannot_change_a_budget(services, workspace_id):
    task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Mine", start_agent=False))).task
    agent = replace(services.principal, session_id="s-1", task_id=task.id, workspace_id=workspace_id)
    with pytest.raises(PermissionDeniedError):
        await Services(replace(services.ctx, principal=agent)).usage.set_task_budget(task.id, None, 1000.0)


async def test_a_spent_automation_budget_stops_it_firing_until_the_budget_is_raised(
    live, services, db, gql, workspace_id
):
    spend = usage_line(TOKENS, used=10, size=100, cost={"amount": 2.0, "currency": "USD"})
    automation_id = (
        await services.automations.create(workspace_id, AutomationFields(name="Costly", prompt=f"{spend}\n/say spent"))
    ).automation.id
    first = await fire(services.ctx, automation_id, trigger_id=None, trigger_type="manual")
    assert first.admission == Admission.FIRED

    async def spent_by_automation() -> float:
        async with db.read() as s:
            return float(
                await s.scalar(
                    select(func.coalesce(func.sum(TurnUsage.cost_usd), 0.0)).where(
                        TurnUsage.automation_id == automation_id
                    )
                )
            )

    async def still_active() -> int:
        async with db.read() as s:
            active = select(func.count()).where(AutomationRun.automation_id == automation_id, active_sql())
            return int(await s.scalar(active) or 0)

    # Spent, and settled: the usage is recorded mid-turn, and a run still active would be refused for the
    # automation's one-at-a-time cap before its budget is looked at.
    async with asyncio.timeout(60):
        while await spent_by_automation() < 2.0 or await still_active():
            await asyncio.sleep(0.2)
    budget = """mutation($i: SetAutomationBudgetInput!) { setAutomationBudget(input: $i) { __typename
      ... on AutomationBudgetPayload { budget { period limitUsd spent { tokens costUsd } reached } } } }"""
    capped = (await gql(budget, i={"automationId": automation_id, "limitUsd": 1.5}))["setAutomationBudget"]
    assert capped["budget"] == {
        "period": "MONTH",
        "limitUsd": 1.5,
        "spent": {"tokens": 120, "costUsd": 2.0},
        "reached": True,
    }

    refused = await fire(services.ctx, automation_id, trigger_id=None, trigger_type="manual")
    assert refused.admission == Admission.SKIPPED and "monthly budget" in (refused.reason or "")
    thread = await gql(
        "query($id: ID!) { automation(id: $id) { thread(first: 50) { nodes { kind text } } } }", id=automation_id
    )
    assert any("monthly budget" in n["text"] for n in thread["automation"]["thread"]["nodes"])
    await check_and_store(services.ctx, automation_id)
    ack = (await gql("query($id: ID!) { automation(id: $id) { lastAck { status detail } } }", id=automation_id))[
        "automation"
    ]["lastAck"]
    assert ack["status"] == "FAILED" and "monthly budget" in ack["detail"]

    await gql(budget, i={"automationId": automation_id, "limitUsd": 10.0})
    again = await fire(services.ctx, automation_id, trigger_id=None, trigger_type="manual")
    assert again.admission == Admission.FIRED
