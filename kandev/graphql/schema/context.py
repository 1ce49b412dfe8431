"""What every resolver gets: the caller's services and the DataLoaders of this request or event."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any

from strawberry.dataloader import DataLoader
from strawberry.types import Info as StrawberryInfo

from kandev.domain.records import TaskRecord
from kandev.domain.services import Services
from kandev.domain.shipping.requests import RequestRecord
from kandev.domain.tasks.activity import TaskActivity
from kandev.domain.usage.service import UsageTotals
from kandev.models import ParentQuestion, QueuedPrompt, Session, Turn, TurnUsage, WorkflowStep
from kandev.models.enums import PendingAction


class Loaders:
    """Per request (HTTP) or per event (WebSocket): caches must not outlive the data they read. Each loader is
    made on first use: most operations need none or one of them, and every request makes a Loaders."""

    def __init__(self, services: Services) -> None:
        self._lookups = services.lookups
        self._usage = services.usage

    @cached_property
    def steps_by_workflow(self) -> DataLoader[str, list[WorkflowStep]]:
        return DataLoader(self._lookups.steps_by_workflow)

    @cached_property
    def step(self) -> DataLoader[str, WorkflowStep | None]:
        return DataLoader(self._lookups.steps_by_id)

    @cached_property
    def sessions_by_task(self) -> DataLoader[str, list[Session]]:
        return DataLoader(self._lookups.sessions_by_task)

    @cached_property
    def blockers_by_task(self) -> DataLoader[str, list[TaskRecord]]:
        return DataLoader(self._lookups.blockers_by_task)

    @cached_property
    def dependents_by_task(self) -> DataLoader[str, list[TaskRecord]]:
        return DataLoader(self._lookups.dependents_by_task)

    @cached_property
    def pending_action(self) -> DataLoader[str, PendingAction]:
        return DataLoader(self._lookups.pending_actions)

    @cached_property
    def task_activity(self) -> DataLoader[str, TaskActivity]:
        return DataLoader(self._lookups.task_activity)

    @cached_property
    def ship_requests(self) -> DataLoader[str, list[RequestRecord]]:
        return DataLoader(self._lookups.ship_requests)

    @cached_property
    def pending_parent_question(self) -> DataLoader[str, ParentQuestion | None]:
        return DataLoader(self._lookups.pending_parent_questions)

    @cached_property
    def run_at(self) -> DataLoader[tuple[str, datetime], str | None]:
        return DataLoader(self._lookups.runs_at)

    @cached_property
    def running_since(self) -> DataLoader[str, datetime | None]:
        return DataLoader(self._lookups.running_since)

    @cached_property
    def last_turn_error(self) -> DataLoader[str, Turn | None]:
        return DataLoader(self._lookups.last_turn_errors)

    @cached_property
    def turns_by_session(self) -> DataLoader[str, list[Turn]]:
        return DataLoader(self._lookups.turns_by_session)

    @cached_property
    def turn_usage(self) -> DataLoader[str, TurnUsage | None]:
        return DataLoader(self._usage.of_turns)

    @cached_property
    def task_usage(self) -> DataLoader[str, UsageTotals]:
        return DataLoader(self._usage.of_tasks)

    @cached_property
    def queued_prompts_by_session(self) -> DataLoader[str, list[QueuedPrompt]]:
        return DataLoader(self._lookups.queued_prompts_by_session)


@dataclass
class Context:
    services: Services
    loaders: Loaders
    request: Any = None
    # graphql-transport-ws `connection_init` payload (set by strawberry on WebSocket connections).
    connection_params: dict[str, Any] | None = None
    extras: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def for_services(cls, services: Services, request: Any = None) -> Context:
        return cls(services=services, loaders=Loaders(services), request=request)

    def act_as(self, services: Services) -> None:
        """Switch the caller (a WebSocket authenticates in its connection_init, after the context exists)."""
        self.services = services
        self.loaders = Loaders(services)


Info = StrawberryInfo[Context, None]

RUN_DOC = (
    "The automation run whose task waits here (the task's newest run when this was raised), to reach a hidden "
    "run task through its run; null when no automation fired the task."
)


async def run_at(info: Info, task_id: str, moment: datetime) -> str | None:
    """The `runId` of what waits on a task since `moment`: batched for the whole page."""
    return await info.context.loaders.run_at.load((task_id, moment))
