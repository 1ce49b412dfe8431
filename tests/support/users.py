"""People other than `local`: a user row and the services acting as them (as their token would)."""

from __future__ import annotations

from pathlib import Path

from kandev.config import Settings
from kandev.domain.context import Principal
from kandev.domain.services import Services
from kandev.domain.users import create_user


def auth_on_settings(database_url: str, redis_url: str, tmp_path: Path) -> Settings:
    return Settings(database_url=database_url, redis_url=redis_url, data_dir=tmp_path / "data", auth="on")


async def services_as(services: Services, login: str, *, admin: bool = False) -> Services:
    """Create the user and return services whose principal is what principal_for_token gives for them."""
    user = await create_user(services.ctx.db, login, admin=admin)
    return Services(services.ctx.with_principal(Principal(user_id=user.id, login=user.login, admin=user.admin)))
