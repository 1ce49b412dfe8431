"""Process-wide wiring: the domain's services over this process's database, event bus and job dispatcher,
for the HTTP app (AppState) and for jobs and CLI commands (provide_services)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, cast

import redis.asyncio as aioredis

from kandev.adapters.executors.docker import DockerExecutor
from kandev.adapters.executors.local import LocalExecutor
from kandev.adapters.executors.sandbox import SandboxExecutor
from kandev.adapters.github.client import GitHubClient
from kandev.adapters.github.code_host import GitHubCodeHost
from kandev.adapters.gitlab.client import GitLabClient
from kandev.adapters.gitlab.code_host import GitLabCodeHost
from kandev.adapters.notifiers.apprise_notifier import AppriseNotifier
from kandev.adapters.rq_dispatch import RqDispatcher
from kandev.domain.access import session_tokens
from kandev.domain.access.bootstrap import bootstrap
from kandev.domain.automations import pending as pending_runs
from kandev.domain.automations import profile_checks
from kandev.domain.automations import settle as run_settling
from kandev.domain.automations.webhook_intake import WebhookIntake
from kandev.domain.context import JobDispatcher, Principal, ServiceContext
from kandev.domain.events import (
    AgentProfileDeleting,
    AgentProfileSaved,
    CheckRunCompleted,
    CodeHostsChanged,
    DefaultAgentProfileChanged,
    Reactions,
    SessionEnded,
    TaskNeedsPerson,
    TaskReachedReview,
    TurnEnded,
    TurnFailed,
    TurnStarted,
)
from kandev.domain.github.api import use_github_api
from kandev.domain.gitlab.api import use_gitlab_api
from kandev.domain.notifications import deliveries as notifications
from kandev.domain.ports import CODE_HOSTS, EXECUTORS, NOTIFIER
from kandev.domain.services import MOVE_HOOKS, Services
from kandev.domain.sessions import tool_profiles
from kandev.domain.sessions.placement import record_waiting
from kandev.domain.shipping import requests as shipped_requests
from kandev.domain.workspace import settings_events
from kandev.models.enums import ExecutorKind
from kandev.platform.database import Database
from kandev.platform.event_bus import EventBus
from kandev.platform.metrics import RedisCounters
from kandev.platform.redis_client import reconnect_once
from kandev.platform.settings import Settings

# How the domain reaches the code hosts' APIs (kandev.domain.github.api, kandev.domain.gitlab.api).
use_github_api(GitHubClient)
use_gitlab_api(GitLabClient)
# The code hosts tasks can come from and agents push to (kandev.domain.ports.CodeHost).
CODE_HOSTS.register(GitHubCodeHost())
CODE_HOSTS.register(GitLabCodeHost())
# Where agents run (kandev.domain.ports.Executor): processes here, bubblewrap sandboxes, Docker containers.
for _plain in (ExecutorKind.WORKTREE, ExecutorKind.LOCAL, ExecutorKind.SCRATCH):
    EXECUTORS.register(LocalExecutor(_plain.value))
EXECUTORS.register(SandboxExecutor())
EXECUTORS.register(DockerExecutor())
# Where outgoing notifications go out (kandev.domain.ports.Notifier).
NOTIFIER.use(AppriseNotifier())

# Which aggregate reacts to which domain event (and who watches every unit of work): decided here, so the
# publishing aggregate never imports the reacting one.
REACTIONS = (
    Reactions()
    .watch(settings_events.watch)
    .watch(pending_runs.watch)
    .on(AgentProfileSaved, profile_checks.profile_saved)
    .on(AgentProfileDeleting, profile_checks.profile_deleting)
    .on(DefaultAgentProfileChanged, profile_checks.default_changed)
    .on(CheckRunCompleted, shipped_requests.check_run_completed)
    .on(TaskNeedsPerson, notifications.task_needs_person)
    .on(TurnFailed, notifications.turn_failed)
    .on(TaskReachedReview, notifications.task_reached_review)
    .on(SessionEnded, session_tokens.session_ended)
    .on(SessionEnded, run_settling.stop_session_runs)
    .on(TurnStarted, run_settling.bind_run_turn)
    .on(TurnEnded, run_settling.settle_run)
    .on(CodeHostsChanged, tool_profiles.code_hosts_changed)
)


def service_context(
    db: Database, bus: EventBus, jobs: JobDispatcher, settings: Settings, principal: Principal
) -> ServiceContext:
    """The domain wired to this process's adapters: the job dispatcher, Redis counters, the move hooks and the
    reactions to domain events."""
    return ServiceContext(
        db=db,
        bus=bus,
        principal=principal,
        settings=settings,
        jobs=jobs,
        hooks=MOVE_HOOKS,
        counters=RedisCounters(bus),
        reactions=REACTIONS,
    )


# Jobs and CLI commands act as the system, not as a user.
SYSTEM = Principal(user_id="system", login="system", sees_everything=True)


def dispatcher(settings: Settings, db: Database, bus: EventBus) -> RqDispatcher:
    """The job dispatcher, telling the sessions' service what a turn waits for as it enqueues it."""
    assert settings.redis_url is not None
    jobs = RqDispatcher(settings.redis_url, bus, turn_timeout=settings.turn_timeout_seconds, db=db)
    ctx = service_context(db, bus, jobs, settings, SYSTEM)
    jobs.on_waiting = lambda session_id, missing: record_waiting(ctx, session_id, missing)
    return jobs


class _NoRedis:
    """The bus and dispatcher of a CLI command run without KANDEV_REDIS_URL (the embedded default while no
    server runs): commands that only touch the database work; anything that would publish or enqueue fails."""

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError("this command needs KANDEV_REDIS_URL (or a running `kandev serve`)")


@asynccontextmanager
async def provide_services(
    settings: Settings, principal: Principal, *, pooled: bool = False
) -> AsyncIterator[Services]:
    """Services for one job, worker or CLI command, on an engine of their own. Without a pool unless the
    caller's event loop outlives every use (a worker's loop): RQ runs a lone job on a new event loop, so
    pooled connections must never cross jobs. A pooled one is pinged at every checkout: a connection the
    database dropped (a restart) would otherwise fail the turn that drew it; a ping costs a fraction of the
    new connection each transaction opened without a pool."""
    db = Database(settings.resolved_database_url(), pooled=pooled, ping_after=0.0)
    if settings.redis_url is None:
        offline = cast(Any, _NoRedis())
        try:
            yield Services(service_context(db, offline, offline, settings, principal))
        finally:
            await db.dispose()
        return
    bus = EventBus(aioredis.from_url(settings.redis_url, socket_connect_timeout=5, retry=reconnect_once()))
    jobs = dispatcher(settings, db, bus)
    try:
        yield Services(service_context(db, bus, jobs, settings, principal))
    finally:
        jobs.close()
        await bus.close()
        await db.dispose()


@dataclass
class AppState:
    settings: Settings
    db: Database
    bus: EventBus
    redis: aioredis.Redis
    local_principal: Principal
    jobs: RqDispatcher
    # Webhook deliveries arriving together are recorded and enqueued together (one per process and loop).
    webhook_intake: WebhookIntake = field(init=False)

    def __post_init__(self) -> None:
        self.webhook_intake = WebhookIntake(self.services(SYSTEM).ctx)

    @classmethod
    async def open(cls, settings: Settings) -> AppState:
        if settings.redis_url is None:
            raise RuntimeError("KANDEV_REDIS_URL is not set (kandev serve starts an embedded server)")
        db = Database(settings.resolved_database_url())
        redis = aioredis.from_url(
            settings.redis_url, socket_connect_timeout=5, health_check_interval=30, retry=reconnect_once()
        )
        bus = EventBus(aioredis.from_url(settings.redis_url, socket_connect_timeout=5, retry=reconnect_once()))
        principal = await bootstrap(db, settings)
        jobs = dispatcher(settings, db, bus)
        return cls(settings=settings, db=db, bus=bus, redis=redis, local_principal=principal, jobs=jobs)

    def services(self, principal: Principal) -> Services:
        return Services(service_context(self.db, self.bus, self.jobs, self.settings, principal))

    async def close(self) -> None:
        self.jobs.close()
        await self.bus.close()
        await self.redis.aclose()
        await self.db.dispose()
