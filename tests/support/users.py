"""Who services act as: people other than `local` (a user row, as their token would), and a session's agent."""

from __future__ import annotations

from kandev.domain.access.users import create_user
from kandev.domain.context import Principal
from kandev.domain.services import Services


async def services_as(services: Services, login: str, *, admin: bool = False) -> Services:
    """Create the user and return services whose principal is what principal_for_token gives for them."""
    user = await create_user(services.ctx.db, login, admin=admin)
    return Services(services.ctx.with_principal(Principal(user_id=user.id, login=user.login, admin=user.admin)))


def as_agent(services: Services, session_id: str, task_id: str, workspace_id: str | None = None) -> Services:
    """The services an agent's MCP calls run with: its session's principal, for the same user as `services`."""
    agent = Principal(
        user_id=services.principal.user_id,
        login="agent",
        session_id=session_id,
        task_id=task_id,
        workspace_id=workspace_id,
    )
    return Services(services.ctx.with_principal(agent))
