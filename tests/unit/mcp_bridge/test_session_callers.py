"""The per-process cache of session token checks: what it keeps and what makes it forget."""

from __future__ import annotations

import time

from kandev.domain.context import Principal
from kandev.mcp_bridge.auth import SessionCallers
from kandev.mcp_bridge.surface import McpCaller


def caller(session_id: str, task_id: str) -> McpCaller:
    principal = Principal(user_id="u", login="agent", session_id=session_id, task_id=task_id)
    return McpCaller(principal=principal, endpoint="session", session_id=session_id, task_id=task_id)


def live_cache() -> SessionCallers:
    callers = SessionCallers()
    callers.enabled = True
    return callers


def test_a_check_is_kept_only_while_announcements_are_heard():
    callers = SessionCallers()
    callers.put(caller("s1", "t1"), callers.generation)
    assert callers.get("s1") is None
    callers.enabled = True
    callers.put(caller("s1", "t1"), callers.generation)
    assert callers.get("s1") is not None
    callers.disable()
    assert callers.get("s1") is None


def test_an_announcement_for_a_session_forgets_only_that_session():
    callers = live_cache()
    callers.put(caller("s1", "t1"), callers.generation)
    callers.put(caller("s2", "t1"), callers.generation)
    callers.forget({"session_id": "s1", "task_id": None})
    assert callers.get("s1") is None
    assert callers.get("s2") is not None


def test_an_announcement_for_a_task_forgets_every_session_of_it():
    callers = live_cache()
    callers.put(caller("s1", "t1"), callers.generation)
    callers.put(caller("s2", "t1"), callers.generation)
    callers.put(caller("s3", "t2"), callers.generation)
    callers.forget({"session_id": None, "task_id": "t1"})
    assert [callers.get(s) is not None for s in ("s1", "s2", "s3")] == [False, False, True]


def test_a_check_read_before_an_announcement_is_not_kept():
    # The database said "live", then the session ended before the answer was stored: keeping it would
    # let an ended session in until the entry expired.
    callers = live_cache()
    generation = callers.generation
    callers.forget({"session_id": "s1", "task_id": None})
    callers.put(caller("s1", "t1"), generation)
    assert callers.get("s1") is None


def test_an_entry_expires(monkeypatch):
    callers = live_cache()
    callers.put(caller("s1", "t1"), callers.generation)
    clock = time.monotonic() + SessionCallers.TTL_SECONDS + 1
    monkeypatch.setattr("kandev.mcp_bridge.auth.time.monotonic", lambda: clock)
    assert callers.get("s1") is None
