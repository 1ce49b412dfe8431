"""GET /metrics serves the shared counters as Prometheus text."""

from __future__ import annotations

import httpx
import redis.asyncio as aioredis

from kandev import metrics
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
