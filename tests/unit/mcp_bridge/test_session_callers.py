"""The per-process cache of session token checks: an entry counts only while its access epoch holds."""

from __future__ import annotations

import time

from kandev.domain.context import Principal
from kandev.mcp_bridge.auth import SessionCallers
from kandev.mcp_bridge.surface import McpCaller


def caller(session_id: str, task_id: str = "t1") -> McpCaller:
    principal = Principal(user_id="u", login="agent", session_id=session_id, task_id=task_id)
    return McpCaller(principal=principal, endpoint="session", session_id=session_id, task_id=task_id)


def test_a_check_is_reused_while_the_sessions_epoch_is_unchanged():
    callers = SessionCallers()
    callers.put(caller("s1"), 0)
    assert callers.get("s1", 0) is not None
    assert callers.get("s2", 0) is None


def test_a_bumped_epoch_drops_the_check_for_good():
    callers = SessionCallers()
    callers.put(caller("s1"), 3)
    assert callers.get("s1", 4) is None
    # Gone, not just hidden: even the old epoch no longer finds it.
    assert callers.get("s1", 3) is None


def test_an_entry_expires(monkeypatch):
    callers = SessionCallers()
    callers.put(caller("s1"), 0)
    later = time.monotonic() + SessionCallers.TTL_SECONDS + 1
    monkeypatch.setattr("kandev.mcp_bridge.auth.time.monotonic", lambda: later)
    assert callers.get("s1", 0) is None


def test_the_cache_stays_bounded():
    callers = SessionCallers()
    for n in range(SessionCallers.MAX_ENTRIES + 5):
        callers.put(caller(f"s{n}"), 0)
    assert callers.get(f"s{SessionCallers.MAX_ENTRIES + 4}", 0) is not None
    assert callers.get("s0", 0) is None
