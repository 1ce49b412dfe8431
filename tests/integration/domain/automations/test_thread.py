"""An automation's thread: its creation intent, next-run plans, each run's request and response or error,
updates, disabling and deletion, in order, each once; never a trigger's data or a secret; readable after the
automation is deleted; an automation saved before threads existed gets its creation intent on first read."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from sqlalchemy import delete, text

from kandev.domain.automations.firing import fire
from kandev.domain.automations.launch import launch_run
from kandev.domain.automations.preflight import check_and_store
from kandev.domain.automations.records import AutomationFields, TriggerFields
from kandev.domain.automations.thread import ThreadEntry
from kandev.domain.errors import NotFoundError
from kandev.models import AutomationThreadMessage
from kandev.models.enums import ThreadKind, TriggerType
from kandev.platform.event_bus import automation_channel
from tests.integration.domain.automations.conftest import new_automation, runs_of, scheduled
from tests.support.workers import running_worker

SECRET_PAYLOAD = "payload-s3cr3t-4242"


async def thread(services: Any, automation_id: str) -> list[ThreadEntry]:
    return (await services.automations.thread(automation_id, first=200)).entries


def kinds(entries: list[ThreadEntry]) -> list[str]:
    return [e.kind for e in entries]


async def until(events: Any, wanted: Any) -> None:
    async with asyncio.timeout(30):
        async for event in events:
            if wanted(event):
                return


def acked(event: dict[str, Any]) -> bool:
    return event["kind"] == "ACK_CHANGED" and event["ack"]["status"] != "PENDING"


def settled(event: dict[str, Any]) -> bool:
    return (event["run"] or {}).get("status") in ("succeeded", "failed")


@pytest.mark.slow
async def test_the_thread_reads_creation_ack_plan_run_update_disable_and_delete_in_order(
    services, db, bus, settings, workspace_id
):
    with running_worker(settings):
        async with bus.subscribe(automation_channel(workspace_id)) as events:
            automation_id = await new_automation(services, workspace_id, prompt="/say done for {{trigger.type}}")
            await until(events, acked)
            outcome = await fire(services.ctx, automation_id, trigger_id=None, trigger_type="manual")
            await until(events, settled)
            await services.automations.update(
                automation_id, AutomationFields(prompt="/say changed", triggers=scheduled())
            )
            await until(events, acked)
    await services.automations.set_enabled(automation_id, False)
    await services.automations.delete(automation_id)

    entries = await thread(services, automation_id)  # still readable once deleted
    assert kinds(entries) == [
        ThreadKind.CREATION_INTENT,
        ThreadKind.PREFLIGHT_ACK,
        ThreadKind.NEXT_RUN_MARKER,
        ThreadKind.RUN_REQUEST,
        ThreadKind.RUN_RESPONSE,
        ThreadKind.UPDATED,
        ThreadKind.NEXT_RUN_MARKER,
        ThreadKind.PREFLIGHT_ACK,
        ThreadKind.DISABLED,
        ThreadKind.NEXT_RUN_MARKER,
        ThreadKind.DELETED,
    ]
    creation, ack, plan, request, response, updated, scheduled_plan, reack, _, disabled_plan, _ = entries
    assert ack.text.startswith("Pre-flight check: ") and "Agent profile: " in ack.text
    assert "Next run: " in reack.text
    assert "Created with the form" in creation.text and "Prompt template: /say done for {{trigger.type}}" in (
        creation.text
    )
    assert plan.text == "No trigger is enabled: it runs only on Run now."
    [run] = await runs_of(db, automation_id)
    assert (request.run_id, response.run_id, response.task_id) == (outcome.run_id, run.id, run.task_id)
    assert "Run now" in request.text and "{{trigger.type}}" in request.text  # the template, not its rendering
    assert response.text == "done for manual"  # the agent's answer
    assert "Prompt template changed to: /say changed" in updated.text
    assert "Fires: only on Run now → At 09:00" in updated.text
    assert scheduled_plan.text.startswith("Next run at ")
    assert disabled_plan.text == "Disabled: nothing fires until it is enabled."
    # The GraphQL read of a deleted automation's thread is the service's; the automation itself is gone.
    with pytest.raises(NotFoundError):
        await services.automations.get(automation_id)


async def test_a_run_entry_shows_the_trigger_and_template_never_the_payload_or_the_webhook_secret(
    services, workspace_id
):
    saved = await services.automations.create(
        workspace_id,
        AutomationFields(
            name="Hook", prompt="Handle {{webhook.body}}", triggers=[TriggerFields(type=TriggerType.WEBHOOK)]
        ),
    )
    automation_id, secret = saved.automation.id, saved.webhook_secret
    assert secret
    await check_and_store(services.ctx, automation_id)
    outcome = await fire(
        services.ctx,
        automation_id,
        trigger_id=saved.automation.triggers[0].id,
        trigger_type="webhook",
        data={"body": SECRET_PAYLOAD},
    )
    assert outcome.run_id is not None
    await launch_run(services.ctx, outcome.run_id)
    await services.automations.rotate_webhook_secret(automation_id)

    entries = await thread(services, automation_id)
    assert kinds(entries) == [
        ThreadKind.CREATION_INTENT,
        ThreadKind.PREFLIGHT_ACK,
        ThreadKind.NEXT_RUN_MARKER,
        ThreadKind.RUN_REQUEST,
    ]
    assert f"POST /api/v1/automations/webhook/{automation_id}" in entries[2].text
    assert entries[3].text == "Run fired by webhook. Prompt (template): Handle {{webhook.body}}"
    for entry in entries:
        assert SECRET_PAYLOAD not in entry.text and secret not in entry.text


async def test_a_skip_is_an_error_entry_and_a_retried_launch_writes_nothing_twice(services, workspace_id):
    automation_id = await new_automation(services, workspace_id)
    first = await fire(services.ctx, automation_id, trigger_id=None, trigger_type="manual")
    assert first.run_id is not None
    for _ in range(2):  # a retried launch job
        await launch_run(services.ctx, first.run_id)
    skipped = await fire(services.ctx, automation_id, trigger_id=None, trigger_type="manual")

    entries = await thread(services, automation_id)
    assert kinds(entries) == [ThreadKind.CREATION_INTENT, ThreadKind.RUN_REQUEST, ThreadKind.RUN_ERROR]
    assert entries[2].run_id == skipped.run_id
    assert entries[2].text.startswith("A run fired by Run now was skipped: 1 run(s) still active")


async def test_an_automation_saved_before_threads_gets_its_creation_intent_once_and_first(services, db, workspace_id):
    automation_id = await new_automation(services, workspace_id, triggers=scheduled())
    await services.automations.set_enabled(automation_id, False)
    async with db.transaction() as session:  # as if saved before this change: no thread at all
        await session.execute(delete(AutomationThreadMessage))

    reads = await asyncio.gather(*(thread(services, automation_id) for _ in range(3)))
    for entries in reads:
        assert kinds(entries) == [ThreadKind.CREATION_INTENT]
    [intent] = reads[0]
    automation = await services.automations.get(automation_id)
    assert intent.created_at == automation.created_at
    assert "Recorded when this thread began" in intent.text and "Enabled: no" in intent.text
    await services.automations.set_enabled(automation_id, True)
    assert kinds(await thread(services, automation_id))[0] == ThreadKind.CREATION_INTENT
    assert kinds(await thread(services, automation_id)).count(ThreadKind.CREATION_INTENT) == 1


async def test_the_thread_pages_oldest_first_with_cursors(services, workspace_id):
    automation_id = await new_automation(services, workspace_id)
    for n in range(3):
        await services.automations.update(automation_id, AutomationFields(name=f"Take {n}"))
    everything = await thread(services, automation_id)
    first = await services.automations.thread(automation_id, first=2)
    rest = await services.automations.thread(automation_id, first=50, after=first.cursors[-1])
    assert first.has_next_page and not rest.has_next_page
    assert [e.id for e in first.entries + rest.entries] == [e.id for e in everything]
    assert kinds(everything) == [ThreadKind.CREATION_INTENT] + [ThreadKind.UPDATED] * 3


@asynccontextmanager
async def thread_writes_refused(db: Any) -> AsyncIterator[None]:
    """The database itself refuses every new thread entry (a real failure, not a stub) until the block ends; the
    trigger goes with it, so the suite's shared PostgreSQL database is left as the migrations made it."""
    statements = (
        [
            "CREATE TRIGGER refuse_thread BEFORE INSERT ON automation_thread_messages "
            "BEGIN SELECT RAISE(ABORT, 'thread store refused'); END"
        ]
        if db.is_sqlite
        else [
            "CREATE FUNCTION refuse_thread() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'thread store refused'; "
            "END $$ LANGUAGE plpgsql",
            "CREATE TRIGGER refuse_thread BEFORE INSERT ON automation_thread_messages "
            "FOR EACH ROW EXECUTE FUNCTION refuse_thread()",
        ]
    )
    undo = (
        ["DROP TRIGGER refuse_thread"]
        if db.is_sqlite
        else [
            "DROP TRIGGER refuse_thread ON automation_thread_messages",
            "DROP FUNCTION refuse_thread()",
        ]
    )
    async with db.transaction() as session:
        for statement in statements:
            await session.execute(text(statement))
    try:
        yield
    finally:
        async with db.transaction() as session:
            for statement in undo:
                await session.execute(text(statement))


@pytest.mark.slow
async def test_a_thread_write_that_fails_is_logged_and_never_fails_the_run_its_launch_or_its_settle(
    services, db, bus, settings, workspace_id, caplog
):
    """NFR-2: publishing to the thread never blocks or fails what it records."""
    automation_id = await new_automation(services, workspace_id, prompt="/say still done")
    async with thread_writes_refused(db):
        outcome = await fire(services.ctx, automation_id, trigger_id=None, trigger_type="manual")
        assert outcome.fired and outcome.run_id
        with caplog.at_level("WARNING", logger="kandev.automations.thread"):
            assert await launch_run(services.ctx, outcome.run_id) == "launched"
        assert any("run_request entry" in r.getMessage() and automation_id in r.getMessage() for r in caplog.records)
        with running_worker(settings):
            async with bus.subscribe(automation_channel(workspace_id)) as events:
                if (await services.automation_runs.get(outcome.run_id)).status == "task_created":
                    await until(events, settled)
        run = await services.automation_runs.get(outcome.run_id)
        assert run.status == "succeeded" and run.turn_id is not None
        assert kinds(await thread(services, automation_id)) == [ThreadKind.CREATION_INTENT]
