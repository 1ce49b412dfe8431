"""Personal access tokens: random, shown once, stored as a SHA-256 hash; a token acts as its owner."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

from sqlalchemy import select

from kandev.db import Database
from kandev.domain.context import Principal
from kandev.domain.validation import clean_name
from kandev.models import AccessToken, User
from kandev.models.base import new_id, utcnow

PREFIX = "kdv_"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class IssuedToken:
    token: str
    name: str
    login: str


async def create_token(db: Database, *, name: str, login: str) -> IssuedToken:
    """Issue a token for `login` (the user is created if new); the token text is never stored."""
    name = clean_name(name, "name")
    login = clean_name(login, "user")
    token = PREFIX + secrets.token_urlsafe(32)
    async with db.transaction() as session:
        user = await session.scalar(select(User).where(User.login == login))
        if user is None:
            user = User(id=new_id(), login=login, name=login)
            session.add(user)
            await session.flush()
        session.add(AccessToken(id=new_id(), user_id=user.id, name=name, token_hash=hash_token(token)))
    return IssuedToken(token=token, name=name, login=login)


async def principal_for_token(db: Database, token: str | None) -> Principal | None:
    """The token's owner, or None for a missing, unknown or revoked token."""
    if not token or not token.startswith(PREFIX):
        return None
    async with db.transaction() as session:
        row = await session.scalar(
            select(AccessToken).where(AccessToken.token_hash == hash_token(token), AccessToken.revoked_at.is_(None))
        )
        if row is None:
            return None
        user = await session.get(User, row.user_id)
        if user is None:
            return None
        row.last_used_at = utcnow()
        return Principal(user_id=user.id, login=user.login, admin=user.admin)


def bearer(value: str | None) -> str | None:
    """The token of an `Authorization: Bearer …` value (the scheme is case-insensitive)."""
    if not value:
        return None
    scheme, _, token = value.strip().partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None
