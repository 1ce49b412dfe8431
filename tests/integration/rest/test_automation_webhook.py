"""POST /api/v1/automations/webhook/{id} over HTTP: every status (401, 404 unknown and deleted and without a
webhook trigger, 409 disabled automation and trigger, 413 with nothing recorded, 202), the answer saying what
the delivery came to (fired, skipped at the cap, deduplicated, with the reason), bodies of every kind (any
valid JSON) reaching the run's trigger data and prompt, dedup by Idempotency-Key and X-GitHub-Delivery,
rotation, the secret kept out of logs and answers, the delivery job of a delivery recorded before admission
at intake firing once, recovery, and a burst."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import delete, select, update

from kandev.adapters.rq_dispatch import RqDispatcher
from kandev.domain.automations import webhooks
from kandev.domain.automations.launch import launch_run
from kandev.domain.automations.records import AutomationFields, TriggerFields
from kandev.domain.automations.webhook_intake import WebhookIntake
from kandev.domain.automations.webhooks import deliver, deliver_all, unprocessed_deliveries
from kandev.domain.services import Services
from kandev.jobs.recovery import recover
from kandev.models import Automation, AutomationRun, AutomationTrigger, QueuedPrompt, WebhookDelivery
from kandev.models.base import new_id, utcnow
from kandev.models.enums import TriggerType
from kandev.platform.job_queues import DELIVER_WEBHOOKS_JOB
from kandev.platform.settings import Settings
from tests.integration.rest.conftest import rest_client
from tests.support.factories import settings_for
from tests.support.workers import running_worker

WEBHOOK = [TriggerFields(type=TriggerType.WEBHOOK)]
DEEP_OBJECT = b'{"a":' * 600 + b"1" + b"}" * 600
SCHEDULE = [TriggerFields(type=TriggerType.SCHEDULED, config={"expression": "0 9 * * *", "timezone": "UTC"})]


@pytest.fixture
def settings(database_url: str, redis_url: str, tmp_path: Path) -> Settings:
    return settings_for(database_url, redis_url, tmp_path, turn_lease_seconds=5)


@pytest.fixture
async def http(settings, db, bus, redis_url, principal, jobs):
    async with rest_client(settings, db, bus, redis_url, principal, jobs) as client:
        yield client


async def webhook_automation(services: Services, workspace_id: str, **fields: Any) -> tuple[str, str]:
    """(automation id, its secret) of a new webhook automation."""
    fields.setdefault("name", "Hook")
    fields.setdefault("prompt", "/say got {{webhook.body}}")
    fields.setdefault("triggers", WEBHOOK)
    saved = await services.automations.create(workspace_id, AutomationFields(**fields))
    assert saved.webhook_secret
    return str(saved.automation.id), saved.webhook_secret


def url(automation_id: str) -> str:
    return f"/api/v1/automations/webhook/{automation_id}"


async def post(http: httpx.AsyncClient, automation_id: str, secret: str | None, **kwargs: Any) -> httpx.Response:
    headers = dict(kwargs.pop("headers", {}))
    if secret is not None:
        headers["X-Webhook-Secret"] = secret
    return await http.post(url(automation_id), headers=headers, **kwargs)


async def deliveries(db: Any, automation_id: str) -> list[WebhookDelivery]:
    async with db.read() as session:
        rows = await session.scalars(
            select(WebhookDelivery)
            .where(WebhookDelivery.automation_id == automation_id)
            .order_by(WebhookDelivery.received_at)
        )
        return list(rows)


async def runs(db: Any, automation_id: str) -> list[AutomationRun]:
    async with db.read() as session:
        rows = await session.scalars(
            select(AutomationRun).where(AutomationRun.automation_id == automation_id).order_by(AutomationRun.created_at)
        )
        return list(rows)


class Enqueued(list[str]):
    calls = 0


async def legacy_delivery(db: Any, automation_id: str, payload: Any) -> str:
    """A delivery recorded but not admitted, as deliveries were before admission moved into the intake: what
    the delivery job and recovery still process."""
    async with db.transaction() as session:
        trigger_id = await session.scalar(
            select(AutomationTrigger.id).where(
                AutomationTrigger.automation_id == automation_id, AutomationTrigger.type == TriggerType.WEBHOOK
            )
        )
        delivery = WebhookDelivery(
            id=new_id(), automation_id=automation_id, trigger_id=trigger_id, payload=payload, received_at=utcnow()
        )
        session.add(delivery)
    return delivery.id


@pytest.fixture
def launched(monkeypatch) -> list[str]:
    """The run ids whose launch every RqDispatcher of this process enqueues."""
    ids: list[str] = []
    real = RqDispatcher.enqueue_automation_run

    async def recording(self: RqDispatcher, run_id: str) -> None:
        await real(self, run_id)
        ids.append(run_id)

    monkeypatch.setattr(RqDispatcher, "enqueue_automation_run", recording)
    return ids


@pytest.fixture
def enqueued(monkeypatch) -> Enqueued:
    """The delivery ids every RqDispatcher of this process enqueues (the recovery's own too), and in how many
    calls. Recorded here rather than read back from the queue: a Redis shared with other test runs may have
    it emptied."""
    ids = Enqueued()
    real = RqDispatcher.enqueue_webhook_deliveries

    async def recording(self: RqDispatcher, delivery_ids: Sequence[str]) -> None:
        await real(self, delivery_ids)
        ids.extend(delivery_ids)
        ids.calls += 1

    monkeypatch.setattr(RqDispatcher, "enqueue_webhook_deliveries", recording)
    return ids


async def test_a_valid_delivery_is_recorded_admitted_and_answered_202_with_its_run(
    http, services, db, enqueued, launched, workspace_id
):
    automation_id, secret = await webhook_automation(services, workspace_id)

    response = await post(http, automation_id, secret, json={"ref": "main"})

    assert response.status_code == 202, response.text
    body = response.json()
    [delivery] = await deliveries(db, automation_id)
    [run] = await runs(db, automation_id)
    assert body == {
        "delivery_id": delivery.id,
        "deduplicated": False,
        "admission": "fired",
        "reason": None,
        "run_id": run.id,
    }
    assert (delivery.payload, delivery.outcome, delivery.run_id) == ({"ref": "main"}, "fired", run.id)
    assert delivery.processed_at is not None
    assert (run.status, run.dedup_key, run.trigger_data) == ("triggered", f"webhook:{delivery.id}", {"ref": "main"})
    assert launched == [run.id] and enqueued == []  # admitted at intake: no delivery job
    assert DELIVER_WEBHOOKS_JOB == "kandev.jobs.automations.deliver_webhooks"
    assert "access-control-allow-origin" not in response.headers


async def test_a_webhook_call_that_is_skipped_says_so_in_its_answer(http, services, db, launched, workspace_id):
    """A CI sender learns from the answer whether its delivery runs: fired, skipped at the concurrency cap
    (with the run that explains it), or deduplicated by its key (with the reason)."""
    automation_id, secret = await webhook_automation(services, workspace_id)  # at most 1 run at once

    first = await post(http, automation_id, secret, json={"n": 1}, headers={"Idempotency-Key": "build-1"})
    second = await post(http, automation_id, secret, json={"n": 2}, headers={"Idempotency-Key": "build-2"})
    again = await post(http, automation_id, secret, json={"n": 1}, headers={"Idempotency-Key": "build-1"})
    skipped_again = await post(http, automation_id, secret, json={"n": 2}, headers={"Idempotency-Key": "build-2"})

    assert [r.status_code for r in (first, second, again, skipped_again)] == [202] * 4
    fired, skipped = first.json(), second.json()
    assert (fired["admission"], fired["reason"]) == ("fired", None)
    assert skipped["admission"] == "skipped" and not skipped["deduplicated"]
    assert skipped["reason"] == "1 run(s) still active; the automation allows 1 at once"
    assert again.json() == {
        "delivery_id": fired["delivery_id"],
        "deduplicated": True,
        "admission": "deduplicated",
        "reason": "already fired for this delivery",
        "run_id": fired["run_id"],
    }
    assert skipped_again.json()["admission"] == "deduplicated"
    assert skipped_again.json()["reason"] == "already received for this delivery, which was skipped"
    by_id = {r.id: r for r in await runs(db, automation_id)}
    assert by_id[skipped["run_id"]].status == "skipped" and by_id[fired["run_id"]].status == "triggered"
    assert by_id[skipped["run_id"]].reason == skipped["reason"]
    assert launched == [fired["run_id"]]


async def test_a_wrong_or_missing_secret_is_401_and_records_nothing(http, services, db, workspace_id):
    automation_id, secret = await webhook_automation(services, workspace_id)

    wrong = await post(http, automation_id, secret[:-1] + ("A" if secret[-1] != "A" else "B"), content=b"x")
    missing = await post(http, automation_id, None, content=b"x")
    non_ascii = await post(http, automation_id, None, content=b"x", headers={"X-Webhook-Secret": "é".encode("latin-1")})
    bearer = await post(http, automation_id, None, content=b"x", headers={"Authorization": f"Bearer {secret}"})

    assert [r.status_code for r in (wrong, missing, non_ascii, bearer)] == [401, 401, 401, 401]
    assert wrong.json()["code"] == "UNAUTHENTICATED"
    assert await deliveries(db, automation_id) == []


async def test_unknown_deleted_and_webhookless_automations_are_404(http, services, db, workspace_id):
    deleted_id, deleted_secret = await webhook_automation(services, workspace_id, name="Gone")
    await services.automations.delete(deleted_id)
    scheduled = await services.automations.create(
        workspace_id, AutomationFields(name="Nightly", prompt="x", triggers=SCHEDULE)
    )
    _, secret = await webhook_automation(services, workspace_id)

    unknown = await post(http, "00000000-0000-4000-8000-000000000000", secret, content=b"x")
    garbage = await post(http, "%00" + "x" * 80, secret, content=b"x")
    deleted = await post(http, deleted_id, deleted_secret, content=b"x")
    no_webhook = await post(http, scheduled.automation.id, secret, content=b"x")

    assert [r.status_code for r in (unknown, garbage, deleted, no_webhook)] == [404, 404, 404, 404]
    assert await deliveries(db, deleted_id) == []


async def test_a_disabled_automation_or_webhook_trigger_is_409_for_the_secret_holder_only(
    http, services, db, workspace_id
):
    automation_id, secret = await webhook_automation(services, workspace_id)
    trigger_id = (await services.automations.get(automation_id)).triggers[0].id

    await services.automations.set_trigger_enabled(trigger_id, False)
    trigger_off = await post(http, automation_id, secret, content=b"x")
    stranger = await post(http, automation_id, "nope", content=b"x")
    await services.automations.set_trigger_enabled(trigger_id, True)
    await services.automations.set_enabled(automation_id, False)
    automation_off = await post(http, automation_id, secret, content=b"x")

    assert (trigger_off.status_code, stranger.status_code, automation_off.status_code) == (409, 401, 409)
    assert "trigger" in trigger_off.json()["error"] and "trigger" not in automation_off.json()["error"]
    assert await deliveries(db, automation_id) == []


async def test_a_body_over_1_mib_is_413_and_nothing_is_recorded_or_enqueued(http, services, db, enqueued, workspace_id):
    automation_id, secret = await webhook_automation(services, workspace_id)
    limit = 1024 * 1024

    async def streamed():
        for _ in range(17):
            yield b"x" * 65536

    declared = await post(http, automation_id, secret, content=b"x" * (limit + 1))
    undeclared = await post(http, automation_id, secret, content=streamed())
    at_limit = await post(http, automation_id, secret, content=b"y" * limit)

    assert (declared.status_code, undeclared.status_code, at_limit.status_code) == (413, 413, 202)
    [kept] = await deliveries(db, automation_id)
    assert kept.payload == {"body": "y" * limit}
    assert [r.id for r in await runs(db, automation_id)] == [kept.run_id] and enqueued == []


@pytest.mark.parametrize(
    ("content", "content_type", "data", "body"),
    [
        (b'{"service": "api", "n": [1, 2]}', "application/json", {"service": "api", "n": [1, 2]}, None),
        (b'{"service": "api"}', "text/plain", {"service": "api"}, None),
        (b"deploy now", "text/plain", {"body": "deploy now"}, "deploy now"),
        (b"", "", {"body": ""}, ""),
        (b"[1, 2]", "application/json", [1, 2], None),
        (b'[{"name": "first"}]', "application/json", [{"name": "first"}], None),
        (b'"deploy"', "application/json", "deploy", None),
        (b"42", "text/plain", 42, None),
        (b"true", "application/json", True, None),
        (b'{"a": NaN}', "application/json", {"body": '{"a": NaN}'}, '{"a": NaN}'),
        (b"caf\xc3\xa9 \xff\x00!", "application/octet-stream", {"body": "café \ufffd\ufffd!"}, "café \ufffd\ufffd!"),
        (b'{"k": "a\\u0000b\\ud800"}', "application/json", {"k": "a\ufffdb\ufffd"}, None),
        # An object nested deeper than a body may be is kept as text, like anything else that is not one.
        (DEEP_OBJECT, "application/json", {"body": DEEP_OBJECT.decode()}, DEEP_OBJECT.decode()),
    ],
)
async def test_bodies_reach_the_run_trigger_data_and_its_prompt(
    http, services, db, workspace_id, content, content_type, data, body
):
    automation_id, secret = await webhook_automation(
        services, workspace_id, title_template="T {{webhook.service}}", prompt="/say got {{webhook.body}}"
    )
    headers = {"Content-Type": content_type} if content_type else {}
    response = await post(http, automation_id, secret, content=content, headers=headers)
    assert response.status_code == 202, response.text
    assert response.json()["admission"] == "fired"

    [run] = await runs(db, automation_id)
    assert (run.trigger_type, run.trigger_data) == ("webhook", data)
    assert run.title_snapshot == (f"T {data['service']}" if isinstance(data, dict) and "service" in data else "T")
    assert await launch_run(services.ctx, run.id) == "launched"
    [run] = await runs(db, automation_id)
    async with db.read() as session:
        prompt = await session.scalar(select(QueuedPrompt.text).where(QueuedPrompt.session_id == run.session_id))
    assert prompt is not None and prompt.startswith("/say got ")
    rendered = prompt.removeprefix("/say got ")
    # PostgreSQL's jsonb keeps its own key order: the JSON is compared, not its text.
    assert (rendered == body) if body is not None else (json.loads(rendered) == data)


@pytest.mark.parametrize("header", ["Idempotency-Key", "X-GitHub-Delivery"])
async def test_a_repeated_key_answers_the_original_delivery_and_enqueues_nothing(
    http, services, db, enqueued, workspace_id, header
):
    automation_id, secret = await webhook_automation(services, workspace_id)
    other_id, other_secret = await webhook_automation(services, workspace_id, name="Other")

    first = await post(http, automation_id, secret, json={"n": 1}, headers={header: "abc-1"})
    again = await post(http, automation_id, secret, json={"n": 2}, headers={header: "abc-1"})
    fresh = await post(http, automation_id, secret, json={"n": 3}, headers={header: "abc-2"})
    elsewhere = await post(http, other_id, other_secret, json={"n": 4}, headers={header: "abc-1"})
    stranger = await post(http, automation_id, "wrong", json={"n": 5}, headers={header: "abc-1"})
    too_long = await post(http, automation_id, secret, json={}, headers={header: "k" * 256})

    assert [r.status_code for r in (first, again, fresh, elsewhere, stranger, too_long)] == [202] * 4 + [401, 400]
    assert again.json()["delivery_id"] == first.json()["delivery_id"] and again.json()["deduplicated"] is True
    assert again.json()["run_id"] == first.json()["run_id"] and again.json()["admission"] == "deduplicated"
    assert fresh.json()["deduplicated"] is False and elsewhere.json()["deduplicated"] is False
    assert [d.payload for d in await deliveries(db, automation_id)] == [{"n": 1}, {"n": 3}]
    assert len(await runs(db, automation_id)) == 2 and enqueued == []  # the repeat wrote no run


async def test_concurrent_repeats_of_one_key_record_one_delivery(http, services, db, workspace_id):
    automation_id, secret = await webhook_automation(services, workspace_id)

    answers = await asyncio.gather(
        *(post(http, automation_id, secret, json={"i": i}, headers={"Idempotency-Key": "same"}) for i in range(6))
    )

    assert {r.status_code for r in answers} == {202}
    assert len({r.json()["delivery_id"] for r in answers}) == 1
    assert sorted(r.json()["deduplicated"] for r in answers) == [False] + [True] * 5
    assert len(await deliveries(db, automation_id)) == 1


async def test_deliveries_arriving_together_are_recorded_and_admitted_together_each_with_its_own_answer(
    http, services, db, launched, workspace_id
):
    automation_id, secret = await webhook_automation(services, workspace_id, max_concurrent_runs=100)
    valid = [post(http, automation_id, secret, json={"i": i}, headers={"Idempotency-Key": f"k{i}"}) for i in range(20)]
    repeats = [
        post(http, automation_id, secret, json={"again": i}, headers={"Idempotency-Key": f"k{i}"}) for i in (0, 1)
    ]
    strangers = [post(http, automation_id, "wrong", json={"no": i}) for i in range(3)]

    answers = await asyncio.gather(*valid, *repeats, *strangers)

    assert [r.status_code for r in answers] == [202] * 22 + [401] * 3
    recorded = await deliveries(db, automation_id)
    assert sorted(d.payload["i"] for d in recorded) == list(range(20))
    by_key = {d.idempotency_key: d.id for d in recorded}
    assert [(r.json()["delivery_id"], r.json()["deduplicated"]) for r in answers[20:22]] == [
        (by_key[k], True) for k in ("k0", "k1")
    ]
    admitted = await runs(db, automation_id)
    assert sorted(launched) == sorted(r.id for r in admitted)  # each fresh delivery once, no repeat, no stranger
    assert sorted(r.json()["run_id"] for r in answers[:20]) == sorted(launched)
    assert len({r.created_at for r in admitted}) < 20  # batched: deliveries that waited together went together


async def test_a_delivery_whose_automation_vanishes_before_its_insert_is_404_and_spares_its_batch(
    http, services, db, launched, workspace_id, monkeypatch
):
    doomed_id, doomed_secret = await webhook_automation(services, workspace_id)
    kept_id, kept_secret = await webhook_automation(services, workspace_id, name="Kept")
    async with db.read() as session:  # what the batch's read saw, before a hard delete (the cascade)
        seen = await WebhookIntake._webhook_automations(session, {doomed_id, kept_id})
    async with db.transaction() as session:
        await session.execute(delete(Automation).where(Automation.id == doomed_id))

    async def read_before_the_delete(session: Any, automation_ids: set[str]) -> dict[str, Any]:
        return {k: v for k, v in seen.items() if k in automation_ids}

    monkeypatch.setattr(WebhookIntake, "_webhook_automations", staticmethod(read_before_the_delete))
    doomed, kept = await asyncio.gather(
        post(http, doomed_id, doomed_secret, json={"a": 1}), post(http, kept_id, kept_secret, json={"b": 2})
    )

    assert (doomed.status_code, kept.status_code) == (404, 202)
    assert [d.payload for d in await deliveries(db, kept_id)] == [{"b": 2}]
    assert launched == [kept.json()["run_id"]]


async def test_one_failing_delivery_of_a_job_neither_stops_nor_repeats_the_others(
    http, services, db, workspace_id, monkeypatch
):
    automation_id, _ = await webhook_automation(services, workspace_id, max_concurrent_runs=5)
    ids = [await legacy_delivery(db, automation_id, {"i": i}) for i in range(3)]
    real = webhooks.deliver

    async def failing_second(ctx: Any, delivery_id: str) -> str:
        if delivery_id == ids[1]:
            raise RuntimeError("the database went away")
        return await real(ctx, delivery_id)

    monkeypatch.setattr(webhooks, "deliver", failing_second)
    with pytest.raises(RuntimeError, match="1 of 3 webhook deliveries failed"):
        await deliver_all(services.ctx, ids)

    assert sorted(r.trigger_data["i"] for r in await runs(db, automation_id)) == [0, 2]
    assert await unprocessed_deliveries(services.ctx, utcnow()) == [ids[1]]  # recovery delivers it again
    monkeypatch.setattr(webhooks, "deliver", real)
    assert await deliver_all(services.ctx, ids) == {
        ids[0]: "already processed",
        ids[1]: "fired",
        ids[2]: "already processed",
    }


async def test_rotating_the_secret_makes_the_old_one_401(http, services, workspace_id):
    automation_id, old = await webhook_automation(services, workspace_id)
    new = await services.automations.rotate_webhook_secret(automation_id)

    assert (await post(http, automation_id, old, content=b"x")).status_code == 401
    assert (await post(http, automation_id, new, content=b"x")).status_code == 202


async def test_the_secret_is_never_logged_or_answered(http, services, workspace_id, caplog):
    automation_id, secret = await webhook_automation(services, workspace_id)
    caplog.set_level(logging.DEBUG)

    answers = [
        await post(http, automation_id, secret, content=b"x"),
        await post(http, automation_id, secret + "x", content=b"x"),
        await post(http, automation_id, secret, content=b"x" * (1024 * 1024 + 1)),
        await post(http, "00000000-0000-4000-8000-000000000000", secret, content=b"x"),
    ]
    await services.automations.set_enabled(automation_id, False)
    answers.append(await post(http, automation_id, secret, content=b"x"))

    assert [r.status_code for r in answers] == [202, 401, 413, 404, 409]
    for response in answers:
        assert secret not in response.text and secret not in str(response.headers)
    assert secret not in caplog.text


async def test_the_route_needs_no_access_token_with_auth_on_and_opens_nothing_else(
    settings, db, bus, redis_url, principal, jobs, services, workspace_id
):
    automation_id, secret = await webhook_automation(services, workspace_id)
    guarded = settings.model_copy(update={"auth": "on"})
    async with rest_client(guarded, db, bus, redis_url, principal, jobs) as client:
        accepted = await post(client, automation_id, secret, content=b"x", headers={"Origin": "https://evil.example"})
        refused = await post(client, automation_id, "wrong", content=b"x")
        export = await client.get(f"/api/v1/workspaces/{workspace_id}/automations/export")
        tasks = await client.post("/api/v1/tasks", json={}, headers={"X-Webhook-Secret": secret})

    assert (accepted.status_code, refused.status_code) == (202, 401)
    assert (export.status_code, tasks.status_code) == (401, 401)
    assert "access-control-allow-origin" not in accepted.headers


async def test_the_delivery_job_fires_once_even_when_run_twice(services, db, workspace_id):
    automation_id, _ = await webhook_automation(services, workspace_id, max_concurrent_runs=5)
    delivery_id = await legacy_delivery(db, automation_id, {"n": 1})

    outcomes = await asyncio.gather(deliver(services.ctx, delivery_id), deliver(services.ctx, delivery_id))
    later = await deliver(services.ctx, delivery_id)

    [run] = await runs(db, automation_id)
    [delivery] = await deliveries(db, automation_id)
    assert sorted(outcomes) in (["deduplicated", "fired"], ["already processed", "fired"])
    assert later == "already processed"
    assert (delivery.outcome, delivery.run_id, run.dedup_key) == ("fired", run.id, f"webhook:{delivery_id}")
    assert delivery.processed_at is not None


async def test_a_delivery_refused_at_fire_time_is_recorded_without_a_run(services, db, workspace_id):
    automation_id, _ = await webhook_automation(services, workspace_id)
    delivery_id = await legacy_delivery(db, automation_id, {})
    await services.automations.set_enabled(automation_id, False)

    assert await deliver(services.ctx, delivery_id) == "refused"
    assert await runs(db, automation_id) == []
    assert (await deliveries(db, automation_id))[0].processed_at is not None


async def test_recovery_enqueues_an_unprocessed_delivery_again(services, db, settings, enqueued, workspace_id):
    automation_id, _ = await webhook_automation(services, workspace_id)
    delivery_id = await legacy_delivery(db, automation_id, {"n": 1})
    # Recorded before admission moved into the intake, its job lost: only recovery may enqueue it.
    assert await unprocessed_deliveries(services.ctx) == []  # still within its grace period
    async with db.transaction() as session:
        await session.execute(
            update(WebhookDelivery)
            .where(WebhookDelivery.id == delivery_id)
            .values(received_at=utcnow() - timedelta(minutes=5))
        )

    counts = await recover(settings)

    assert counts["deliveries"] == 1
    assert enqueued.count(delivery_id) == 1  # by recovery
    await deliver(services.ctx, delivery_id)
    assert await unprocessed_deliveries(services.ctx, utcnow()) == []


@pytest.mark.slow
async def test_a_burst_is_accepted_durably_and_a_real_worker_launches_every_delivery(
    http, services, db, settings, workspace_id
):
    automation_id, secret = await webhook_automation(services, workspace_id, max_concurrent_runs=100, prompt="/end")

    with running_worker(settings):  # (it empties the queues as it starts)
        answers = await asyncio.gather(*(post(http, automation_id, secret, json={"i": i}) for i in range(40)))
        assert {r.status_code for r in answers} == {202}
        assert len({r.json()["delivery_id"] for r in answers}) == 40
        assert len(await deliveries(db, automation_id)) == 40
        assert {r.json()["admission"] for r in answers} == {"fired"}
        async with asyncio.timeout(60):
            while any(r.task_id is None for r in await runs(db, automation_id)):
                await asyncio.sleep(0.2)
    fired = await runs(db, automation_id)
    assert sorted(r.trigger_data["i"] for r in fired) == list(range(40))
    assert {d.outcome for d in await deliveries(db, automation_id)} == {"fired"}


@pytest.mark.parametrize(
    ("content", "template", "rendered"),
    [
        (
            b'[{"name": "first"}, {"name": "second"}]',
            "/say {{webhook.1.name}} after {{webhook.0.name}}",
            "second after first",
        ),
        (b'"deploy"', "/say {{webhook}} / {{data}}", "deploy / deploy"),
        (b"42", "/say {{webhook.body}}", "42"),
    ],
)
async def test_any_valid_json_body_is_the_trigger_data_so_an_array_index_resolves(
    http, services, db, workspace_id, content, template, rendered
):
    """A JSON array or scalar body is the run's data as it is, not {"body": text}: `{{webhook.0.x}}` reads it."""
    automation_id, secret = await webhook_automation(services, workspace_id, prompt=template)
    response = await post(http, automation_id, secret, content=content, headers={"Content-Type": "application/json"})
    assert response.status_code == 202 and response.json()["admission"] == "fired"
    [run] = await runs(db, automation_id)
    assert run.trigger_data == json.loads(content)
    assert await launch_run(services.ctx, run.id) == "launched"
    [run] = await runs(db, automation_id)
    async with db.read() as session:
        prompt = await session.scalar(select(QueuedPrompt.text).where(QueuedPrompt.session_id == run.session_id))
    assert prompt == f"/say {rendered}"
