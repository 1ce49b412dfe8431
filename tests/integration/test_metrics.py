"""GET /metrics serves the shared counters as Prometheus text."""

from __future__ import annotations

import httpx
import redis.asyncio as aioredis

from kandev.domain.access.tokens import create_token
from kandev.domain.access.users import create_user
from kandev.platform import metrics
from tests.support.factories import settings_for
from tests.support.server import running_server


async def test_metrics_lists_the_counters_with_the_values_every_process_added(settings, redis_url):
    client = aioredis.from_url(redis_url)
    await metrics.increment(client, "step_completion_signal_fallback_used_total", agent="Metrics test agent")
    await client.aclose()
    async with running_server(settings) as address:
        async with httpx.AsyncClient(base_url=f"http://{address}") as http:
            response = await http.get("/metrics")
    assert response.status_code == 200
    text = response.text
    assert "# TYPE step_completion_signal_received_total counter" in text
    line = next(row for row in text.splitlines() if 'agent="Metrics test agent"' in row)
    assert line.startswith("step_completion_signal_fallback_used_total{") and int(line.rsplit(" ", 1)[1]) >= 1


async def test_with_auth_on_metrics_needs_a_personal_access_token(database_url, redis_url, tmp_path, db):
    settings = settings_for(database_url, redis_url, tmp_path, auth="on")
    async with running_server(settings) as address:
        token = (await create_token(db, name="prometheus", login="local")).token
        async with httpx.AsyncClient(base_url=f"http://{address}") as http:
            missing = await http.get("/metrics")
            wrong = await http.get("/metrics", headers={"Authorization": "Bearer kdv_not-a-real-token"})
            scraped = await http.get("/metrics", headers={"Authorization": f"Bearer {token}"})
    assert (missing.status_code, wrong.status_code) == (401, 401)
    assert "step_completion_signal" not in missing.text + wrong.text
    assert scraped.status_code == 200 and "# TYPE step_completion_signal_received_total counter" in scraped.text


async def test_with_auth_on_metrics_are_for_admins_only(database_url, redis_url, tmp_path, db):
    # A counter's labels name agent profiles, whoever's they are.
    client = aioredis.from_url(redis_url)
    await metrics.increment(client, "step_completion_signal_fallback_used_total", agent="Alice's secret project")
    await client.aclose()
    settings = settings_for(database_url, redis_url, tmp_path, auth="on")
    async with running_server(settings) as address:
        await create_user(db, "bob")
        await create_user(db, "carol", admin=True)
        tokens = {login: (await create_token(db, name="scrape", login=login)).token for login in ("bob", "carol")}
        async with httpx.AsyncClient(base_url=f"http://{address}") as http:
            answers = {
                login: await http.get("/metrics", headers={"Authorization": f"Bearer {token}"})
                for login, token in tokens.items()
            }
    refused, scraped = answers["bob"], answers["carol"]
    assert refused.status_code == 403
    assert refused.json() == {"error": "metrics are for admins only", "code": "PERMISSION_DENIED"}
    assert "Alice" not in refused.text
    assert scraped.status_code == 200 and 'agent="Alice\'s secret project"' in scraped.text
