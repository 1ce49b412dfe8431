"""Session tokens for tests that act as a session's agent over /mcp/session."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import redis.asyncio as aioredis

from kandev.domain.access.session_tokens import mint_session_token, new_token
from kandev.domain.access.tokens import hash_token
from kandev.domain.context import ServiceContext
from kandev.edge.authentication import SessionCallers
from kandev.models import SessionToken
from kandev.models.base import new_id
from kandev.platform.database import Database


async def launch_token(ctx: ServiceContext, session_id: str) -> str:
    """What a launch of the session's agent gets: a fresh token, every earlier one revoked."""
    async with ctx.unit_of_work() as uow:
        return await mint_session_token(uow, session_id)


async def side_token(db: Database, session_id: str) -> str:
    """A live token for a test acting beside the session's real, already launched agent: stored like a
    launch's, without revoking that agent's own (the session's next launch or end revokes both)."""
    token = new_token(session_id)
    async with db.transaction() as session:
        session.add(SessionToken(id=new_id(), session_id=session_id, token_hash=hash_token(token)))
    return token


@asynccontextmanager
async def kept_checks(redis: aioredis.Redis) -> AsyncIterator[SessionCallers]:
    """A serving process's cache of session token checks, its lease held (as `kandev serve` keeps one)."""
    callers = SessionCallers()
    callers.start(redis)
    try:
        assert callers.watch is not None
        async with asyncio.timeout(5):
            await callers.watch.until_trusted()
        yield callers
    finally:
        await callers.stop()
