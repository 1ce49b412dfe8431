"""First-run bootstrap, safe to run on every start and from several processes at once."""

from __future__ import annotations

from sqlalchemy import select, text

from kandev.domain.access.users import ensure_local_user
from kandev.domain.context import LOCAL_LOGIN, Principal
from kandev.domain.workspace.service import add_workspace
from kandev.models import Workspace
from kandev.platform.database import Database
from kandev.platform.settings import Settings

DEFAULT_WORKSPACE_NAME = "Default"
# Any constant works: it only serializes concurrent bootstraps on PostgreSQL.
_BOOTSTRAP_LOCK_KEY = 0x6B616E646576


async def bootstrap(database: Database, settings: Settings) -> Principal:
    """Ensure the server key, the `local` user and its default workspace; returns the local principal."""
    _ = settings.server_key
    async with database.transaction() as db:
        if not database.is_sqlite:  # SQLite's BEGIN IMMEDIATE already serializes this transaction
            await db.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _BOOTSTRAP_LOCK_KEY})
        user = await ensure_local_user(db)
        has_workspace = await db.scalar(select(Workspace.id).where(Workspace.owner_id == user.id).limit(1))
        if has_workspace is None:
            await add_workspace(db, user.id, DEFAULT_WORKSPACE_NAME)
    return local_principal(user.id, sees_everything=settings.auth == "off")


def local_principal(user_id: str, *, sees_everything: bool) -> Principal:
    return Principal(user_id=user_id, login=LOCAL_LOGIN, sees_everything=sees_everything, admin=True)
