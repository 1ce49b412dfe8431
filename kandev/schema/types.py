"""Object types. Each wraps a domain record or row and resolves nested fields through loaders."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated

import strawberry
from strawberry.scalars import JSON

from kandev.domain.records import SessionRecord, TaskRecord
from kandev.domain.sessions.service import only_session
from kandev.domain.tasks.service import TaskFilter
from kandev.domain.workflow.rules import loop_warnings
from kandev.models import Workflow as WorkflowRow
from kandev.models import WorkflowStep as StepRow
from kandev.models import Workspace as WorkspaceRow
from kandev.schema.columns import column
from kandev.schema.context import Info, Loaders
from kandev.schema.enums import PendingAction, TaskEventKind, TaskOrigin, TaskState
from kandev.schema.fields import described
from kandev.schema.session_types import Session

if TYPE_CHECKING:
    from kandev.schema.workflow_engine_types import ParentQuestion


@strawberry.type(description="A workspace: owns workflows, profiles and tasks.")
class Workspace:
    row: strawberry.Private[WorkspaceRow]

    id: strawberry.ID = column("id", strawberry.ID)
    name: str = column("name", str)
    default_workflow_id: strawberry.ID | None = column("default_workflow_id", strawberry.ID | None)


@strawberry.type(description="One column of a workflow.")
class WorkflowStep:
    row: strawberry.Private[StepRow]

    id: strawberry.ID = column("id", strawberry.ID)
    name: str = column("name", str)
    position: int = column("position", int)
    is_start_step: bool = column("is_start_step", bool)
    is_final_step: bool = column("is_final_step", bool)
    auto_advance_requires_signal: bool = column(
        "auto_advance_requires_signal",
        bool,
        description="Auto-advance waits for the agent's step_complete_kandev signal.",
    )
    allow_manual_move: bool = column("allow_manual_move", bool)
    prompt: str = column("prompt", str)
    workflow_id: strawberry.ID = column("workflow_id", strawberry.ID)
    wip_limit: int | None = column(
        "wip_limit",
        int | None,
        description="At most this many tasks may be moved into the step by hand; null: no limit.",
    )

    @described(
        "Step events: {on_enter, on_turn_start, on_turn_complete, on_exit, on_children_completed}, "
        "each a list of actions {type, ...}."
    )
    def events(self) -> JSON:
        return JSON(dict(self.row.events or {}))


@strawberry.type(description="An ordered set of steps that tasks move through.")
class Workflow:
    row: strawberry.Private[WorkflowRow]

    id: strawberry.ID = column("id", strawberry.ID)
    name: str = column("name", str)
    workspace_id: strawberry.ID = column("workspace_id", strawberry.ID)

    @strawberry.field
    def description(self) -> str:
        return self.row.description or ""

    @strawberry.field
    async def steps(self, info: Info) -> list[WorkflowStep]:
        steps = await info.context.loaders.steps_by_workflow.load(self.row.id)
        return [WorkflowStep(row=s) for s in steps]

    @described("Configuration problems, e.g. steps that would move a task around forever.")
    async def warnings(self, info: Info) -> list[str]:
        return loop_warnings(await info.context.loaders.steps_by_workflow.load(self.row.id))


@strawberry.type(description="A start waiting on dependencies.")
class DeferredLaunch:
    prompt: str | None = strawberry.field(description="Null: the step's or the task's own prompt.")
    agent_profile_id: strawberry.ID | None


@strawberry.type(description="A unit of work handed to agents.")
class Task:
    record: strawberry.Private[TaskRecord]
    # Subscriptions build a fresh set per event; queries use the request's.
    loaders: strawberry.Private[Loaders | None] = None

    def _loaders(self, info: Info) -> Loaders:
        return self.loaders or info.context.loaders

    id: strawberry.ID = column("id", strawberry.ID, source="record")
    workspace_id: strawberry.ID = column("workspace_id", strawberry.ID, source="record")
    title: str = column("title", str, source="record")
    prompt: str = column("prompt", str, source="record")
    state: TaskState = column("state", TaskState, source="record", convert=TaskState)
    autopilot: bool = column(
        "autopilot",
        bool,
        source="record",
        description="Fixed at creation: the agent works on its own and never asks the operator.",
    )
    origin: TaskOrigin = column("origin", TaskOrigin, source="record", convert=TaskOrigin)
    parent_id: strawberry.ID | None = column("parent_id", strawberry.ID | None, source="record")
    external_id: str | None = column("external_id", str | None, source="record")
    workflow_id: strawberry.ID = column("workflow_id", strawberry.ID, source="record")
    workflow_step_id: strawberry.ID = column("workflow_step_id", strawberry.ID, source="record")
    agent_profile_id: strawberry.ID | None = column(
        "agent_profile_id", strawberry.ID | None, source="record", description="Null: the workspace default."
    )
    executor_profile_id: strawberry.ID | None = column(
        "executor_profile_id", strawberry.ID | None, source="record", description="Null: the workspace default."
    )

    @strawberry.field
    async def workflow_step(self, info: Info) -> WorkflowStep | None:
        step = await self._loaders(info).step.load(self.record.workflow_step_id)
        return WorkflowStep(row=step) if step else None

    @described("What the task waits on; NONE when nothing.")
    async def pending_action(self, info: Info) -> PendingAction:
        return PendingAction(await self._loaders(info).pending_action.load(self.record.id))

    @described(
        "How the newest turn failed (agent error, `/fail`, a reaped or unlaunchable turn); "
        "null once a later turn completes, or when none failed."
    )
    async def last_turn_error(self, info: Info) -> TurnError | None:
        turn = await self._loaders(info).last_turn_error.load(self.record.id)
        if turn is None or turn.ended_at is None:
            return None
        return TurnError(message=turn.error or "the turn failed", stop_reason=turn.stop_reason, ended_at=turn.ended_at)

    @described("The direct parent task, if any.")
    async def parent(self, info: Info) -> Task | None:
        if not self.record.parent_id:
            return None
        return Task(record=await info.context.services.tasks.get(self.record.parent_id))

    @described("Direct subtasks (live, not archived), newest first.")
    async def children(self, info: Info, first: int = 100) -> list[Task]:
        page = await info.context.services.tasks.list(
            self.record.workspace_id, TaskFilter(parent_id=self.record.id), first=first
        )
        return [Task(record=r) for r in page.records]

    @described("The question this autopilot child waits on its parent for, if any.")
    async def pending_parent_question(
        self, info: Info
    ) -> Annotated[ParentQuestion, strawberry.lazy("kandev.schema.workflow_engine_types")] | None:
        from kandev.schema.workflow_engine_types import ParentQuestion

        row = await self._loaders(info).pending_parent_question.load(self.record.id)
        return ParentQuestion(row=row) if row else None

    @described("The task's sessions, primary first; `only` picks one by id.")
    async def sessions(self, info: Info, only: strawberry.ID | None = None) -> list[Session]:
        if self.record.deleted_at is not None:
            return []
        rows = await self._loaders(info).sessions_by_task.load(self.record.id)
        return [Session(record=SessionRecord.of(s)) for s in only_session(rows, None if only is None else str(only))]

    block_reason: str | None = column(
        "block_reason",
        str | None,
        source="record",
        description="Why the task is BLOCKED, naming the dependency at fault; null otherwise.",
    )

    @described("The tasks this one waits on: it starts once every one of them COMPLETED.")
    async def blocked_by(self, info: Info) -> list[Task]:
        records = await self._loaders(info).blockers_by_task.load(self.record.id)
        return [Task(record=r, loaders=self.loaders) for r in records]

    @described("The tasks waiting on this one.")
    async def blocking(self, info: Info) -> list[Task]:
        records = await self._loaders(info).dependents_by_task.load(self.record.id)
        return [Task(record=r, loaders=self.loaders) for r in records]

    @described("The start recorded to fire once every dependency completed, if any.")
    def deferred_launch(self) -> DeferredLaunch | None:
        launch = self.record.deferred_launch
        if launch is None:
            return None
        profile = launch.get("agent_profile_id")
        profile_id = strawberry.ID(profile) if profile else None
        return DeferredLaunch(prompt=launch.get("prompt"), agent_profile_id=profile_id)

    created_at: datetime = column("created_at", datetime, source="record")
    updated_at: datetime = column("updated_at", datetime, source="record")
    archived_at: datetime | None = column("archived_at", datetime | None, source="record")


@strawberry.type(description="Why a task's newest turn failed.")
class TurnError:
    message: str
    stop_reason: str | None
    ended_at: datetime


@strawberry.type
class PageInfo:
    has_next_page: bool
    end_cursor: str | None


@strawberry.type
class TaskEdge:
    cursor: str
    node: Task


@strawberry.type(description="A page of tasks, newest first.")
class TaskConnection:
    edges: list[TaskEdge]
    page_info: PageInfo
    total_count: int

    @strawberry.field
    def nodes(self) -> list[Task]:
        return [edge.node for edge in self.edges]


@strawberry.type(description="A change to a task, carrying its current sidebar row.")
class TaskEvent:
    kind: TaskEventKind
    task: Task | None = strawberry.field(description="The task as it is now; null only in the SUBSCRIBED message.")
