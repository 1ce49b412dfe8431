"""Session MCP tokens: a fresh random value for each launch or resume of a session's agent, stored as a
SHA-256 hash and bound to the session. Minting revokes the session's earlier tokens; the session's end
or its task's deletion revokes them all. Nothing derived from the server key can pass for one."""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING

from sqlalchemy import select, update

from kandev.domain.access.tokens import bearer, hash_token
from kandev.models import SessionToken
from kandev.models.base import new_id, utcnow

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

    from kandev.domain.context import ServiceContext, UnitOfWork
    from kandev.domain.events import SessionEnded

PREFIX = "kst_"


async def mint_session_token(uow: UnitOfWork, session_id: str) -> str:
    """A new token for the session's next agent process; every earlier one dies once this commits."""
    await revoke_session_tokens(uow, session_id)
    token = new_token(session_id)
    uow.db.add(SessionToken(id=new_id(), session_id=session_id, token_hash=hash_token(token)))
    return token


def new_token(session_id: str) -> str:
    """A fresh token text; the session id in clear lets a check go straight to its session."""
    return f"{PREFIX}{session_id}.{secrets.token_urlsafe(32)}"


async def revoke_session_tokens(uow: UnitOfWork, session_id: str) -> None:
    """The session's tokens stop working everywhere once this commits (its agent ended or relaunches)."""
    await uow.db.execute(
        update(SessionToken)
        .where(SessionToken.session_id == session_id, SessionToken.revoked_at.is_(None))
        .values(revoked_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    announce_access_change(uow, session_id)


async def session_ended(ctx: ServiceContext, uow: UnitOfWork, event: SessionEnded) -> None:
    await revoke_session_tokens(uow, event.session_id)


async def token_is_live(db: AsyncSession, session_id: str, token: str) -> bool:
    """Whether `token` is still the session's unrevoked token (a warm agent keeps its token only then)."""
    found = await db.scalar(
        select(SessionToken.id).where(
            SessionToken.session_id == session_id,
            SessionToken.token_hash == hash_token(token),
            SessionToken.revoked_at.is_(None),
        )
    )
    return found is not None


def is_session_credential(value: object) -> bool:
    """Whether an `Authorization` value (or a bare token) is an agent's session token, never a person's."""
    if not isinstance(value, str) or not value:
        return False
    token = bearer(value) or value.strip()
    return token.startswith(PREFIX)


def claimed_session(token: str) -> str | None:
    """The session a token names, unverified: only its hash, looked up live, proves anything."""
    if not token.startswith(PREFIX) or "." not in token:
        return None
    session_id = token[len(PREFIX) :].rsplit(".", 1)[0]
    return session_id or None


def announce_access_change(uow: UnitOfWork, session_id: str) -> None:
    """Once committed, no process keeps an earlier token check of this session: it ended, its task was
    deleted, its tokens changed, or its profile changed."""
    uow.access_changed.add(session_id)
