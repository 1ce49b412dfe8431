"""Who is calling an MCP endpoint: a session token on /mcp/session, a personal access token (or the
local user when auth is off) on /mcp. The caller never names its own task or session."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp_types import INVALID_REQUEST
from redis.exceptions import RedisError
from sqlalchemy import select
from starlette.responses import Response

from kandev import session_access
from kandev.domain.access_tokens import bearer, hash_token, principal_for_token
from kandev.domain.context import Principal
from kandev.domain.profiles import profile_from_columns
from kandev.domain.session_tokens import claimed_session
from kandev.mcp_bridge.surface import Endpoint, McpCaller
from kandev.models import Session, SessionToken, Task, Workspace
from kandev.models.enums import TERMINAL_SESSION_STATES

if TYPE_CHECKING:
    from kandev.state import AppState

SESSION_LOGIN = "agent"
_REFUSALS: dict[Endpoint, str] = {
    "session": "a valid session token is required",
    "external": "a valid personal access token is required",
}


class SessionCallers:
    """This process's answers to session token checks, so an agent's every MCP request costs one Redis
    read instead of a database read. Keyed by the token's hash, so an entry vouches for that token only.
    Only live sessions are kept, each with the session's access epoch (kandev.session_access) read before
    the database check; an entry counts only while that epoch is unchanged, so an ending or a new launch's
    token committed anywhere is honoured before the call that made it even returns."""

    TTL_SECONDS = 3600.0  # far below the epoch counters' own expiry
    MAX_ENTRIES = 10_000

    def __init__(self) -> None:
        self._entries: dict[str, tuple[float, int, McpCaller]] = {}

    def get(self, token_hash: str, epoch: int) -> McpCaller | None:
        entry = self._entries.get(token_hash)
        if entry is None:
            return None
        if entry[0] < time.monotonic() or entry[1] != epoch:
            del self._entries[token_hash]
            return None
        return entry[2]

    def put(self, token_hash: str, caller: McpCaller, epoch: int) -> None:
        if len(self._entries) >= self.MAX_ENTRIES:
            self._entries.clear()
        self._entries[token_hash] = (time.monotonic() + self.TTL_SECONDS, epoch, caller)


async def resolve_caller(
    state: AppState, endpoint: Endpoint, authorization: str | None, callers: SessionCallers
) -> McpCaller | None:
    """The caller an `Authorization` header proves, or None when the endpoint must refuse it."""
    if endpoint == "session":
        return await session_caller(state, authorization, callers)
    return await external_caller(state, authorization)


async def session_caller(state: AppState, authorization: str | None, callers: SessionCallers) -> McpCaller | None:
    """A live session's agent holding its current token, acting as its workspace owner but bound to that
    session, its task and the task's workspace."""
    token = bearer(authorization)
    session_id = claimed_session(token) if token else None
    if token is None or session_id is None:
        return None
    token_hash = hash_token(token)
    try:
        epoch: int | None = await session_access.epoch(state.redis, session_id)
    except RedisError:  # no epoch, no cache: the database answers alone
        epoch = None
    cached = callers.get(token_hash, epoch) if epoch is not None else None
    if cached is not None:
        return cached
    async with state.db.read() as db:
        row = (
            await db.execute(
                select(
                    Session.state,
                    Task.id,
                    Task.deleted_at,
                    Task.workspace_id,
                    Workspace.owner_id,
                    Session.mcp_profile,
                    Session.purpose,
                    Task.autopilot,
                    Task.parent_id,
                )
                .join(SessionToken, SessionToken.session_id == Session.id)
                .join(Task, Task.id == Session.task_id)
                .join(Workspace, Workspace.id == Task.workspace_id)
                .where(
                    Session.id == session_id,
                    SessionToken.token_hash == token_hash,
                    SessionToken.revoked_at.is_(None),
                )
            )
        ).first()
    if row is None:
        return None
    session_state, task_id, deleted_at, workspace_id, owner_id, stored, purpose, autopilot, parent_id = row
    if session_state in TERMINAL_SESSION_STATES or deleted_at is not None:
        return None
    principal = Principal(
        user_id=owner_id, login=SESSION_LOGIN, session_id=session_id, task_id=task_id, workspace_id=workspace_id
    )
    profile = profile_from_columns(stored, purpose, autopilot, parent_id)
    caller = McpCaller(principal=principal, endpoint="session", session_id=session_id, task_id=task_id, profile=profile)
    if epoch is not None:
        callers.put(token_hash, caller, epoch)
    return caller


async def external_caller(state: AppState, authorization: str | None) -> McpCaller | None:
    """With auth off, the local user; with auth on, the owner of a valid personal access token."""
    if state.settings.auth == "off":
        return McpCaller(principal=state.local_principal, endpoint="external")
    principal = await principal_for_token(state.db, bearer(authorization))
    return None if principal is None else McpCaller(principal=principal, endpoint="external")


def caller_identity(caller: McpCaller) -> AuthenticatedUser:
    """The identity the SDK binds a handshake-era MCP session to: another credential gets a 404 for it.

    Built from who the caller is, never from the token text, so nothing secret is kept in memory."""
    subject = f"session:{caller.session_id}" if caller.session_id else f"user:{caller.principal.user_id}"
    return AuthenticatedUser(AccessToken(token="", client_id=subject, subject=subject, scopes=[]))


def unauthorized(endpoint: Endpoint) -> Response:
    """401 with the same body for a missing, malformed, unknown, foreign or ended credential."""
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": INVALID_REQUEST, "message": _REFUSALS[endpoint]}}
    return Response(
        json.dumps(body),
        status_code=401,
        media_type="application/json",
        headers={"WWW-Authenticate": "Bearer"},
    )
