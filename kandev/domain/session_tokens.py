"""Session MCP tokens: derived from the server key and the session id, so every launch and restart
hands the agent the same token while nothing secret is stored."""

from __future__ import annotations

import hashlib
import hmac
from typing import TYPE_CHECKING

from kandev import session_access

if TYPE_CHECKING:
    from kandev.domain.context import UnitOfWork

PREFIX = "kst_"


def session_token(server_key: bytes, session_id: str) -> str:
    digest = hmac.new(server_key, f"session:{session_id}".encode(), hashlib.sha256).hexdigest()
    return f"{PREFIX}{session_id}.{digest}"


def session_id_from_token(server_key: bytes, token: str) -> str | None:
    """The session the token was derived for, or None when it is not one of ours."""
    if not token.startswith(PREFIX) or "." not in token:
        return None
    session_id = token[len(PREFIX) :].rsplit(".", 1)[0]
    return session_id if hmac.compare_digest(session_token(server_key, session_id), token) else None


def announce_access_change(uow: UnitOfWork, session_id: str) -> None:
    """Once committed, no process keeps an earlier token check of this session: it ended, its task was
    deleted, or its profile changed."""
    uow.access_keys.add(session_access.session_key(session_id))
