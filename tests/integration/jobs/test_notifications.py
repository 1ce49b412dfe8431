"""Outgoing notifications with real rq workers: each event reaches a local webhook receiver once (one key), and
an e-mail channel a local SMTP relay; a worker killed mid-delivery leaves the notification to be sent again under
the same key (never a second notification), a down or slow target is retried a bounded number of times and then
shows as failing, and no turn ever waits on any of it."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from pathlib import Path

import pytest
from sqlalchemy import select

from kandev.domain.tasks.service import CreateTask
from kandev.domain.workspace.agent_profiles import AgentProfileFields
from kandev.models import NotificationDelivery, Turn
from kandev.models.enums import PermissionPolicy
from kandev.platform.settings import Settings
from tests.support.factories import settings_for, started_task
from tests.support.fake_smtp import fake_smtp, text_of
from tests.support.fake_webhook import fake_webhook
from tests.support.server import running_server
from tests.support.waiting import wait_until
from tests.support.workers import running_scheduler, running_worker

pytestmark = pytest.mark.slow

ALL = ["NEEDS_INPUT", "TURN_FAILED", "REVIEW_READY"]
FAST = {
    "KANDEV_NOTIFICATION_TIMEOUT_SECONDS": "1",
    "KANDEV_NOTIFICATION_BACKOFF_SECONDS": "0.2",
    "KANDEV_NOTIFICATION_ATTEMPTS": "3",
}


@pytest.fixture
def settings(database_url: str, redis_url: str, tmp_path: Path) -> Settings:
    return settings_for(
        database_url,
        redis_url,
        tmp_path,
        turn_lease_seconds=5,
        notification_timeout_seconds=1,
        notification_backoff_seconds=0.2,
        notification_attempts=3,
    )


async def deliveries(db) -> list[NotificationDelivery]:
    async with db.read() as s:
        return list(await s.scalars(select(NotificationDelivery).order_by(NotificationDelivery.created_at)))


async def settled(db, count: int, timeout: float = 60) -> list[NotificationDelivery]:
    """Until `count` deliveries exist and none is pending any more."""

    async def done() -> bool:
        rows = await deliveries(db)
        return len(rows) >= count and all(r.state != "PENDING" for r in rows)

    await wait_until(done, timeout=timeout)
    return await deliveries(db)


async def test_each_event_reaches_a_webhook_once_a_person_needed_review_reached_and_a_failed_turn(
    services, settings, db, workspace_id
):
    with fake_webhook() as receiver:
        await services.notification_channels.create(workspace_id, "Team", receiver.url(), ALL)
        for profile in await services.agent_profiles.list(workspace_id):  # the permission waits on a person
            if profile.kind == "SCRIPTED":
                await services.agent_profiles.update(
                    profile.id, AgentProfileFields(permission_policy=PermissionPolicy.ASK)
                )
        task = (
            await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Ship it", start_agent=False))
        ).task
        with running_worker(settings, **FAST), running_scheduler(settings, **FAST):
            started = await services.sessions.start_task(task.id, "/permission deploy\n/say deployed", None)
            await wait_until(lambda: _pending_permission(services, workspace_id), timeout=60)
            [request] = await services.permissions.pending(workspace_id)
            await services.permissions.resolve(request.id, "allow")
            await wait_until(lambda: _turns_ended(db, started.session.id, 1), timeout=60)
            await services.sessions.send_message(task.id, "/fail the build broke")
            await wait_until(lambda: _turns_ended(db, started.session.id, 2), timeout=60)
            rows = await settled(db, 3)
            await asyncio.sleep(1.5)  # three more scheduler ticks: nothing is sent again
        assert sorted(r.event for r in rows) == sorted(ALL)
        assert all(r.state == "DELIVERED" and r.attempts == 1 for r in rows)
        received = receiver.received
        assert sorted(r.key or "" for r in received) == sorted(r.id for r in rows)
        titles = {r.key: r.body["title"] for r in received}
        by_event = {r.event: titles[r.id] for r in rows}
        assert by_event["NEEDS_INPUT"] == "Ship it needs you: the agent asks permission"
        assert by_event["REVIEW_READY"] == "Ship it is ready for review"
        assert by_event["TURN_FAILED"] == "Ship it a turn failed"
        failed = next(r for r in received if r.key == next(x.id for x in rows if x.event == "TURN_FAILED"))
        assert "the build broke" in failed.body["message"] and f"/tasks/{task.id}" in failed.body["message"]


async def test_an_agents_question_reaches_a_webhook_once_with_what_it_asks(services, settings, db, workspace_id):
    question = {"questions": [{"prompt": "Which database?", "options": [{"label": "sqlite"}, {"label": "pg"}]}]}
    with fake_webhook() as receiver:
        await services.notification_channels.create(workspace_id, "Team", receiver.url(), ["NEEDS_INPUT"])
        async with running_server(settings) as address:  # the agent asks through Kandev's MCP server
            wired = settings.model_copy(update={"public_url": f"http://{address}"})
            with running_worker(wired, **FAST), running_scheduler(wired, **FAST):
                script = f"/tool ask_user_question_kandev {json.dumps(question)}\n/say after the answer"
                task = await started_task(services, workspace_id, script, "Asks")
                [row] = await settled(db, 1)
                await asyncio.sleep(1.5)  # three more scheduler ticks: nothing is sent again
                assert (await services.clarifications.pending(workspace_id)).rows, "the question still waits"
    assert row.event == "NEEDS_INPUT" and row.state == "DELIVERED" and row.attempts == 1
    [received] = receiver.received
    assert received.key == row.id
    assert received.body["title"] == "Asks needs you: the agent asks a question"
    assert "Which database?" in received.body["message"] and f"/tasks/{task.task_id}" in received.body["message"]


async def test_an_e_mail_channel_gets_a_failed_turn_once_as_a_mail_naming_the_error_and_the_task(
    services, settings, db, workspace_id
):
    with fake_smtp() as relay:
        await services.notification_channels.create(workspace_id, "Ops mail", relay.url(), ["TURN_FAILED"])
        task = (
            await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Nightly", start_agent=False))
        ).task
        with running_worker(settings, **FAST), running_scheduler(settings, **FAST):
            started = await services.sessions.start_task(task.id, "/fail the disk is full", None)
            await wait_until(lambda: _turns_ended(db, started.session.id, 1), timeout=60)
            [row] = await settled(db, 1)
            await asyncio.sleep(1.5)  # three more scheduler ticks: nothing is sent again
    assert (row.event, row.state, row.attempts) == ("TURN_FAILED", "DELIVERED", 1)
    [mail] = relay.mails
    assert mail["Subject"] == "Nightly a turn failed" and mail["To"] == "ops@example.com"
    body = text_of(mail)
    assert "the disk is full" in body and f"/tasks/{task.id}" in body


async def _pending_permission(services, workspace_id) -> bool:
    return bool(await services.permissions.pending(workspace_id))


async def _turns_ended(db, session_id: str, count: int) -> bool:
    async with db.read() as s:
        turns = list(await s.scalars(select(Turn).where(Turn.session_id == session_id, Turn.ended_at.is_not(None))))
    return len(turns) >= count


async def test_a_worker_killed_mid_delivery_leaves_it_to_be_sent_again_under_the_same_key_and_the_turn_never_waited(
    services, settings, db, workspace_id
):
    with fake_webhook(hold=True, hold_limit=20) as receiver:
        await services.notification_channels.create(workspace_id, "Team", receiver.url(), ["REVIEW_READY"])
        task = (
            await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Quick", start_agent=False))
        ).task
        with running_worker(settings, **FAST) as worker:
            started = await services.sessions.start_task(task.id, "/say done", None)
            assert await asyncio.to_thread(receiver.arrived.wait, 60), "the notification never left"
            # The turn ended before its notification got an answer: it never waited on the target.
            assert await _turns_ended(db, started.session.id, 1)
            os.killpg(worker.pid, signal.SIGKILL)  # the worker dies with the request in flight
            worker.wait(10)
        receiver.hold = False
        receiver.release.set()
        began = time.monotonic()
        with running_worker(settings, **FAST), running_scheduler(settings, **FAST):
            [row] = await settled(db, 1, timeout=60)
        assert row.state == "DELIVERED" and row.attempts == 2
        keys = receiver.keys()
        assert len(keys) == 2 and set(keys) == {row.id}  # one notification, sent again under its key
        assert time.monotonic() - began < 60


async def test_a_down_target_is_tried_a_bounded_number_of_times_then_shows_failing(
    services, settings, db, workspace_id, gql
):
    with fake_webhook(status=503) as receiver:
        channel = await services.notification_channels.create(workspace_id, "Down", receiver.url(), ["REVIEW_READY"])
        task = (
            await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Down", start_agent=False))
        ).task
        with running_worker(settings, **FAST), running_scheduler(settings, **FAST):
            started = await services.sessions.start_task(task.id, "/say done", None)
            [row] = await settled(db, 1)
            assert await _turns_ended(db, started.session.id, 1)
            await asyncio.sleep(1.0)  # scheduler ticks: a FAILED delivery is never tried again
        assert row.state == "FAILED" and row.attempts == 3 and "503" in (row.last_error or "")
        assert len(receiver.received) == 3 and set(receiver.keys()) == {row.id}
    listed = await gql(
        "query($ws: ID!) { notificationChannels(workspaceId: $ws) { id status lastError failedDeliveries } }",
        ws=workspace_id,
    )
    [shown] = listed["notificationChannels"]
    assert shown["id"] == channel.id and shown["status"] == "FAILING"
    assert "503" in shown["lastError"] and shown["failedDeliveries"] == 1


async def test_a_slow_target_times_out_each_attempt_and_is_given_up_after_the_last(
    services, settings, db, workspace_id
):
    with fake_webhook(delay=3) as receiver:
        await services.notification_channels.create(workspace_id, "Slow", receiver.url(), ["REVIEW_READY"])
        task = (
            await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Slow", start_agent=False))
        ).task
        with running_worker(settings, **FAST), running_scheduler(settings, **FAST):
            started = await services.sessions.start_task(task.id, "/say done", None)
            [row] = await settled(db, 1, timeout=90)
            assert await _turns_ended(db, started.session.id, 1)
        assert row.state == "FAILED" and row.attempts == 3
        assert len(receiver.received) == 3
