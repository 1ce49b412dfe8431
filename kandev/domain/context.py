"""Who is calling and the unit of work that publishes domain events only after commit."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from sqlalchemy.ext.asyncio import AsyncSession

from kandev.db import Database
from kandev.events import Channel, P
from kandev.session_access import bump

if TYPE_CHECKING:
    from kandev.config import Settings
    from kandev.events import EventBus
    from kandev.jobs.dispatch import JobDispatcher

LOCAL_LOGIN = "local"


@dataclass(frozen=True)
class Principal:
    """The caller. With auth off the local user sees everything; a session principal is bound to its task
    and acts only within that task's workspace; admins decide what the machine runs."""

    user_id: str
    login: str
    sees_everything: bool = False
    session_id: str | None = None
    task_id: str | None = None
    workspace_id: str | None = None
    admin: bool = False

    @property
    def actor(self) -> str:
        return f"session:{self.session_id}" if self.session_id else f"user:{self.login}"


@dataclass
class Event:
    channel: Channel[Any]
    payload: Mapping[str, object]


@dataclass
class UnitOfWork:
    session: AsyncSession
    events: list[Event] = field(default_factory=list)
    # Work that must only happen once the data it refers to is committed (e.g. enqueueing a turn).
    after_commit: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    # Session access epochs to bump once committed (kandev.session_access).
    access_keys: set[str] = field(default_factory=set)

    def emit(self, channel: Channel[P], payload: P) -> None:
        self.events.append(Event(channel, payload))

    def then(self, action: Callable[[], Awaitable[None]]) -> None:
        self.after_commit.append(action)


@dataclass
class ServiceContext:
    """Everything a domain service needs; built once per request, job or CLI command."""

    db: Database
    bus: EventBus
    principal: Principal
    settings: Settings
    jobs: JobDispatcher

    @asynccontextmanager
    async def unit_of_work(self) -> AsyncIterator[UnitOfWork]:
        async with self.db.transaction() as session:
            uow = UnitOfWork(session)
            yield uow
        if uow.access_keys:
            # Before anything is published or returned: from here on no process keeps an old token check.
            await bump(self.bus.redis, uow.access_keys)
        # Published only once the commit succeeded, so subscribers never see a rolled-back change.
        for event in uow.events:
            await self.bus.publish(event.channel, event.payload)
        for action in uow.after_commit:
            await action()

    def with_principal(self, principal: Principal) -> ServiceContext:
        return replace(self, principal=principal)

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncSession]:
        async with self.db.read() as session:
            yield session
