"""The one authentication door: every surface (GraphQL over HTTP and WebSocket, REST, both MCP endpoints)
asks `authenticate` who an `Authorization` value proves; each answers its own refusal in its own shape."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Literal

from redis.exceptions import RedisError

from kandev import session_access
from kandev.domain.access.session_grants import session_principal
from kandev.domain.access.session_tokens import claimed_session, is_session_credential
from kandev.domain.access.tokens import bearer, hash_token, principal_for_token
from kandev.domain.context import Principal

if TYPE_CHECKING:
    from kandev.state import AppState

# "person": a personal access token, or the local user with auth off (/graphql, REST, /mcp).
# "session": a live session's token only, auth on or off (/mcp/session).
Accept = Literal["person", "session"]


class SessionCallers:
    """This process's answers to session token checks, so an agent's every MCP request costs one Redis
    read instead of a database read. Keyed by the token's hash, so an entry vouches for that token only.
    Only live sessions are kept, each with the session's access epoch (kandev.session_access) read before
    the database check; an entry counts only while that epoch is unchanged, so an ending or a new launch's
    token committed anywhere is honoured before the call that made it even returns."""

    TTL_SECONDS = 3600.0  # far below the epoch counters' own expiry
    MAX_ENTRIES = 10_000

    def __init__(self) -> None:
        self._entries: dict[str, tuple[float, int, Principal]] = {}

    def get(self, token_hash: str, epoch: int) -> Principal | None:
        entry = self._entries.get(token_hash)
        if entry is None:
            return None
        if entry[0] < time.monotonic() or entry[1] != epoch:
            del self._entries[token_hash]
            return None
        return entry[2]

    def put(self, token_hash: str, principal: Principal, epoch: int) -> None:
        if len(self._entries) >= self.MAX_ENTRIES:
            self._entries.clear()
        self._entries[token_hash] = (time.monotonic() + self.TTL_SECONDS, epoch, principal)


async def authenticate(
    state: AppState,
    authorization: str | None,
    *,
    accept: Accept = "person",
    sessions: SessionCallers | None = None,
) -> Principal | None:
    """Who `authorization` (an `Authorization` header value) proves, or None when the route must refuse.

    A session token is an agent's credential, never a person's: refused where people are accepted, with
    auth off too; only session tokens pass where sessions are accepted, as a SessionPrincipal carrying the
    session's MCP profile. `sessions` caches session checks."""
    if accept == "session":
        return await _session(state, bearer(authorization), sessions)
    if is_session_credential(authorization):
        return None
    if state.settings.auth == "off":
        return state.local_principal
    return await principal_for_token(state.db, bearer(authorization))


async def _session(state: AppState, token: str | None, sessions: SessionCallers | None) -> Principal | None:
    session_id = claimed_session(token) if token else None
    if token is None or session_id is None:
        return None
    token_hash = hash_token(token)
    try:
        epoch: int | None = await session_access.epoch(state.redis, session_id)
    except RedisError:  # no epoch, no cache: the database answers alone
        epoch = None
    if sessions is not None and epoch is not None and (cached := sessions.get(token_hash, epoch)) is not None:
        return cached
    principal = await session_principal(state.db, session_id, token, state.settings.server_key)
    if principal is not None and sessions is not None and epoch is not None:
        sessions.put(token_hash, principal, epoch)
    return principal
