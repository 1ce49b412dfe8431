"""Domain events: facts one aggregate publishes inside its unit of work for others to react to in the same
transaction, so that no aggregate imports another's internals. Which package reacts to what is decided at
composition (kandev.wiring), not by the publisher."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from kandev.domain.context import ServiceContext, UnitOfWork
    from kandev.models import AgentProfile

E = TypeVar("E")
Reaction = Callable[["ServiceContext", "UnitOfWork", E], Awaitable[object]]
Watcher = Callable[["UnitOfWork"], None]


@dataclass(frozen=True, slots=True)
class AgentProfileSnapshot:
    """What an agent profile was before a change (the fields others read from it)."""

    name: str
    kind: str
    command: Sequence[str]
    env: dict[str, str]
    supports_mcp: bool

    @classmethod
    def of(cls, profile: AgentProfile) -> AgentProfileSnapshot:
        return cls(
            profile.name, profile.kind, tuple(profile.command or ()), dict(profile.env or {}), profile.supports_mcp
        )


@dataclass(frozen=True, slots=True)
class AgentProfileSaved:
    """An agent profile was changed (flushed, not yet committed); `before` is how it was."""

    profile: AgentProfile
    before: AgentProfileSnapshot


@dataclass(frozen=True, slots=True)
class AgentProfileDeleting:
    """An agent profile is about to be deleted in this unit of work."""

    profile: AgentProfile


@dataclass(frozen=True, slots=True)
class CheckRunCompleted:
    """A code host told Kandev (a verified webhook delivery) that a check of a commit finished."""

    provider: str
    repository: str  # owner/name (GitLab: the project path)
    head_sha: str


@dataclass(frozen=True, slots=True)
class TaskNeedsPerson:
    """An agent waits on a person: a question (ask_user_question_kandev) or a permission request. `key` names
    that wait, once."""

    task_id: str
    key: str
    what: str  # "question" or "permission"
    detail: str


@dataclass(frozen=True, slots=True)
class TurnFailed:
    """A turn ended FAILED (an agent error, /fail, a crash, a reaped lease, a failed launch)."""

    task_id: str
    turn_id: str
    error: str


@dataclass(frozen=True, slots=True)
class TaskReachedReview:
    """A task's state became REVIEW (its agent finished a turn, or someone moved it there)."""

    task_id: str
    key: str


@dataclass
class Reactions:
    """Who reacts to which event, and who watches every unit of work as it starts (e.g. the workspace's
    settings events, which watch its flushes)."""

    handlers: dict[type[Any], list[Reaction[Any]]] = field(default_factory=lambda: defaultdict(list))
    watchers: list[Watcher] = field(default_factory=list)

    def on(self, kind: type[E], reaction: Reaction[E]) -> Reactions:
        self.handlers[kind].append(reaction)
        return self

    def watch(self, watcher: Watcher) -> Reactions:
        self.watchers.append(watcher)
        return self

    async def publish(self, ctx: ServiceContext, uow: UnitOfWork, event: object) -> None:
        """Run every reaction to `event`, in subscription order, inside `uow`'s transaction."""
        for reaction in self.handlers.get(type(event), ()):
            await reaction(ctx, uow, event)
