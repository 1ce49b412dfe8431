"""What a session token proves: the rule ("a revoked or foreign token, a terminal session, a deleted task or a
removed owner is refused") and the principal it grants, bound to the session, its task and the task's workspace."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlalchemy import select

from kandev.domain.access.tokens import hash_token
from kandev.domain.context import Principal
from kandev.domain.sealed_secrets import session_secret_values
from kandev.domain.sessions.tool_profiles import McpProfile, Surface, profile_from_columns
from kandev.models import Session, SessionToken, Task, User, Workspace
from kandev.models.enums import TERMINAL_SESSION_STATES

if TYPE_CHECKING:
    from kandev.platform.database import Database

SESSION_LOGIN = "agent"


@dataclass(frozen=True)
class SessionPrincipal(Principal):
    """A session's agent, acting as its workspace owner; carries the session's MCP tool profile as read with the
    token check, so a tool call needs no second lookup (a profile change makes every process forget the check:
    kandev.platform.session_access)."""

    mcp_profile: McpProfile | None = field(default=None, compare=False, repr=False)
    # The secret values the session's agent was given, so its tool arguments are redacted without a read.
    secret_values: tuple[str, ...] | None = field(default=None, compare=False, repr=False)

    @property
    def own_run_task_id(self) -> str | None:
        """The session's task when the session coordinates as an automation run (its surface says so)."""
        if self.mcp_profile and self.mcp_profile.surface == Surface.AUTOMATION_COORDINATOR:
            return self.task_id
        return None

    @property
    def authors_automations(self) -> bool:
        return self.mcp_profile is not None and self.mcp_profile.surface == Surface.AUTOMATION_AUTHORING


async def session_principal(
    database: Database, session_id: str, token: str, server_key: bytes
) -> SessionPrincipal | None:
    """The principal `token` grants for `session_id`, or None when the session must refuse it."""
    async with database.read() as db:
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
                    Task.origin,
                )
                .join(SessionToken, SessionToken.session_id == Session.id)
                .join(Task, Task.id == Session.task_id)
                .join(Workspace, Workspace.id == Task.workspace_id)
                .join(User, User.id == Workspace.owner_id)
                .where(
                    Session.id == session_id,
                    SessionToken.token_hash == hash_token(token),
                    SessionToken.revoked_at.is_(None),
                    User.removed_at.is_(None),
                )
            )
        ).first()
        if row is None:
            return None
        state, task_id, deleted_at, workspace_id, owner_id, stored, purpose, autopilot, parent_id, origin = row
        if state in TERMINAL_SESSION_STATES or deleted_at is not None:
            return None
        secrets = await session_secret_values(db, server_key, session_id)
    return SessionPrincipal(
        user_id=owner_id,
        login=SESSION_LOGIN,
        session_id=session_id,
        task_id=task_id,
        workspace_id=workspace_id,
        mcp_profile=profile_from_columns(stored, purpose, autopilot, parent_id, origin),
        secret_values=tuple(secrets),
    )
