"""What every resolver gets: the caller's services and the DataLoaders of this request or event."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from strawberry.dataloader import DataLoader
from strawberry.types import Info as StrawberryInfo

from kandev.domain.records import TaskRecord
from kandev.domain.services import Services
from kandev.domain.tasks.activity import TaskActivity
from kandev.models import ParentQuestion, QueuedPrompt, Session, Turn, WorkflowStep
from kandev.models.enums import PendingAction


class Loaders:
    """Per request (HTTP) or per event (WebSocket): caches must not outlive the data they read."""

    def __init__(self, services: Services) -> None:
        lookups = services.lookups
        self.steps_by_workflow: DataLoader[str, list[WorkflowStep]] = DataLoader(lookups.steps_by_workflow)
        self.step: DataLoader[str, WorkflowStep | None] = DataLoader(lookups.steps_by_id)
        self.sessions_by_task: DataLoader[str, list[Session]] = DataLoader(lookups.sessions_by_task)
        self.blockers_by_task: DataLoader[str, list[TaskRecord]] = DataLoader(lookups.blockers_by_task)
        self.dependents_by_task: DataLoader[str, list[TaskRecord]] = DataLoader(lookups.dependents_by_task)
        self.pending_action: DataLoader[str, PendingAction] = DataLoader(lookups.pending_actions)
        self.task_activity: DataLoader[str, TaskActivity] = DataLoader(lookups.task_activity)
        self.pending_parent_question: DataLoader[str, ParentQuestion | None] = DataLoader(
            lookups.pending_parent_questions
        )
        self.run_at: DataLoader[tuple[str, datetime], str | None] = DataLoader(lookups.runs_at)
        self.running_since: DataLoader[str, datetime | None] = DataLoader(lookups.running_since)
        self.last_turn_error: DataLoader[str, Turn | None] = DataLoader(lookups.last_turn_errors)
        self.turns_by_session: DataLoader[str, list[Turn]] = DataLoader(lookups.turns_by_session)
        self.queued_prompts_by_session: DataLoader[str, list[QueuedPrompt]] = DataLoader(
            lookups.queued_prompts_by_session
        )


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
