"""Users and the admin flag: only admins decide what the machine runs (agent commands, env, executors)."""

from __future__ import annotations

import re

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.context import LOCAL_LOGIN
from kandev.domain.errors import ConflictError, NotFoundError, ValidationError
from kandev.models import AccessToken, Session, Task, User, Workspace
from kandev.models.base import new_id, utcnow
from kandev.models.enums import TERMINAL_SESSION_STATES
from kandev.platform.database import Database
from kandev.platform.session_access import PersonChange

LOGIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


def clean_login(value: str | None) -> str:
    """A login: letters, digits, '.', '_' and '-', at most 100 characters, starting with a letter or digit."""
    login = (value or "").strip()
    if not LOGIN.match(login):
        raise ValidationError(
            "a login is 1-100 letters, digits, '.', '_' or '-' and starts with a letter or digit", field="user"
        )
    return login


async def find_user(db: AsyncSession, login: str) -> User:
    """The user with this login; a removed one is not found."""
    user = await db.scalar(select(User).where(User.login == clean_login(login)))
    if user is None or user.removed_at is not None:
        raise NotFoundError("user", login)
    return user


async def create_user(database: Database, login: str, *, admin: bool = False) -> User:
    """A new user; an existing login is a conflict (use update_user to change it)."""
    login = clean_login(login)
    try:
        async with database.transaction() as db:
            existing = await db.scalar(select(User).where(User.login == login))
            if existing is not None:
                gone = " (removed: a login is never given to someone else)" if existing.removed_at else ""
                raise ConflictError(f"user '{login}' already exists{gone}", field="user")
            user = User(id=new_id(), login=login, name=login, admin=admin)
            db.add(user)
            await db.flush()
            return user
    except IntegrityError:  # a concurrent create of the same login
        raise ConflictError(f"user '{login}' already exists", field="user") from None


async def update_user(database: Database, login: str, *, admin: bool) -> tuple[User, list[PersonChange]]:
    """Grant or withdraw admin; the change to announce (kandev.platform.session_access) makes open connections follow at
    once, and every request is checked anew anyway."""
    async with database.transaction() as db:
        user = await find_user(db, login)
        user.admin = admin
        await db.flush()
        return user, [{"user": user.id, "admin": admin}]


async def remove_user(database: Database, login: str) -> tuple[User, list[PersonChange], list[str]]:
    """Remove a user: their tokens are revoked, and neither they nor their agents' sessions get in any more;
    their workspaces stay (for an admin). Answers the changes and the live sessions to announce."""
    if clean_login(login) == LOCAL_LOGIN:
        raise ValidationError("the built-in local user can't be removed", field="user")
    async with database.transaction() as db:
        user = await find_user(db, login)
        now = utcnow()
        user.removed_at, user.admin = now, False
        await db.execute(
            update(AccessToken)
            .where(AccessToken.user_id == user.id, AccessToken.revoked_at.is_(None))
            .values(revoked_at=now)
            .execution_options(synchronize_session=False)
        )
        sessions = await db.scalars(
            select(Session.id)
            .join(Task, Task.id == Session.task_id)
            .join(Workspace, Workspace.id == Task.workspace_id)
            .where(Workspace.owner_id == user.id, Session.state.not_in([s.value for s in TERMINAL_SESSION_STATES]))
        )
        return user, [{"user": user.id, "removed": True}], list(sessions)


async def ensure_local_user(db: AsyncSession) -> User:
    """The built-in `local` user (an admin), created on first use."""
    user = await db.scalar(select(User).where(User.login == LOCAL_LOGIN))
    if user is None:
        user = User(id=new_id(), login=LOCAL_LOGIN, name="Local user", admin=True)
        db.add(user)
        await db.flush()
    return user


async def prepare_users(database: Database) -> None:
    """What the user and token commands need on a fresh database: the `local` user."""
    try:
        async with database.transaction() as db:
            await ensure_local_user(db)
    except IntegrityError:  # created concurrently by a server's bootstrap
        pass
