"""A worker's warm agents: a session's agent stays alive between turns on the worker that launched it, and
is closed when idle too long, beyond the worker's capacity (least recently used first), or when its
session ended or ran on another worker."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlalchemy import func, select

from kandev.domain.access.tokens import hash_token
from kandev.domain.session_rows import is_terminal
from kandev.models import Session, SessionToken, Turn
from kandev.platform.job_queues import agent_key
from kandev.runtime.base import AgentUpdate, PermissionHandler, PermissionRequest, UpdateHandler

if TYPE_CHECKING:
    from kandev.domain.context import ServiceContext
    from kandev.domain.sessions.turn_setup import TurnSetup
    from kandev.runtime.acp_adapter import AcpRuntime

log = logging.getLogger("kandev.agents")

# How often a worker looks over its warm agents, and how long its routing advertisement outlives it.
SWEEP_SECONDS = 1.0
ADVERTISE_TTL_SECONDS = 5


class AgentBinding:
    """Where a live agent's updates and permission requests go: the turn currently driving it."""

    def __init__(self) -> None:
        self.on_update: UpdateHandler | None = None
        self.on_permission: PermissionHandler | None = None

    async def update(self, update: AgentUpdate) -> None:
        if self.on_update is not None:
            await self.on_update(update)

    async def permission(self, request: PermissionRequest) -> str | None:
        return await self.on_permission(request) if self.on_permission is not None else None


@dataclass
class WarmAgent:
    """A live agent with what it was launched with."""

    session_id: str
    runtime: AcpRuntime
    setup: TurnSetup
    fingerprint: Hashable
    binding: AgentBinding
    last_used: float = field(default_factory=time.monotonic)


class AgentPool:
    """One worker's idle agents, by session id, least recently used first."""

    def __init__(self, ctx: ServiceContext, worker_name: str) -> None:
        self.ctx = ctx
        self.worker_name = worker_name
        self.idle_seconds = ctx.settings.agent_idle_seconds
        self.capacity = ctx.settings.warm_agents
        self._idle: OrderedDict[str, WarmAgent] = OrderedDict()
        # Sessions whose agent a turn of this worker drives right now (taken out of the pool).
        self._in_use: set[str] = set()
        self._sweeper: asyncio.Task[None] | None = None
        # Set once the worker is stopping: it takes no new job, so no turn may be routed to it any more.
        self._retired = False

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._idle

    def sessions(self) -> list[str]:
        return list(self._idle)

    async def start(self) -> None:
        self._sweeper = asyncio.create_task(self._sweep_forever(), name="warm-agent-sweeper")

    def take(self, session_id: str) -> WarmAgent | None:
        """The session's warm agent, now owned by the caller (who gives it back or closes it)."""
        agent = self._idle.pop(session_id, None)
        self._in_use.add(session_id)
        return agent

    async def give_back(self, agent: WarmAgent | None, session_id: str) -> None:
        """The turn is done with the session's agent: keep it warm (None: it was closed)."""
        self._in_use.discard(session_id)
        if agent is None or self.capacity <= 0:
            if agent is not None:
                await self._close(agent, "no agent may stay warm on this worker")
            await self._withdraw(session_id)
            return
        agent.last_used = time.monotonic()
        self._idle[session_id] = agent
        if self._retired:
            await self._withdraw(session_id)
        self._idle.move_to_end(session_id)
        while len(self._idle) > self.capacity:
            oldest_id, oldest = self._idle.popitem(last=False)
            await self._close(oldest, f"more than {self.capacity} warm agents on this worker")
            await self._withdraw(oldest_id)
        await self.advertise()

    async def discard(self, session_id: str, reason: str) -> None:
        agent = self._idle.pop(session_id, None)
        if agent is not None:
            await self._close(agent, reason)
            await self._withdraw(session_id)

    async def retire(self) -> None:
        """The worker is stopping: withdraw every advertisement now, not when its running job has ended (a
        follow-up routed here meanwhile would wait in this worker's queue until recovery found it)."""
        self._retired = True
        for session_id in [*self._idle, *self._in_use]:
            await self._withdraw(session_id)

    async def stop(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(BaseException):
                await self._sweeper
        while self._idle:
            session_id, agent = self._idle.popitem()
            await self._close(agent, "the worker is stopping")
            await self._withdraw(session_id)

    async def sweep(self) -> None:
        """Close agents idle too long, and those whose session ended, lost its token or ran elsewhere."""
        now = time.monotonic()
        for session_id, agent in list(self._idle.items()):
            if now - agent.last_used >= self.idle_seconds:
                await self.discard(session_id, f"idle for {self.idle_seconds:g}s")
        if self._idle:
            stale = await self._stale(dict(self._idle))
            for session_id, reason in stale.items():
                await self.discard(session_id, reason)
        await self.advertise()

    async def _stale(self, agents: dict[str, WarmAgent]) -> dict[str, str]:
        stale: dict[str, str] = {}
        async with self.ctx.read() as db:
            sessions = {s.id: s for s in await db.scalars(select(Session).where(Session.id.in_(list(agents))))}
            newest = (
                select(Turn.session_id, func.max(Turn.seq).label("seq"))
                .where(Turn.session_id.in_(list(agents)))
                .group_by(Turn.session_id)
                .subquery()
            )
            ran_on = dict(
                (
                    await db.execute(
                        select(Turn.session_id, Turn.worker_name).join(
                            newest, (Turn.session_id == newest.c.session_id) & (Turn.seq == newest.c.seq)
                        )
                    )
                ).all()
            )
            live_tokens = set(
                await db.scalars(
                    select(SessionToken.token_hash).where(
                        SessionToken.session_id.in_(list(agents)), SessionToken.revoked_at.is_(None)
                    )
                )
            )
        for session_id, agent in agents.items():
            session = sessions.get(session_id)
            if session is None or is_terminal(session):
                stale[session_id] = "its session ended"
            elif ran_on.get(session_id) not in (None, self.worker_name):
                stale[session_id] = "its session ran on another worker"
            elif agent.setup.mcp_token and hash_token(agent.setup.mcp_token) not in live_tokens:
                stale[session_id] = "its session token was revoked"
        return stale

    async def advertise(self) -> None:
        """Tell dispatchers which sessions are warm here (or in use by a turn here); the keys expire if this
        worker dies. Called by the sweep and as a turn takes its agent, before anyone can answer it."""
        sessions = [*self._idle, *self._in_use]
        if not sessions or self._retired:
            return
        try:
            async with self.ctx.bus.redis.pipeline(transaction=False) as pipe:
                for session_id in sessions:
                    pipe.set(agent_key(session_id), self.worker_name, ex=ADVERTISE_TTL_SECONDS)
                await pipe.execute()
        except Exception:
            log.warning("worker %s: could not advertise its warm agents", self.worker_name, exc_info=True)

    async def _withdraw(self, session_id: str) -> None:
        """Forget the session's advertisement, unless another worker's agent has taken it over."""
        with contextlib.suppress(Exception):
            redis = self.ctx.bus.redis
            if (await redis.get(agent_key(session_id))) in (self.worker_name, self.worker_name.encode()):
                await redis.delete(agent_key(session_id))

    async def _sweep_forever(self) -> None:
        while True:
            await asyncio.sleep(SWEEP_SECONDS)
            try:
                await self.sweep()
            except Exception:
                log.exception("worker %s: the warm-agent sweep failed", self.worker_name)

    async def _close(self, agent: WarmAgent, reason: str) -> None:
        log.info("worker %s: closing the agent of session %s: %s", self.worker_name, agent.session_id, reason)
        try:
            await agent.runtime.close()
        except Exception:
            log.exception("closing the agent of session %s failed", agent.session_id)
