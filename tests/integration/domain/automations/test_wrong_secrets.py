"""Floods of wrong webhook secrets over HTTP: past the limit an attacker's address gets 429 with Retry-After,
counted across replicas in Redis, while the right sender keeps succeeding — from another address, from the
attacker's own address (a shared proxy or NAT), and with a forged X-Forwarded-For; the GitHub endpoint too."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis

from kandev.adapters.github.deliveries import signature_of as github_signature_of
from kandev.app import create_app
from kandev.domain.automations.records import AutomationFields, TriggerFields
from kandev.domain.automations.webhook_auth import signature_of, source_key
from kandev.models.base import new_id
from kandev.models.enums import TriggerType
from kandev.platform.settings import Settings
from kandev.wiring import AppState
from tests.support.factories import settings_for

LIMIT = 5
ATTACKER, SENDER = "203.0.113.9", "198.51.100.7"


@pytest.fixture
def settings(database_url: str, redis_url: str, tmp_path: Path) -> Settings:
    return settings_for(
        database_url, redis_url, tmp_path, webhook_failure_limit=LIMIT, webhook_failure_window_seconds=60
    )


@asynccontextmanager
async def replica(settings, db, bus, redis_url, principal, jobs) -> AsyncIterator[Any]:
    """A server process: its app and state; `client(address)` talks to it from that peer address."""
    app = create_app(settings)
    redis = aioredis.from_url(redis_url)
    app.state.kandev = AppState(settings=settings, db=db, bus=bus, redis=redis, local_principal=principal, jobs=jobs)
    clients: list[httpx.AsyncClient] = []

    def client(address: str) -> httpx.AsyncClient:
        transport = httpx.ASGITransport(app=app, client=(address, 40000))
        clients.append(httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", timeout=60))
        return clients[-1]

    try:
        yield client
    finally:
        for opened in clients:
            await opened.aclose()
        await redis.aclose()


@pytest.fixture
async def server(settings, db, bus, redis_url, principal, jobs) -> AsyncIterator[Any]:
    async with replica(settings, db, bus, redis_url, principal, jobs) as client:
        yield client


async def webhook(services: Any, workspace_id: str) -> tuple[str, str]:
    saved = await services.automations.create(
        workspace_id,
        AutomationFields(name="Hook", prompt="x", triggers=[TriggerFields(type=TriggerType.WEBHOOK)]),
    )
    assert saved.webhook_secret
    return saved.automation.id, saved.webhook_secret


def deliver(client: httpx.AsyncClient, automation_id: str, secret: str, **headers: str) -> Any:
    return client.post(
        f"/api/v1/automations/webhook/{automation_id}", content=b"x", headers={"X-Webhook-Secret": secret, **headers}
    )


async def test_a_flood_of_wrong_secrets_is_answered_429_while_the_right_sender_keeps_succeeding(
    server, services, workspace_id
):
    automation_id, secret = await webhook(services, workspace_id)
    attacker, sender, behind_the_same_nat = server(ATTACKER), server(SENDER), server(ATTACKER)

    statuses = []
    for attempt in range(3 * LIMIT):
        statuses.append((await deliver(attacker, automation_id, f"guess-{attempt}")).status_code)
        assert (await deliver(sender, automation_id, secret)).status_code == 202
    assert statuses == [401] * LIMIT + [429] * (2 * LIMIT)

    limited = await deliver(attacker, automation_id, "guess")
    assert limited.json()["code"] == "RATE_LIMITED"
    assert 0 < int(limited.headers["Retry-After"]) <= 60
    # The right secret from the attacker's own address, or with the right sender's address forged in a header:
    # authenticating is never counted nor blocked.
    assert (await deliver(behind_the_same_nat, automation_id, secret)).status_code == 202
    forged = await deliver(attacker, automation_id, "guess", **{"X-Forwarded-For": SENDER})
    assert forged.status_code == 429
    timestamp = str(int(time.time()))
    signed = {"X-Kandev-Timestamp": timestamp, "X-Kandev-Signature": signature_of(secret.encode(), timestamp, b"x")}
    assert (await deliver(attacker, automation_id, "", **signed)).status_code == 202
    # Another address is counted on its own: the right sender's wrong secret is still a plain 401.
    assert (await deliver(sender, automation_id, "typo")).status_code == 401


async def test_right_secrets_are_never_counted(server, services, workspace_id):
    automation_id, secret = await webhook(services, workspace_id)
    client = server(ATTACKER)

    for _ in range(3 * LIMIT):
        assert (await deliver(client, automation_id, secret)).status_code == 202
    statuses = [(await deliver(client, automation_id, "guess")).status_code for _ in range(LIMIT + 1)]

    assert statuses == [401] * LIMIT + [429]


async def test_wrong_secrets_are_counted_together_across_replicas(
    settings, db, bus, redis_url, principal, jobs, services, workspace_id
):
    automation_id, secret = await webhook(services, workspace_id)
    async with (
        replica(settings, db, bus, redis_url, principal, jobs) as one,
        replica(settings, db, bus, redis_url, principal, jobs) as two,
    ):
        answers = await asyncio.gather(*(deliver((one, two)[n % 2](ATTACKER), automation_id, "g") for n in range(12)))
        assert sorted(a.status_code for a in answers) == [401] * LIMIT + [429] * (12 - LIMIT)
        assert (await deliver(two(ATTACKER), automation_id, secret)).status_code == 202


async def test_one_webhooks_count_does_not_limit_another(server, services, workspace_id):
    first, _ = await webhook(services, workspace_id)
    second, _ = await webhook(services, workspace_id)
    client = server(ATTACKER)
    for _ in range(LIMIT + 1):
        await deliver(client, first, "guess")
    assert (await deliver(client, first, "guess")).status_code == 429
    assert (await deliver(client, second, "guess")).status_code == 401


async def test_an_ipv6_host_cannot_escape_its_count_by_changing_addresses_within_its_64(server, services, workspace_id):
    automation_id, _ = await webhook(services, workspace_id)
    statuses = [
        (await deliver(server(f"2001:db8:1:2::{n:x}"), automation_id, "guess")).status_code for n in range(LIMIT + 2)
    ]
    assert statuses == [401] * LIMIT + [429, 429]
    assert source_key("2001:db8:1:2::1") == source_key("2001:db8:1:2:ffff::9") == "2001:db8:1:2::/64"
    assert source_key("2001:db8:1:3::1") != source_key("2001:db8:1:2::1")


async def test_the_count_starts_afresh_when_its_window_ends(
    database_url, redis_url, tmp_path, db, bus, principal, jobs, services, workspace_id
):
    short = settings_for(database_url, redis_url, tmp_path, webhook_failure_limit=1, webhook_failure_window_seconds=1)
    automation_id, _ = await webhook(services, workspace_id)
    async with replica(short, db, bus, redis_url, principal, jobs) as client:
        attacker = client(ATTACKER)
        assert [(await deliver(attacker, automation_id, "g")).status_code for _ in range(2)] == [401, 429]
        async with asyncio.timeout(10):
            while (await deliver(attacker, automation_id, "g")).status_code == 429:
                await asyncio.sleep(0.2)  # a Redis expiry is no event to await


# -- the GitHub endpoint ----------------------------------------------------------------------------------------

KEY = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAsecretkeymaterial\n-----END RSA PRIVATE KEY-----"
APP_SECRET = "It's a Secret to Everybody"


async def test_bad_github_signatures_are_rate_limited_while_a_good_one_still_goes_through(server, services):
    await services.github.set_app("123", KEY, APP_SECRET)
    body = json.dumps({"zen": "hi"}).encode()
    # The App's count is the server's, not a fresh automation's: an address of this test's own keeps a
    # Redis shared with other runs out of it.
    attacker = server(f"2001:db8:{uuid.uuid4().hex[:4]}:{uuid.uuid4().hex[:4]}::1")

    async def ping(secret: str) -> int:
        headers = {"X-GitHub-Event": "ping", "X-GitHub-Delivery": new_id()}
        headers["X-Hub-Signature-256"] = github_signature_of(secret, body)
        return (await attacker.post("/api/v1/github/webhook", content=body, headers=headers)).status_code

    assert [await ping("guess") for _ in range(LIMIT + 1)] == [401] * LIMIT + [429]
    assert await ping(APP_SECRET) == 202
