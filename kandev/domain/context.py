"""Who is calling and the unit of work that publishes domain events only after commit."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.errors import PermissionDeniedError, ValidationError
from kandev.domain.events import Reactions
from kandev.platform.database import Database
from kandev.platform.event_bus import Channel, P
from kandev.platform.session_access import PersonChange, announce

if TYPE_CHECKING:
    from kandev.models import QueuedPrompt, Session, Task, WorkflowStep
    from kandev.platform.event_bus import EventBus
    from kandev.platform.job_queues import InstallProgress
    from kandev.platform.settings import Settings

LOCAL_LOGIN = "local"


SELF = "self"


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
    # The personal access token that proved this caller (its id), so revoking it reaches what it opened.
    credential: str | None = None

    @property
    def actor(self) -> str:
        return f"session:{self.session_id}" if self.session_id else f"user:{self.login}"

    @property
    def own_run_task_id(self) -> str | None:
        """The hidden task of the automation run this caller coordinates as, if any (see SessionPrincipal)."""
        return None

    @property
    def authors_automations(self) -> bool:
        """An authoring chat's agent: what it saves is made (or re-authored) in chat."""
        return False

    @property
    def coordinates(self) -> bool:
        """An automation run's agent orders, interrupts and stops other tasks of its workspace, where a task's
        agent may do so only to its own children."""
        return self.own_run_task_id is not None

    def refuse_own_run_task(self, task_id: str | None, action: str) -> None:
        """An automation run's agent coordinates other work: its own hidden task (and so its sessions) is no
        target for messages, stops, new sessions, subtasks, dependencies, questions, permissions or any
        mutation but archiving."""
        own = self.own_run_task_id
        if own is not None and task_id == own:
            raise PermissionDeniedError(f"an automation run cannot {action} its own task", reason="own_run_task")

    def task_named(self, task_id: str, field: str = "task_id") -> str:
        """A task id as the caller wrote it: `self` is the task a session principal works on."""
        if task_id != SELF:
            return task_id
        if self.task_id is None:
            raise ValidationError(f"{field} 'self' only works inside a task session", field=field)
        return self.task_id

    def workspace_or_own(self, workspace_id: str | None) -> str:
        """The workspace named, or the workspace of the caller's own task."""
        if workspace_id:
            return workspace_id
        if self.workspace_id is None:
            raise ValidationError(
                "missing required field: workspace_id (this caller has no task to default to)", field="workspace_id"
            )
        return self.workspace_id


def is_admin(principal: Principal) -> bool:
    """An admin acting in person: an agent's session never has an admin's rights, whoever owns it."""
    return principal.admin and principal.session_id is None


def ensure_admin(principal: Principal, what: str, field: str | None = None) -> None:
    if not is_admin(principal):
        raise PermissionDeniedError(f"only an admin can {what}", field=field)


@dataclass
class Event:
    channel: Channel[Any]
    payload: Mapping[str, object]


@dataclass
class UnitOfWork:
    db: AsyncSession
    events: list[Event] = field(default_factory=list)
    # Work that must only happen once the data it refers to is committed (e.g. enqueueing a turn).
    after_commit: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    # Sessions whose token checks every process must forget once committed (kandev.platform.session_access).
    access_changed: set[str] = field(default_factory=set)
    # People whose open connections every process must close or downgrade once committed (revoked tokens,
    # withdrawn admin flags, removed users): kandev.platform.session_access.PersonChange.
    people_changed: list[PersonChange] = field(default_factory=list)
    # Work that must happen last inside the transaction, once every change is made (e.g. announcing the
    # pending actions of automation runs); it may still write and emit.
    before_commit: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    # Tasks whose pending action may have changed in this transaction, read before commit by whoever watches
    # units of work for it (the automations' run indicators, kandev.domain.automations.pending).
    pending_tasks: set[str] = field(default_factory=set)

    def note_pending_action(self, task_id: str) -> None:
        """The task's pending action may have changed here (a question asked, answered or cancelled, a permission
        request, a parent question, completion pending): call where the rows it derives from change state."""
        self.pending_tasks.add(task_id)

    def emit(self, channel: Channel[P], payload: P) -> None:
        self.events.append(Event(channel, payload))

    def then(self, action: Callable[[], Awaitable[None]]) -> None:
        self.after_commit.append(action)


class JobDispatcher(Protocol):
    """How the domain hands work to workers (kandev.adapters.rq_dispatch.RqDispatcher): turns, cancels, answers,
    agent installs (and how those go)."""

    async def enqueue_turn(
        self, session_id: str, queue: str | None = None, *, description: str | None = None
    ) -> None: ...

    async def nudge_cancel(self, session_id: str) -> None: ...

    async def can_deliver(self, worker_name: str, session_id: str) -> bool: ...

    async def deliver_answer(self, session_id: str, worker_name: str) -> None: ...

    async def enqueue_automation_run(self, run_id: str) -> None: ...

    async def enqueue_webhook_deliveries(self, delivery_ids: Sequence[str]) -> None: ...

    async def enqueue_task_cleanup(self, task_id: str) -> None: ...

    async def enqueue_worktree_retention(self, automation_id: str) -> None: ...

    async def enqueue_preflight(self, automation_id: str) -> None: ...

    async def enqueue_agent_install(self, agent_id: str, update: bool) -> None: ...

    async def agent_installs(self, agent_ids: Sequence[str]) -> dict[str, InstallProgress]: ...

    async def enqueue_fix_round(self, round_id: str) -> None:
        """The job that reads a fix round's check logs and queues its prompt (kandev.domain.shipping.fix_rounds)."""
        ...

    async def enqueue_auto_merge(self, task_id: str, repository_id: str) -> None:
        """The job that merges a green, approved request of a task that asks for it."""
        ...

    async def enqueue_request_refresh(self, task_id: str, repository_id: str) -> None:
        """The job that asks the code host about a task's request now (a check event arrived)."""
        ...

    async def ask_worker(self, worker_name: str, request: dict[str, Any], timeout: float) -> dict[str, Any] | None:
        """Have the named worker answer a read (kandev.jobs.reads) on its own reads queue; None when it did not
        answer within `timeout` seconds (the request then expires unread)."""
        ...

    async def enqueue_notification(self, delivery_id: str) -> None: ...

    async def test_executor(self, profile_id: str, capabilities: frozenset[str]) -> dict[str, Any]:
        """Run the executor profile's test on a worker offering `capabilities` and wait (bounded) for its report
        ({ok, worker, findings, error})."""
        ...


class Counters(Protocol):
    """Monotonic counters /metrics reports (kandev.platform.metrics.RedisCounters)."""

    async def increment(self, name: str, **labels: str) -> None: ...


class MoveHooks(Protocol):
    """The workflow's starts and what a step move sets off (the start rule, starting a task or its agent, the
    end of the task's sessions, the engine's reaction to a state change); handed in with the ServiceContext,
    so the move's one writer and the aggregates that start agents (tasks, sessions, reviews, shipping,
    automations) import none of the workflow's modules, and those never import each other in a circle."""

    async def check_start(self, uow: UnitOfWork, task: Task, agent_profile_id: str | None) -> object: ...

    async def start_agent(
        self,
        ctx: ServiceContext,
        uow: UnitOfWork,
        task: Task,
        prompt: str,
        *,
        source: str,
        agent_profile_id: str | None = None,
        sender: dict[str, Any] | None = None,
    ) -> tuple[Session, QueuedPrompt]: ...

    async def begin_task(
        self, ctx: ServiceContext, uow: UnitOfWork, task: Task, prompt: str | None, agent_profile_id: str | None
    ) -> tuple[Session, QueuedPrompt]: ...

    async def complete_task_sessions(
        self, ctx: ServiceContext, uow: UnitOfWork, task: Task, final_step: WorkflowStep
    ) -> None: ...

    async def after_task_state_change(self, ctx: ServiceContext, uow: UnitOfWork, task: Task) -> None: ...


@dataclass
class ServiceContext:
    """Everything a domain service needs; built once per request, job or CLI command."""

    db: Database
    bus: EventBus
    principal: Principal
    settings: Settings
    jobs: JobDispatcher
    hooks: MoveHooks
    counters: Counters
    # Who reacts to the domain events a unit of work publishes, wired at composition (kandev.wiring).
    reactions: Reactions

    @asynccontextmanager
    async def unit_of_work(self) -> AsyncIterator[UnitOfWork]:
        async with self.db.transaction() as db:
            uow = UnitOfWork(db)
            for watch in self.reactions.watchers:
                watch(uow)
            yield uow
            for hook in uow.before_commit:
                await hook()
        if uow.access_changed or uow.people_changed:
            # Before anything is published or returned: from here on no process keeps an old token check, nor
            # an open connection on a revoked credential.
            await announce(self.bus.redis, uow.access_changed, uow.people_changed)
        # Published only once the commit succeeded, so subscribers never see a rolled-back change.
        if uow.events:
            await self.bus.publish_all([(event.channel, event.payload) for event in uow.events])
        for action in uow.after_commit:
            await action()

    async def publish(self, uow: UnitOfWork, event: object) -> None:
        """Tell the aggregates that react to `event` (kandev.domain.events), inside `uow`'s transaction."""
        await self.reactions.publish(self, uow, event)

    def with_principal(self, principal: Principal) -> ServiceContext:
        return replace(self, principal=principal)

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncSession]:
        async with self.db.read() as db:
            yield db
