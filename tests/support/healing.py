"""kill -9 a child of `kandev serve` and measure how long until it is healed (tests and `make bench`)."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable

import httpx
import redis

from tests.support.serve import Served

HEAL_TIMEOUT = 60.0


def wait_for(condition: Callable[[], object], timeout: float = HEAL_TIMEOUT, what: str = "condition") -> object:
    """Poll `condition` (bounded) until it returns something truthy, and return that."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = condition()
        except (OSError, redis.RedisError, httpx.HTTPError):
            value = None
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"{what}: not within {timeout}s")


def redis_url_of(served: Served) -> str:
    """The embedded Redis URL, as serve hands it to its children."""
    scheduler = wait_for(lambda: served.children().get("scheduler"), what="the scheduler running")
    assert isinstance(scheduler, int)
    return served.child_env(scheduler)["KANDEV_REDIS_URL"]


SCHEDULER_STARTED = "scheduler running every"


def answering(served: Served, role: str, pid: int, url: str, scheduler_starts: int = 0) -> bool:
    """Whether the child `role` with `pid` does its job: Redis answers PING, a worker is registered with
    RQ under its name, the scheduler has started its loop (more often than `scheduler_starts` times)."""
    if role == "redis":
        client = redis.Redis.from_url(url, socket_timeout=1, socket_connect_timeout=1)
        try:
            return bool(client.ping())
        finally:
            client.close()
    if role == "scheduler":
        return served.log().count(SCHEDULER_STARTED) > scheduler_starts
    client = redis.Redis.from_url(url, socket_timeout=1, socket_connect_timeout=1)
    try:
        return client.hget(f"rq:worker:{role}", "pid") == str(pid).encode()
    finally:
        client.close()


def kill_and_heal(served: Served, role: str) -> dict[str, float]:
    """kill -9 the child `role`; wait (bounded) for its replacement to run and answer, then for a turn
    started afterwards to complete. Returns the seconds each took from the kill."""
    # A child may be between a death and its restart (a worker can quit over a Redis restart).
    old = wait_for(lambda: served.children().get(role), what=f"the {role} running")
    assert isinstance(old, int)
    url = redis_url_of(served)
    wait_for(lambda: answering(served, role, old, url), what=f"the {role} answering before the kill")
    starts = served.log().count(SCHEDULER_STARTED)
    killed = time.monotonic()
    os.kill(old, signal.SIGKILL)
    new = wait_for(lambda: (pid := served.children().get(role)) != old and pid, what=f"a new {role}")
    assert isinstance(new, int)
    restarted = time.monotonic() - killed
    wait_for(lambda: answering(served, role, new, url, starts), what=f"the new {role} answering")
    answered = time.monotonic() - killed
    assert served.run_turn(f"after killing the {role}") == f"after killing the {role}"
    turned = time.monotonic() - killed
    figures = {"replacement_started_s": restarted, "replacement_answering_s": answered, "next_turn_done_s": turned}
    return figures
