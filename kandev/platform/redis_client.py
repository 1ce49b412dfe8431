"""Redis client factories with bounded timeouts, so a dead server surfaces as an error instead of a hang."""

from __future__ import annotations

import redis
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

CONNECT_TIMEOUT_SECONDS = 5.0
# Bounds ordinary commands. Blocking commands must block for less than this (RQ raises it on its own
# connection to cover its BLMOVE), and redis-py's pub/sub `listen()` ignores it.
SOCKET_TIMEOUT_SECONDS = 30.0
HEALTH_CHECK_SECONDS = 30


def sync_redis(url: str, *, socket_timeout: float | None = SOCKET_TIMEOUT_SECONDS) -> redis.Redis:
    """A blocking client returning bytes: what RQ needs (it pickles job data, so no decode_responses)."""
    return redis.Redis.from_url(
        url,
        socket_connect_timeout=CONNECT_TIMEOUT_SECONDS,
        socket_timeout=socket_timeout,
        socket_keepalive=True,
        # Pooled connections idle for long (a quiet worker) may have been dropped by NAT or the server.
        health_check_interval=HEALTH_CHECK_SECONDS,
    )


def reconnect_once() -> Retry:
    """For asyncio clients: a command on a pooled connection the server closed (Redis restarted, an
    embedded one by `kandev serve`'s supervisor) reconnects and runs again instead of failing once."""
    return Retry(NoBackoff(), 1)


def async_redis(
    url: str, *, decode_responses: bool = False, socket_timeout: float | None = SOCKET_TIMEOUT_SECONDS
) -> aioredis.Redis:
    """An asyncio client for the server side (pub/sub events, cancel nudges, leases)."""
    return aioredis.Redis.from_url(
        url,
        socket_connect_timeout=CONNECT_TIMEOUT_SECONDS,
        socket_timeout=socket_timeout,
        socket_keepalive=True,
        health_check_interval=HEALTH_CHECK_SECONDS,
        decode_responses=decode_responses,
        retry=reconnect_once(),
    )


def pubsub_channel(client: aioredis.Redis, name: str) -> str:
    """`name` as a channel on `client`'s server. Redis pub/sub ignores the database number, so on a database
    other than 0 the channel carries it: deployments (or parallel test workers) sharing one server on different
    databases must not hear each other's events. Database 0 keeps the bare name."""
    database = int(client.connection_pool.connection_kwargs.get("db") or 0)
    return name if database == 0 else f"db{database}:{name}"
