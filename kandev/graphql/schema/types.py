"""Object types. Each copies its plain fields from a domain record or row once (`of`), so they resolve as
data rather than through a resolver call each; nested fields resolve through loaders."""

from __future__ import annotations

from collections.abc import Awaitable
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any

import strawberry
from strawberry.scalars import JSON

from kandev.domain.changes.stats import change_stats_of
from kandev.domain.records import SessionRecord, TaskRecord
from kandev.domain.reviews.records import ThreadRecord
from kandev.domain.sessions.service import only_session
from kandev.domain.shipping.requests import MOVE_SETTING
from kandev.domain.tasks.activity import TaskActivity as ActivityRecord
from kandev.domain.tasks.service import TaskFilter
from kandev.domain.workflow.rules import loop_warnings
from kandev.domain.workflow.transitions import auto_start_action
from kandev.domain.workspace.repositories import TaskCheckout as TaskCheckoutRecord
from kandev.domain.workspace.task_choices import last_choice
from kandev.graphql.schema.change_types import ChangeScope, ChangeStats, TaskChanges
from kandev.graphql.schema.context import Info, Loaders
from kandev.graphql.schema.enums import PendingAction, TaskEventKind, TaskOrigin, TaskState, WorkspaceEventKind
from kandev.graphql.schema.executor_types import Placement
from kandev.graphql.schema.fields import described
from kandev.graphql.schema.plain_fields import held_in
from kandev.graphql.schema.review_thread_types import ChangedFile, ReviewThread, ReviewThreadState
from kandev.graphql.schema.review_types import TaskPullRequestView
from kandev.graphql.schema.selection import selects
from kandev.graphql.schema.session_types import Session
from kandev.graphql.schema.ship_types import CheckFixRound, FixFailingChecks
from kandev.graphql.schema.usage_types import Budget, UsageTotals
from kandev.graphql.schema.workflow_engine_types import ParentQuestion
from kandev.models import Workflow as WorkflowRow
from kandev.models import WorkflowStep as StepRow
from kandev.models import Workspace as WorkspaceRow

if TYPE_CHECKING:
    from kandev.graphql.schema.workflow_engine_types import ParentQuestion


def _id(value: str | None) -> strawberry.ID | None:
    return None if value is None else strawberry.ID(value)


@strawberry.type(description="A workspace: owns workflows, profiles and tasks.")
class Workspace:
    row: strawberry.Private[WorkspaceRow]

    id: strawberry.ID
    name: str
    default_workflow_id: strawberry.ID | None
    default_agent_profile_id: strawberry.ID | None = strawberry.field(
        description="What tasks and automations naming no agent profile run on."
    )
    move_merged_tasks_to_final_step: bool = strawberry.field(
        default=True,
        description="Once every pull request of a task is merged, the task moves to its workflow's final step (and "
        "its worktrees are removed, branches kept). On by default.",
    )

    @classmethod
    def of(cls, row: WorkspaceRow) -> Workspace:
        return cls(
            row=row,
            id=strawberry.ID(row.id),
            name=row.name,
            default_workflow_id=_id(row.default_workflow_id),
            default_agent_profile_id=_id(row.default_agent_profile_id),
            move_merged_tasks_to_final_step=bool((row.settings or {}).get(MOVE_SETTING, True)),
        )

    @described(
        "Where the caller last had a task of this workspace work (the repositories with their base branches, the "
        "executor and agent profiles as chosen, null meaning the workspace default): the new-task form's starting "
        "point. Remembered by every createTask the caller makes as a person; null before the first."
    )
    async def last_task_choice(self, info: Info) -> TaskChoice | None:
        found = await last_choice(info.context.services.ctx, self.row.id)
        if found is None:
            return None
        return TaskChoice(
            repositories=[
                ChosenRepository(repository_id=strawberry.ID(r.repository_id), base_branch=r.base_branch)
                for r in found.repositories
            ],
            executor_profile_id=_id(found.executor_profile_id),
            agent_profile_id=_id(found.agent_profile_id),
        )


@strawberry.type(description="A repository as chosen for a task, with the base branch chosen for it.")
class ChosenRepository:
    repository_id: strawberry.ID
    base_branch: str | None = strawberry.field(description="Null: the repository's default branch.")


@strawberry.type(description="Where a person last had a task work (Workspace.lastTaskChoice).")
class TaskChoice:
    repositories: list[ChosenRepository]
    executor_profile_id: strawberry.ID | None = strawberry.field(description="Null: the workspace default.")
    agent_profile_id: strawberry.ID | None = strawberry.field(description="Null: the workspace default.")


@strawberry.type(description="One column of a workflow.")
class WorkflowStep:
    row: strawberry.Private[StepRow]

    id: strawberry.ID
    name: str
    position: int
    is_start_step: bool
    is_final_step: bool
    auto_advance_requires_signal: bool = strawberry.field(
        description="Auto-advance waits for the agent's step_complete_kandev signal."
    )
    allow_manual_move: bool
    prompt: str
    workflow_id: strawberry.ID
    wip_limit: int | None = strawberry.field(
        description="At most this many tasks may be moved into the step by hand; null: no limit."
    )
    events: JSON = strawberry.field(
        description="Step events: {on_enter, on_turn_start, on_turn_complete, on_exit, on_children_completed}, "
        "each a list of actions {type, ...}."
    )
    auto_starts_agent: bool = strawberry.field(
        description="Entering the step starts the agent (an on_enter auto_start_agent action)."
    )

    @classmethod
    def of(cls, row: StepRow) -> WorkflowStep:
        return cls(
            row=row,
            id=strawberry.ID(row.id),
            name=row.name,
            position=row.position,
            is_start_step=row.is_start_step,
            is_final_step=row.is_final_step,
            auto_advance_requires_signal=row.auto_advance_requires_signal,
            allow_manual_move=row.allow_manual_move,
            prompt=row.prompt,
            workflow_id=strawberry.ID(row.workflow_id),
            wip_limit=row.wip_limit,
            events=JSON(dict(row.events or {})),
            auto_starts_agent=auto_start_action(row) is not None,
        )


@strawberry.type(description="An ordered set of steps that tasks move through.")
class Workflow:
    row: strawberry.Private[WorkflowRow]

    id: strawberry.ID
    name: str
    workspace_id: strawberry.ID
    description: str

    @classmethod
    def of(cls, row: WorkflowRow) -> Workflow:
        return cls(
            row=row,
            id=strawberry.ID(row.id),
            name=row.name,
            workspace_id=strawberry.ID(row.workspace_id),
            description=row.description or "",
        )

    @strawberry.field
    async def steps(self, info: Info) -> list[WorkflowStep]:
        steps = await info.context.loaders.steps_by_workflow.load(self.row.id)
        return [WorkflowStep.of(s) for s in steps]

    @described("Configuration problems, e.g. steps that would move a task around forever.")
    async def warnings(self, info: Info) -> list[str]:
        return loop_warnings(await info.context.loaders.steps_by_workflow.load(self.row.id))


@strawberry.type(description="A start waiting on dependencies.")
class DeferredLaunch:
    prompt: str | None = strawberry.field(description="Null: the step's or the task's own prompt.")
    agent_profile_id: strawberry.ID | None


@strawberry.type(description="A task's agent at a glance: who works on it, when and what it last said.")
class TaskActivity:
    agent_profile_id: strawberry.ID | None = strawberry.field(
        description="The agent profile of the task's newest session; null before it first ran."
    )
    agent_name: str | None = strawberry.field(description="That profile's name; null when it was deleted.")
    last_activity_at: datetime | None = strawberry.field(
        description="When a session of the task last changed or produced a message; null before it first ran."
    )
    preview: str | None = strawberry.field(
        description="The newest agent message as one line of plain text (markup dropped, at most 140 characters)."
    )
    has_run: bool = strawberry.field(description="The task has a session: an agent worked on it before.")
    last_turn_failed: bool = strawberry.field(
        description="The newest ended turn failed (as lastTurnError, without reading the error)."
    )
    needs_answer: bool = strawberry.field(description="A question or a permission request waits for a person.")

    @classmethod
    def of(cls, record: ActivityRecord) -> TaskActivity:
        return cls(
            agent_profile_id=_id(record.agent_profile_id),
            agent_name=record.agent_name,
            last_activity_at=record.last_activity_at,
            preview=record.preview,
            has_run=record.has_run,
            last_turn_failed=record.last_turn_failed,
            needs_answer=record.needs_answer,
        )


@strawberry.type(description="A unit of work handed to agents.")
class Task:
    record: strawberry.Private[TaskRecord]
    # Subscriptions build a fresh set per event; queries use the request's.
    loaders: strawberry.Private[Loaders | None] = None
    # Known when the page that lists the task read it for the whole page.
    pending: strawberry.Private[PendingAction | None] = None
    held_activity: strawberry.Private[ActivityRecord | None] = None

    def _loaders(self, info: Info) -> Loaders:
        return self.loaders or info.context.loaders

    id: strawberry.ID
    workspace_id: strawberry.ID
    title: str
    prompt: str
    state: TaskState
    autopilot: bool = strawberry.field(
        description="Fixed at creation: the agent works on its own and never asks the operator."
    )
    origin: TaskOrigin
    parent_id: strawberry.ID | None
    external_id: str | None
    workflow_id: strawberry.ID
    workflow_step_id: strawberry.ID
    agent_profile_id: strawberry.ID | None = strawberry.field(description="Null: the workspace default.")
    executor_profile_id: strawberry.ID | None = strawberry.field(description="Null: the workspace default.")
    block_reason: str | None = strawberry.field(
        description="Why the task is BLOCKED, naming the dependency at fault; null otherwise."
    )
    created_at: datetime
    updated_at: datetime
    archived_at: datetime | None

    @classmethod
    def of(
        cls,
        record: TaskRecord,
        *,
        loaders: Loaders | None = None,
        pending: PendingAction | None = None,
        activity: ActivityRecord | None = None,
    ) -> Task:
        """The task's plain fields copied once, so they resolve as data (no resolver call per field)."""
        return cls(
            record=record,
            loaders=loaders,
            pending=pending,
            held_activity=activity,
            id=strawberry.ID(record.id),
            workspace_id=strawberry.ID(record.workspace_id),
            title=record.title,
            prompt=record.prompt,
            state=TaskState(record.state),
            autopilot=record.autopilot,
            origin=TaskOrigin(record.origin),
            parent_id=_id(record.parent_id),
            external_id=record.external_id,
            workflow_id=strawberry.ID(record.workflow_id),
            workflow_step_id=strawberry.ID(record.workflow_step_id),
            agent_profile_id=_id(record.agent_profile_id),
            executor_profile_id=_id(record.executor_profile_id),
            block_reason=record.block_reason,
            created_at=record.created_at,
            updated_at=record.updated_at,
            archived_at=record.archived_at,
            auto_merge=record.auto_merge,
        )

    @strawberry.field
    async def workflow_step(self, info: Info) -> WorkflowStep | None:
        step = await self._loaders(info).step.load(self.record.workflow_step_id)
        return WorkflowStep.of(step) if step else None

    @described("What the task waits on; NONE when nothing.", graphql_type=PendingAction)
    @held_in("pending")
    def pending_action(self, info: Info) -> PendingAction | Awaitable[PendingAction]:
        # Read with the page when the page listed the task: no coroutine per task.
        if self.pending is not None:
            return self.pending
        return self._loaders(info).pending_action.load(self.record.id)

    @described("What the task's turns used and cost so far, over all its sessions (board cards).")
    async def usage(self, info: Info) -> UsageTotals:
        return UsageTotals.of(await self._loaders(info).task_usage.load(self.record.id))

    @described("The task's budget and what was spent against it; null without one.")
    async def budget(self, info: Info) -> Budget | None:
        return Budget.of(await info.context.services.usage.task_budget(self.record.id))

    @described(
        "Where the task's agent runs (its newest session's executor, worker and box) and what a queued turn of a "
        "live session waits for; null before any session."
    )
    async def placement(self, info: Info) -> Placement | None:
        # Read with the page's card activity: no statement of its own.
        activity = self.held_activity or await self._loaders(info).task_activity.load(self.record.id)
        if not activity.has_run:
            return None
        where = activity.placement or {}
        return Placement(
            executor=where.get("kind"),
            worker=where.get("worker"),
            box_id=where.get("box"),
            waiting_for=list(activity.waiting_for),
        )

    @described(
        "How the newest turn failed (agent error, `/fail`, a reaped or unlaunchable turn); "
        "null once a later turn completes, or when none failed."
    )
    async def last_turn_error(self, info: Info) -> TurnError | None:
        turn = await self._loaders(info).last_turn_error.load(self.record.id)
        if turn is None or turn.ended_at is None:
            return None
        return TurnError(message=turn.error or "the turn failed", stop_reason=turn.stop_reason, ended_at=turn.ended_at)

    @described(
        "What the task's agent did last, for its board card; read for the whole page at once.",
        graphql_type=TaskActivity,
    )
    def activity(self, info: Info) -> TaskActivity | Awaitable[TaskActivity]:
        # Read with the page when the page listed the task: no coroutine and no loader call per task.
        if self.held_activity is not None:
            return TaskActivity.of(self.held_activity)
        return self._loaded_activity(info)

    async def _loaded_activity(self, info: Info) -> TaskActivity:
        return TaskActivity.of(await self._loaders(info).task_activity.load(self.record.id))

    @described(
        "What the task changed (files, +, −) over all its repositories, as last measured where its worktrees are (at "
        "its agent's tool calls and turn ends, within a second; after a discard); null until first measured, and "
        "always for a task without a repository. Stored with the task: board cards read it at no extra cost."
    )
    def change_stats(self) -> ChangeStats | None:
        record = self.record
        found = change_stats_of(record.change_files, record.change_additions, record.change_deletions)
        return (
            None
            if found is None
            else ChangeStats(files=found.files, additions=found.additions, deletions=found.deletions)
        )

    auto_merge: bool = strawberry.field(
        default=False,
        description="Merge the task's pull requests once their checks pass and they are approved (separate from "
        "fixFailingChecks); set with updateTask.",
    )

    @described(
        "The task's pull (merge) requests opened from Kandev, one per repository, as the code host last showed them "
        "(refreshed by polling and webhooks): the PR card and the board badge. Read for a whole page at once."
    )
    async def pull_requests(self, info: Info) -> list[TaskPullRequestView]:
        records = await self._loaders(info).ship_requests.load(self.record.id)
        return [TaskPullRequestView.of_request(r) for r in records]

    @described(
        "Fix failing checks of the task's pull requests: on, how many rounds at most, and why rounds stopped (if)."
    )
    async def fix_failing_checks(self, info: Info) -> FixFailingChecks:
        return FixFailingChecks.of(await info.context.services.ship.fix_settings(self.record.id))

    @described(
        "The rounds in which the agent was asked to fix failing checks, oldest first (each one prompt, for one "
        "failing commit)."
    )
    async def check_fix_rounds(self, info: Info) -> list[CheckFixRound]:
        return [CheckFixRound.of(r) for r in await info.context.services.ship.rounds(self.record.id)]

    @described("The task's review threads, oldest first, with their comments.")
    async def review_threads(self, info: Info, state: ReviewThreadState | None = None) -> list[ReviewThread]:
        return [ReviewThread.of(r) for r in await info.context.services.reviews.threads(self.record.id, state)]

    @described("The direct parent task, if any.")
    async def parent(self, info: Info) -> Task | None:
        if not self.record.parent_id:
            return None
        return Task.of(await info.context.services.tasks.get(self.record.parent_id))

    @described("Direct subtasks (live, not archived), newest first.")
    async def children(self, info: Info, first: int = 100) -> list[Task]:
        page = await info.context.services.tasks.list(
            self.record.workspace_id, TaskFilter(parent_id=self.record.id), first=first, count=False
        )
        return [Task.of(r) for r in page.records]

    @described("The question this autopilot child waits on its parent for, if any.")
    async def pending_parent_question(
        self, info: Info
    ) -> Annotated[ParentQuestion, strawberry.lazy("kandev.graphql.schema.workflow_engine_types")] | None:

        row = await self._loaders(info).pending_parent_question.load(self.record.id)
        return ParentQuestion(row=row) if row else None

    @described("The task's sessions, primary first; `only` picks one by id.")
    async def sessions(self, info: Info, only: strawberry.ID | None = None) -> list[Session]:
        if self.record.deleted_at is not None:
            return []
        rows = await self._loaders(info).sessions_by_task.load(self.record.id)
        chosen = only_session(rows, None if only is None else str(only))
        return [Session.of(SessionRecord.of(s), loaders=self.loaders) for s in chosen]

    @described("The tasks this one waits on: it starts once every one of them COMPLETED.")
    async def blocked_by(self, info: Info) -> list[Task]:
        records = await self._loaders(info).blockers_by_task.load(self.record.id)
        return [Task.of(r, loaders=self.loaders) for r in records]

    @described("The tasks waiting on this one.")
    async def blocking(self, info: Info) -> list[Task]:
        records = await self._loaders(info).dependents_by_task.load(self.record.id)
        return [Task.of(r, loaders=self.loaders) for r in records]

    @described(
        "The repositories the task works in, in order, with the branch each is on. Read for one task at a time "
        "(a task page), not for a list."
    )
    async def repositories(self, info: Info) -> list[TaskCheckout]:
        records = await info.context.services.tasks.checkouts(self.record.id)
        return [TaskCheckout.of(r, self.record.id) for r in records]

    @described(
        "What the task changed, per repository, against its base (the merge base of the task's branch and the base "
        "branch). Read where the worktree is: on this replica, else asked of the worker holding it (a query error "
        "with code UNAVAILABLE naming the worker when it does not answer within 5 s). For one task at a time."
    )
    async def changes(
        self,
        info: Info,
        scope: ChangeScope = ChangeScope.ALL,
        paths: Annotated[
            list[str] | None,
            strawberry.argument(
                description="Only these files (at most 100); give a renamed file's oldPath too, to keep it a rename."
            ),
        ] = None,
    ) -> TaskChanges:
        history = any(selects(info, "repositories", name) for name in ("commits", "ahead", "behind"))
        found = await info.context.services.changes.changes(self.record.id, scope, paths, history=history)
        return TaskChanges.of(found)

    @described("The start recorded to fire once every dependency completed, if any.")
    def deferred_launch(self) -> DeferredLaunch | None:
        launch = self.record.deferred_launch
        if launch is None:
            return None
        profile = launch.get("agent_profile_id")
        profile_id = strawberry.ID(profile) if profile else None
        return DeferredLaunch(prompt=launch.get("prompt"), agent_profile_id=profile_id)


@strawberry.type(description="A repository a task works in and the branches it is on.")
class TaskCheckout:
    repository_id: strawberry.ID
    name: str
    base_branch: str | None = strawberry.field(description="What its changes are diffed against.")
    branch: str | None = strawberry.field(description="The task's local branch; null until its worktree is made.")
    source_branch: str | None = strawberry.field(
        description="Where its pushes go: a pull request's head branch, or the branch a push or CI event named "
        "(the task's branch starts at the event's commit); null for a task's own new branch."
    )
    pull_request: int | None = strawberry.field(description="The pull request it works on, by number.")
    url: str | None = strawberry.field(description="The pull request's (or the event branch's) page.")
    task_id: strawberry.Private[str] = ""

    @described(
        "The connected code host its remote is on (github or gitlab), where the task's pull request opens and "
        "merges; null: none, so the task's branch is merged locally (mergeTaskBranch)."
    )
    async def code_host(self, info: Info) -> str | None:
        return await info.context.services.ship.code_host(self.task_id, str(self.repository_id))

    @classmethod
    def of(cls, record: TaskCheckoutRecord, task_id: str) -> TaskCheckout:
        return cls(
            task_id=task_id,
            repository_id=strawberry.ID(record.repository_id),
            name=record.name,
            base_branch=record.base_branch,
            branch=record.branch,
            source_branch=record.source_branch,
            pull_request=record.pull_request,
            url=record.url,
        )


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
    # Counted only when the query selects totalCount (the board's page does not).
    count: strawberry.Private[int | None]

    @strawberry.field
    def total_count(self) -> int:
        assert self.count is not None, "the tasks resolver counts whenever totalCount is selected"
        return self.count

    @strawberry.field
    def nodes(self) -> list[Task]:
        return [edge.node for edge in self.edges]


@strawberry.type(
    description="A change to the workspace's configuration: what kind of thing changed and its id, never its "
    "content (secrets' values included). Clients refetch the list concerned."
)
class WorkspaceEvent:
    kind: WorkspaceEventKind
    id: strawberry.ID | None = strawberry.field(
        default=None,
        description="The workspace, workflow (also for a step's change), profile, repository or secret; null only "
        "in the SUBSCRIBED message.",
    )


@strawberry.type(description="A change to a task, carrying its current sidebar row.")
class TaskEvent:
    kind: TaskEventKind
    task: Task | None = strawberry.field(description="The task as it is now; null only in the SUBSCRIBED message.")
    changed_files: list[ChangedFile] | None = strawberry.field(
        default=None, description="CHANGES: the files whose diff changed (empty: too many to list); null otherwise."
    )
    review_thread: ReviewThread | None = strawberry.field(
        default=None,
        description="REVIEW_THREAD: the thread as it is now; REVIEW_THREAD_DELETED: as it was; null otherwise.",
    )

    @classmethod
    def of(
        cls,
        kind: TaskEventKind,
        task: Task,
        changed_files: list[dict[str, str]] | None = None,
        review_thread: dict[str, Any] | None = None,
    ) -> TaskEvent:
        files = None
        if changed_files is not None:
            files = [
                ChangedFile(repository_id=strawberry.ID(f["repository_id"]), path=f["path"]) for f in changed_files
            ]
        thread = ReviewThread.of(ThreadRecord.from_json(review_thread)) if review_thread is not None else None
        return cls(kind=kind, task=task, changed_files=files, review_thread=thread)
