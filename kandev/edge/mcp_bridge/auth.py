"""Who is calling an MCP endpoint, as the one authentication door (kandev.edge.authentication) answers: a session
token on /mcp/session, a personal access token (or the local user when auth is off) on /mcp. The caller never
names its own task or session."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp_types import INVALID_REQUEST
from starlette.responses import Response

from kandev.domain.access.session_grants import SessionPrincipal
from kandev.edge.authentication import SessionCallers, authenticate
from kandev.edge.mcp_bridge.surface import Endpoint, McpCaller

if TYPE_CHECKING:
    from kandev.wiring import AppState

__all__ = ["SessionCallers", "caller_identity", "resolve_caller", "unauthorized"]

_REFUSALS: dict[Endpoint, str] = {
    "session": "a valid session token is required",
    "external": "a valid personal access token is required",
}


async def resolve_caller(
    state: AppState, endpoint: Endpoint, authorization: str | None, callers: SessionCallers
) -> McpCaller | None:
    """The caller an `Authorization` header proves, or None when the endpoint must refuse it."""
    if endpoint == "session":
        principal = await authenticate(state, authorization, accept="session", sessions=callers)
        if principal is None:
            return None
        profile = principal.mcp_profile if isinstance(principal, SessionPrincipal) else None
        return McpCaller(
            principal, "session", session_id=principal.session_id, task_id=principal.task_id, profile=profile
        )
    principal = await authenticate(state, authorization)
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
