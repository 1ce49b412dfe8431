"""Who is calling an MCP endpoint: a session token on /mcp/session, a personal access token (or the
local user when auth is off) on /mcp. The caller never names its own task or session."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp_types import INVALID_REQUEST
from sqlalchemy import select
from starlette.responses import Response

from kandev.domain.access_tokens import bearer, principal_for_token
from kandev.domain.context import Principal
from kandev.domain.profiles import profile_from_columns
from kandev.domain.session_tokens import session_id_from_token
from kandev.mcp_bridge.surface import Endpoint, McpCaller
from kandev.models import Session, Task, Workspace
from kandev.models.enums import TERMINAL_SESSION_STATES

if TYPE_CHECKING:
    from kandev.state import AppState

SESSION_LOGIN = "agent"
_REFUSALS: dict[Endpoint, str] = {
    "session": "a valid session token is required",
    "external": "a valid personal access token is required",
}


async def resolve_caller(state: AppState, endpoint: Endpoint, authorization: str | None) -> McpCaller | None:
    """The caller an `Authorization` header proves, or None when the endpoint must refuse it."""
    if endpoint == "session":
        return await session_caller(state, authorization)
    return await external_caller(state, authorization)


async def session_caller(state: AppState, authorization: str | None) -> McpCaller | None:
    """A live session's agent, acting as its workspace owner but bound to that session and task."""
    token = bearer(authorization)
    session_id = session_id_from_token(state.settings.server_key, token) if token else None
    if session_id is None:
        return None
    async with state.db.read() as db:
        row = (
            await db.execute(
                select(
                    Session.state,
                    Task.id,
                    Task.deleted_at,
                    Workspace.owner_id,
                    Session.mcp_profile,
                    Session.purpose,
                    Task.autopilot,
                    Task.parent_id,
                )
                .join(Task, Task.id == Session.task_id)
                .join(Workspace, Workspace.id == Task.workspace_id)
                .where(Session.id == session_id)
            )
        ).first()
    if row is None:
        return None
    session_state, task_id, deleted_at, owner_id, stored, purpose, autopilot, parent_id = row
    if session_state in TERMINAL_SESSION_STATES or deleted_at is not None:
        return None
    principal = Principal(user_id=owner_id, login=SESSION_LOGIN, session_id=session_id, task_id=task_id)
    profile = profile_from_columns(stored, purpose, autopilot, parent_id)
    return McpCaller(principal=principal, endpoint="session", session_id=session_id, task_id=task_id, profile=profile)


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
