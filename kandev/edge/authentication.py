"""The one authentication door: every surface (GraphQL over HTTP and WebSocket, REST, both MCP endpoints)
asks `authenticate` who an `Authorization` value proves; each answers its own refusal in its own shape."""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Literal

from kandev.domain.access.session_grants import session_principal
from kandev.domain.access.session_tokens import claimed_session, is_session_credential
from kandev.domain.access.tokens import bearer, hash_token, principal_for_token
from kandev.domain.context import Principal
from kandev.platform.session_access import AccessWatch, PersonChange

if TYPE_CHECKING:
    import redis.asyncio as aioredis

    from kandev.wiring import AppState

# "person": a personal access token, or the local user with auth off (/graphql, REST, /mcp).
# "session": a live session's token only, auth on or off (/mcp/session).
Accept = Literal["person", "session"]


class SessionCallers:
    """This process's kept session token checks, so an agent's MCP calls cost no Redis or database read.
    Keyed by the token's hash, so an entry vouches for that token only; only live sessions are kept. They
    answer only while this process's AccessWatch (kandev.platform.session_access) holds its lease, and it forgets a
    session's entries before any change to that session's access (an ending, a new launch's token, a new
    profile revision) committed anywhere has returned."""

    # A check outlives its session's access only if an announcement could not be made at all (Redis refused
    # the announcer every try while the watchers' leases held): this bounds how long, at one database check
    # per token per period.
    TTL_SECONDS = 30.0
    MAX_ENTRIES = 10_000

    def __init__(self) -> None:
        self._entries: dict[str, tuple[float, str, Principal]] = {}
        self._by_session: dict[str, set[str]] = {}
        self.watch: AccessWatch | None = None

    def start(self, redis: aioredis.Redis, people: Callable[[list[PersonChange] | None], None] | None = None) -> None:
        """Begins keeping checks; until then (and whenever the watch lapses) every check reads the database. The
        watch also tells `people` of people's access changes (kandev.edge.open_connections)."""
        self.watch = AccessWatch(redis, self.forget, people)
        self.watch.start()

    async def stop(self) -> None:
        if self.watch is not None:
            await self.watch.stop()
            self.watch = None

    def mark(self) -> int | None:
        """Taken before a database check: `put` keeps its answer only if nothing changed meanwhile."""
        return self.watch.generation if self.watch is not None and self.watch.trusted() else None

    def get(self, token_hash: str) -> Principal | None:
        if self.watch is None or not self.watch.trusted():
            return None
        entry = self._entries.get(token_hash)
        if entry is None:
            return None
        if entry[0] < time.monotonic():
            self._drop(token_hash)
            return None
        return entry[2]

    def put(self, token_hash: str, principal: Principal, mark: int | None) -> None:
        if mark is None or self.mark() != mark or principal.session_id is None:
            return
        if len(self._entries) >= self.MAX_ENTRIES:
            self.forget(None)
        self._entries[token_hash] = (time.monotonic() + self.TTL_SECONDS, principal.session_id, principal)
        self._by_session.setdefault(principal.session_id, set()).add(token_hash)

    def forget(self, session_ids: Collection[str] | None) -> None:
        """Drops the checks of these sessions, or every check."""
        if session_ids is None:
            self._entries.clear()
            self._by_session.clear()
            return
        for session_id in session_ids:
            for token_hash in self._by_session.pop(session_id, ()):
                self._entries.pop(token_hash, None)

    def _drop(self, token_hash: str) -> None:
        entry = self._entries.pop(token_hash, None)
        if entry is not None and (hashes := self._by_session.get(entry[1])) is not None:
            hashes.discard(token_hash)
            if not hashes:
                del self._by_session[entry[1]]


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
    if sessions is None:
        return await session_principal(state.db, session_id, token, state.settings.server_key)
    if (kept := sessions.get(token_hash)) is not None:
        return kept
    mark = sessions.mark()
    principal = await session_principal(state.db, session_id, token, state.settings.server_key)
    if principal is not None:
        sessions.put(token_hash, principal, mark)
    return principal
