"""Counters kept in Redis, so /metrics reports totals across every server and worker process."""

from __future__ import annotations

from typing import Any

import redis.asyncio as aioredis

from kandev.platform.event_bus import EventBus

PREFIX = "kandev:metrics:"
HELP = {
    "step_completion_signal_received_total": "Accepted step completion signals, by source and agent.",
    "step_completion_signal_fallback_used_total": "Manual 'mark complete & advance' uses, by agent.",
}


def _key(name: str, labels: dict[str, str]) -> str:
    rendered = ",".join(f'{k}="{_escape(v)}"' for k, v in sorted(labels.items()))
    return f"{PREFIX}{name}{{{rendered}}}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")


async def increment(redis: aioredis.Redis, name: str, **labels: str) -> None:
    await redis.incr(_key(name, labels))


class RedisCounters:
    """The domain's Counters, kept in the event bus's Redis."""

    def __init__(self, bus: EventBus) -> None:
        self._bus = bus

    async def increment(self, name: str, **labels: str) -> None:
        await increment(self._bus.redis, name, **labels)


async def render(redis: aioredis.Redis) -> str:
    """Prometheus text exposition of every counter (known ones appear even at zero)."""
    values: dict[str, list[tuple[str, Any]]] = {name: [] for name in HELP}
    async for raw in redis.scan_iter(match=PREFIX + "*", count=500):
        key = raw.decode() if isinstance(raw, bytes) else raw
        series = key.removeprefix(PREFIX)
        name = series.split("{", 1)[0]
        value = await redis.get(key)
        values.setdefault(name, []).append((series, int(value or 0)))
    lines: list[str] = []
    for name in sorted(values):
        lines.append(f"# HELP {name} {HELP.get(name, name)}")
        lines.append(f"# TYPE {name} counter")
        for series, value in sorted(values[name]):
            lines.append(f"{series} {value}")
    return "\n".join(lines) + "\n"
