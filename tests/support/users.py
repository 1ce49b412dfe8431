"""People other than `local`: a user row and the services acting as them (as their token would)."""

from __future__ import annotations

from kandev.domain.access.users import create_user
from kandev.domain.context import Principal
from kandev.domain.services import Services


async def services_as(services: Services, login: str, *, admin: bool = False) -> Services:
    """Create the user and return services whose principal is what principal_for_token gives for them."""
    user = await create_user(services.ctx.db, login, admin=admin)
    return Services(services.ctx.with_principal(Principal(user_id=user.id, login=user.login, admin=user.admin)))
