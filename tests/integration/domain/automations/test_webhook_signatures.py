"""Signed webhook deliveries over HTTP, tried as a hostile sender would: a replayed signature (again, after a
restart, at a second replica, many at once), a stale or future timestamp, forged and tampered signatures, the
plain secret where only signatures are taken; and the trigger's setting through GraphQL."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from kandev.domain.access.bootstrap import bootstrap
from kandev.domain.automations.records import AutomationFields, TriggerFields
from kandev.domain.automations.webhook_auth import KEPT, forget_stale, signature_of
from kandev.domain.services import Services
from kandev.models import WebhookDelivery, WebhookSignature
from kandev.models.base import utcnow
from kandev.models.enums import TriggerType
from kandev.platform.database import Database
from kandev.platform.settings import Settings
from kandev.wiring import service_context
from tests.integration.rest.conftest import rest_client
from tests.support.databases import BACKENDS, database_on
from tests.support.factories import settings_for

SIGNED_ONLY = [TriggerFields(type=TriggerType.WEBHOOK, config={"require_signature": True})]


@pytest.fixture
async def http(settings, db, bus, redis_url, principal, jobs) -> AsyncIterator[httpx.AsyncClient]:
    async with rest_client(settings, db, bus, redis_url, principal, jobs) as client:
        yield client


async def signed_webhook(services: Services, workspace_id: str, triggers: Any = SIGNED_ONLY) -> tuple[str, str]:
    saved = await services.automations.create(
        workspace_id, AutomationFields(name="Hook", prompt="x", triggers=triggers)
    )
    assert saved.webhook_secret
    return saved.automation.id, saved.webhook_secret


def signed(secret: str, body: bytes, at: float | None = None) -> dict[str, str]:
    timestamp = str(int(time.time() if at is None else at))
    return {"X-Kandev-Timestamp": timestamp, "X-Kandev-Signature": signature_of(secret.encode(), timestamp, body)}


def post(http: httpx.AsyncClient, automation_id: str, body: bytes, headers: dict[str, str]) -> Any:
    return http.post(f"/api/v1/automations/webhook/{automation_id}", content=body, headers=headers)


async def recorded(db: Database, automation_id: str) -> int:
    async with db.read() as session:
        query = select(func.count()).select_from(WebhookDelivery).where(WebhookDelivery.automation_id == automation_id)
        return int(await session.scalar(query) or 0)


async def test_a_signed_delivery_is_accepted_once_and_its_replay_is_refused(http, services, db, workspace_id):
    automation_id, secret = await signed_webhook(services, workspace_id)
    body = b'{"deploy": "api"}'
    headers = signed(secret, body)

    first = await post(http, automation_id, body, headers)
    replay = await post(http, automation_id, body, headers)
    # The same signature with another Idempotency-Key is still the same signature.
    rekeyed = await post(http, automation_id, body, {**headers, "Idempotency-Key": "fresh"})
    # The same digest written in capitals is the same signature.
    shouted = {**headers, "X-Kandev-Signature": headers["X-Kandev-Signature"].upper()}
    recased = await post(http, automation_id, body, shouted)
    other_id, _ = await signed_webhook(services, workspace_id)
    elsewhere = await post(http, other_id, body, headers)  # another webhook: another secret
    resigned = await post(http, automation_id, body, signed(secret, body, time.time() + 1))

    assert first.status_code == 202, first.text
    for answer in (replay, rekeyed, recased):
        assert (answer.status_code, answer.json()["code"]) == (409, "REPLAYED")
    assert (elsewhere.status_code, elsewhere.json()["code"]) == (401, "UNAUTHENTICATED")
    assert resigned.status_code == 202  # signed anew (another timestamp): a new delivery
    assert await recorded(db, automation_id) == 2


async def test_the_same_signed_delivery_sent_many_times_at_once_is_accepted_once(http, services, db, workspace_id):
    automation_id, secret = await signed_webhook(services, workspace_id)
    body = b"burst"
    headers = signed(secret, body)

    answers = await asyncio.gather(*(post(http, automation_id, body, headers) for _ in range(20)))

    assert sorted(a.status_code for a in answers) == [202] + [409] * 19
    assert await recorded(db, automation_id) == 1


async def test_a_stale_or_future_timestamp_is_refused_and_nothing_is_recorded(http, services, db, workspace_id):
    automation_id, secret = await signed_webhook(services, workspace_id)
    now = time.time()

    stale = await post(http, automation_id, b"x", signed(secret, b"x", now - 301))
    future = await post(http, automation_id, b"x", signed(secret, b"x", now + 301))
    ancient = await post(http, automation_id, b"x", signed(secret, b"x", 0))

    for answer in (stale, future, ancient):
        assert (answer.status_code, answer.json()["code"]) == (401, "STALE_SIGNATURE")
    assert await recorded(db, automation_id) == 0
    assert (await post(http, automation_id, b"x", signed(secret, b"x", now - 250))).status_code == 202


async def test_forged_and_tampered_signatures_are_refused_and_change_nothing(http, services, db, workspace_id, caplog):
    caplog.set_level(logging.DEBUG)
    automation_id, secret = await signed_webhook(services, workspace_id)
    body = b'{"amount": 1}'
    good = signed(secret, body)
    later = str(int(good["X-Kandev-Timestamp"]) + 60)
    attempts = {
        "another key": signed("not-the-secret", body),
        "tampered body": good,  # sent with another body below
        "moved timestamp": {**good, "X-Kandev-Timestamp": later},
        "no timestamp": {"X-Kandev-Signature": good["X-Kandev-Signature"]},
        "no signature": {"X-Kandev-Timestamp": good["X-Kandev-Timestamp"]},
        "not hex": {**good, "X-Kandev-Signature": "sha256=" + "z" * 64},
        "bare digest": {**good, "X-Kandev-Signature": good["X-Kandev-Signature"].removeprefix("sha256=")},
        "same time, other text": {**good, "X-Kandev-Timestamp": "0" + good["X-Kandev-Timestamp"]},
        "negative": {**good, "X-Kandev-Timestamp": "-" + good["X-Kandev-Timestamp"]},
        "huge": {**good, "X-Kandev-Timestamp": "9" * 40},
        "plain secret": {"X-Webhook-Secret": secret},
    }
    for name, headers in attempts.items():
        sent = b'{"amount": 1000}' if name == "tampered body" else body
        answer = await post(http, automation_id, sent, headers)
        assert answer.status_code == 401, name
        assert answer.json()["code"] == "UNAUTHENTICATED", name
        assert secret not in answer.text
    assert await recorded(db, automation_id) == 0
    assert secret not in caplog.text
    assert (await post(http, automation_id, body, good)).status_code == 202  # the real one was never spent


async def test_without_the_requirement_the_secret_or_a_signature_authenticates(http, services, db, workspace_id):
    automation_id, secret = await signed_webhook(services, workspace_id, [TriggerFields(type=TriggerType.WEBHOOK)])
    body = b"x"
    headers = signed(secret, body)

    assert (await post(http, automation_id, body, {"X-Webhook-Secret": secret})).status_code == 202
    assert (await post(http, automation_id, body, headers)).status_code == 202
    # A signature present is what is checked, and its replay refused, whatever secret comes with it.
    assert (await post(http, automation_id, body, {**headers, "X-Webhook-Secret": secret})).status_code == 409
    wrong = signed("guess", body)
    assert (await post(http, automation_id, body, {**wrong, "X-Webhook-Secret": secret})).status_code == 401


async def test_a_replay_is_refused_after_a_restart_and_at_a_second_replica(
    settings, db, bus, redis_url, principal, jobs, services, workspace_id
):
    automation_id, secret = await signed_webhook(services, workspace_id)
    body = b"once"
    headers = signed(secret, body)
    async with rest_client(settings, db, bus, redis_url, principal, jobs) as first:
        assert (await post(first, automation_id, body, headers)).status_code == 202
    restarted = Database(settings.resolved_database_url())  # a new process: its own pool and intake
    try:
        async with rest_client(settings, restarted, bus, redis_url, principal, jobs) as second:
            replay = await post(second, automation_id, body, headers)
    finally:
        await restarted.dispose()
    assert (replay.status_code, replay.json()["code"]) == (409, "REPLAYED")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_two_replicas_given_the_same_signed_delivery_at_once_accept_it_once(
    backend, database_url, redis_url, tmp_path, bus, jobs
):
    async with database_on(backend, database_url, tmp_path) as url:
        settings: Settings = settings_for(url, redis_url, tmp_path)
        pools = [Database(url), Database(url)]
        try:
            local = await bootstrap(pools[0], settings)
            services = Services(service_context(pools[0], bus, jobs, settings, local))
            automation_id, secret = await signed_webhook(services, (await services.workspaces.list())[0].id)
            body = b"race"
            headers = signed(secret, body)
            async with (
                rest_client(settings, pools[0], bus, redis_url, local, jobs) as one,
                rest_client(settings, pools[1], bus, redis_url, local, jobs) as two,
            ):
                answers = await asyncio.gather(
                    *(post((one, two)[n % 2], automation_id, body, headers) for n in range(10))
                )
            assert sorted(a.status_code for a in answers) == [202] + [409] * 9
            assert await recorded(pools[0], automation_id) == 1
        finally:
            for pool in pools:
                await pool.dispose()


async def test_seen_signatures_are_kept_until_the_window_refuses_them_anyway(http, services, db, workspace_id):
    automation_id, secret = await signed_webhook(services, workspace_id)
    body = b"x"
    headers = signed(secret, body)
    assert (await post(http, automation_id, body, headers)).status_code == 202

    async with db.transaction() as session:
        await forget_stale(session, utcnow())
    assert (await post(http, automation_id, body, headers)).status_code == 409  # still inside the window: kept
    async with db.transaction() as session:
        await forget_stale(session, utcnow() + KEPT + KEPT)
        assert await session.scalar(select(func.count()).select_from(WebhookSignature)) == 0


REQUIRE = (
    "mutation($i: UpdateAutomationInput!) { updateAutomation(input: $i) { __typename "
    "... on AutomationPayload { automation { triggers { type requireSignature } } } "
    "... on ValidationError { field } } }"
)


async def test_the_requirement_is_set_and_read_through_graphql(gql, services, workspace_id):
    automation_id, _ = await signed_webhook(services, workspace_id, [TriggerFields(type=TriggerType.WEBHOOK)])

    for wanted in (True, False):
        variables = {"automationId": automation_id, "triggers": [{"type": "WEBHOOK", "requireSignature": wanted}]}
        answer = (await gql(REQUIRE, i=variables))["updateAutomation"]
        assert answer["automation"]["triggers"] == [{"type": "WEBHOOK", "requireSignature": wanted}]
    scheduled = {"automationId": automation_id, "triggers": [{"type": "SCHEDULED", "expression": "0 9 * * *"}]}
    answer = (await gql(REQUIRE, i=scheduled))["updateAutomation"]
    assert answer["automation"]["triggers"] == [{"type": "SCHEDULED", "requireSignature": None}]
