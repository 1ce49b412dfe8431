"""Repeated wrong webhook secrets are rate-limited without locking out the right sender.

Only refusals for a missing or wrong secret or signature are counted, per webhook and source address (an IPv6
source by its /64, which one host can fill with addresses), in a window kept in Redis so every replica counts
together. Past KANDEV_WEBHOOK_FAILURE_LIMIT in KANDEV_WEBHOOK_FAILURE_WINDOW_SECONDS, a further wrong one is
answered 429 with Retry-After instead of 401. A delivery that authenticates is never counted and never
limited: it is verified as always, so an attacker who shares the right sender's address (a proxy, a NAT) or
forges its address cannot lock it out; the attacker only gets 429s for its guesses, which a secret of 256 random
bits leaves hopeless anyway.
"""

from __future__ import annotations

import ipaddress
import logging

from redis.exceptions import RedisError

from kandev.domain.context import ServiceContext

log = logging.getLogger("kandev.webhooks")
PREFIX = "kandev:webhook-wrong-secrets:"
_SOURCE_LIMIT = 64


def source_key(source: str | None) -> str:
    """The address the count is kept for: an IPv4 address, an IPv6 address's /64, else the text as given."""
    if not source:
        return "-"
    try:
        address = ipaddress.ip_address(source)
    except ValueError:
        return source[:_SOURCE_LIMIT]
    if address.version == 6:
        return str(ipaddress.ip_network(f"{address}/64", strict=False))
    return str(address)


async def count_wrong_secret(ctx: ServiceContext, webhook: str, source: str | None) -> int | None:
    """Count one wrong secret for (webhook, source); the seconds until the count starts afresh when the limit is
    passed (answer 429 with that Retry-After), else None (answer 401). Redis out of reach counts nothing."""
    settings = ctx.settings
    key = f"{PREFIX}{webhook}:{source_key(source)}"
    try:
        async with ctx.bus.redis.pipeline(transaction=True) as pipe:
            pipe.set(key, 0, ex=settings.webhook_failure_window_seconds, nx=True)
            pipe.incr(key)
            pipe.ttl(key)
            _, count, ttl = await pipe.execute()
    except (RedisError, OSError):
        log.warning("wrong webhook secrets could not be counted: Redis is out of reach")
        return None
    if int(count) <= settings.webhook_failure_limit:
        return None
    return max(int(ttl), 1)
