"""The per-process cache of session token checks: an entry vouches for one token, and only while its
session's access epoch holds."""

from __future__ import annotations

import time

from kandev.authentication import SessionCallers
from kandev.domain.context import Principal


def caller(session_id: str, task_id: str = "t1") -> Principal:
    return Principal(user_id="u", login="agent", session_id=session_id, task_id=task_id)


def test_a_check_is_reused_for_the_same_token_while_the_sessions_epoch_is_unchanged():
    callers = SessionCallers()
    callers.put("hash-a", caller("s1"), 0)
    assert callers.get("hash-a", 0) is not None
    assert callers.get("hash-a", 0).session_id == "s1"


def test_a_check_vouches_for_its_own_token_only():
    callers = SessionCallers()
    callers.put("hash-a", caller("s1"), 0)
    # Another token of the same session (an older launch's, say) was never checked here.
    assert callers.get("hash-b", 0) is None


def test_a_bumped_epoch_drops_the_check_for_good():
    callers = SessionCallers()
    callers.put("hash-a", caller("s1"), 3)
    assert callers.get("hash-a", 4) is None
    # Gone, not just hidden: even the old epoch no longer finds it.
    assert callers.get("hash-a", 3) is None


def test_an_entry_expires(monkeypatch):
    callers = SessionCallers()
    callers.put("hash-a", caller("s1"), 0)
    later = time.monotonic() + SessionCallers.TTL_SECONDS + 1
    monkeypatch.setattr("kandev.authentication.time.monotonic", lambda: later)
    assert callers.get("hash-a", 0) is None


def test_the_cache_stays_bounded():
    callers = SessionCallers()
    for n in range(SessionCallers.MAX_ENTRIES + 5):
        callers.put(f"hash-{n}", caller(f"s{n}"), 0)
    assert callers.get(f"hash-{SessionCallers.MAX_ENTRIES + 4}", 0) is not None
    assert callers.get("hash-0", 0) is None
