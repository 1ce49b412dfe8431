"""Personal access tokens: random, shown once, stored as a SHA-256 hash; a token acts as its owner.

Tokens are issued for existing users only (`kandev user create` makes users), by the CLI for any user or
through GraphQL for the caller's own account; their text is never stored or shown again."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.access.users import clean_login, find_user
from kandev.domain.context import LOCAL_LOGIN, Principal, ServiceContext
from kandev.domain.errors import NotFoundError, PermissionDeniedError, ValidationError
from kandev.domain.validation import clean_name
from kandev.models import AccessToken, User
from kandev.models.base import new_id, utcnow
from kandev.platform.database import Database
from kandev.platform.session_access import PersonChange

PREFIX = "kdv_"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class TokenInfo:
    """What may be shown about a token: never its text or hash."""

    id: str
    name: str
    login: str
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None


@dataclass(frozen=True)
class IssuedToken:
    token: str
    name: str
    login: str
    info: TokenInfo


def token_owner(login: str | None, *, auth: str) -> str:
    """The login a CLI-issued token is for: required with auth on, `local` by default with auth off."""
    if login is None or not login.strip():
        if auth == "on":
            raise ValidationError("with KANDEV_AUTH=on, name the token's user (--user LOGIN)", field="user")
        return LOCAL_LOGIN
    return clean_login(login)


def _info(row: AccessToken, login: str) -> TokenInfo:
    return TokenInfo(row.id, row.name, login, row.created_at, row.last_used_at, row.revoked_at)


async def _issue(db: AsyncSession, user: User, name: str) -> IssuedToken:
    token = PREFIX + secrets.token_urlsafe(32)
    row = AccessToken(id=new_id(), user_id=user.id, name=name, token_hash=hash_token(token), created_at=utcnow())
    db.add(row)
    await db.flush()
    return IssuedToken(token=token, name=name, login=user.login, info=_info(row, user.login))


async def create_token(database: Database, *, name: str, login: str) -> IssuedToken:
    """Issue a token for the existing user `login`; an unknown login is not found (nobody is created)."""
    name = clean_name(name, "name")
    async with database.transaction() as db:
        return await _issue(db, await find_user(db, login), name)


async def list_tokens(database: Database, login: str | None = None) -> list[TokenInfo]:
    """Every token (or one user's), oldest first."""
    async with database.read() as db:
        query = select(AccessToken, User.login).join(User, User.id == AccessToken.user_id)
        if login is not None:
            query = query.where(AccessToken.user_id == (await find_user(db, login)).id)
        rows = await db.execute(query.order_by(AccessToken.created_at, AccessToken.id))
        return [_info(token, user_login) for token, user_login in rows.tuples()]


async def revoke_token(database: Database, token_id: str) -> TokenInfo:
    """Revoke a token by id; revoking twice keeps the first revocation time. What the token holds open is closed
    by announcing `revoked(token_id)` (kandev.platform.session_access)."""
    async with database.transaction() as db:
        row = await db.get(AccessToken, token_id)
        if row is None:
            raise NotFoundError("access token", token_id)
        row.revoked_at = row.revoked_at or utcnow()
        user = await db.get(User, row.user_id)
        return _info(row, user.login if user else "")


def revoked(token_id: str) -> PersonChange:
    return {"token": token_id}


async def live_credentials(database: Database, token_ids: Collection[str]) -> dict[str, bool]:
    """The tokens among these that still prove someone (unrevoked, their user not removed), with that user's
    admin flag now."""
    if not token_ids:
        return {}
    async with database.read() as db:
        rows = await db.execute(
            select(AccessToken.id, User.admin)
            .join(User, User.id == AccessToken.user_id)
            .where(AccessToken.id.in_(list(token_ids)), AccessToken.revoked_at.is_(None), User.removed_at.is_(None))
        )
        return {token_id: bool(admin) for token_id, admin in rows.tuples()}


async def principal_for_token(database: Database, token: str | None) -> Principal | None:
    """The token's owner, or None for a missing, unknown or revoked token or a removed user."""
    if not token or not token.startswith(PREFIX):
        return None
    async with database.transaction() as db:
        row = await db.scalar(
            select(AccessToken).where(AccessToken.token_hash == hash_token(token), AccessToken.revoked_at.is_(None))
        )
        if row is None:
            return None
        user = await db.get(User, row.user_id)
        if user is None or user.removed_at is not None:
            return None
        row.last_used_at = utcnow()
        return Principal(user_id=user.id, login=user.login, admin=user.admin, credential=row.id)


def bearer(value: str | None) -> str | None:
    """The token of an `Authorization: Bearer …` value (the scheme is case-insensitive)."""
    if not value:
        return None
    scheme, _, token = value.strip().partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


class AccessTokenService:
    """The caller's own tokens, for GraphQL: another user's token id is not found."""

    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    def _person(self) -> Principal:
        principal = self.ctx.principal
        # An agent's session must never mint a credential that outlives it.
        if principal.session_id is not None or not principal.user_id:
            raise PermissionDeniedError("access tokens are managed by people, not agent sessions")
        return principal

    async def list(self) -> list[TokenInfo]:
        principal = self._person()
        async with self.ctx.read() as db:
            rows = await db.scalars(
                select(AccessToken)
                .where(AccessToken.user_id == principal.user_id)
                .order_by(AccessToken.created_at, AccessToken.id)
            )
            return [_info(row, principal.login) for row in rows]

    async def create(self, name: str) -> IssuedToken:
        principal = self._person()
        name = clean_name(name, "name")
        async with self.ctx.unit_of_work() as uow:
            user = await uow.db.get(User, principal.user_id)
            if user is None:
                raise NotFoundError("user", principal.login)
            return await _issue(uow.db, user, name)

    async def revoke(self, token_id: str) -> TokenInfo:
        principal = self._person()
        async with self.ctx.unit_of_work() as uow:
            row = await uow.db.get(AccessToken, token_id)
            if row is None or row.user_id != principal.user_id:
                raise NotFoundError("access token", token_id)
            row.revoked_at = row.revoked_at or utcnow()
            uow.people_changed.append(revoked(row.id))
            return _info(row, principal.login)
