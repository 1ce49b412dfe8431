"""Tasks: create, read, list, update, move, archive and delete, with every rule they carry."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace

from sqlalchemy import and_, func, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.attachments.service import bind, delete_task_attachments
from kandev.domain.context import Principal, ServiceContext, UnitOfWork
from kandev.domain.errors import ConflictError, NotFoundError, PermissionDeniedError, ValidationError
from kandev.domain.events import SessionEnded
from kandev.domain.feeds import emit_task_event
from kandev.domain.mcp.selections import forget_task_selections
from kandev.domain.pagination import decode_cursor, encode_cursor
from kandev.domain.ports import Contribution
from kandev.domain.quotas import check_tasks
from kandev.domain.records import TaskRecord
from kandev.domain.scope import load_step, load_task, load_workflow, load_workspace
from kandev.domain.session_rows import task_sessions
from kandev.domain.sessions.parent_questions import make_stale, parent_gone
from kandev.domain.tasks.dependencies import after_predecessor_changed, gate_new_task
from kandev.domain.tasks.titles import end_title_handoff, wants_generated_title
from kandev.domain.validation import PAGE_SIZE_LIMIT, check_prompt, clean_external_id, clean_title
from kandev.domain.workflow.engine import after_task_state_change
from kandev.domain.workflow.service import final_step_of, ordered_steps, start_step_of
from kandev.domain.workflow.transitions import move_task
from kandev.domain.workspace.agent_profiles import usable_in
from kandev.domain.workspace.contributions import (
    Undo,
    attach_contribution,
    parse_contribution_url,
    resolve_contribution,
)
from kandev.domain.workspace.repositories import RepositoryChoice, TaskCheckout, attach_repositories, task_checkouts
from kandev.domain.workspace.task_choices import ChosenRepository, LastChoice, remember_choice
from kandev.models import AgentProfile, AutomationRun, ExecutorProfile, Task, Workflow, WorkflowStep
from kandev.models.base import new_id, utcnow
from kandev.models.enums import HIDDEN_ORIGINS, RunTriggerType, TaskOrigin, TaskState, TransitionTrigger

MAX_PAGE_SIZE = PAGE_SIZE_LIMIT


@dataclass
class CreateTask:
    # None: the workspace of the caller's own task (a session principal).
    workspace_id: str | None
    title: str
    prompt: str = ""
    parent_id: str | None = None
    autopilot: bool = False
    external_id: str | None = None
    workflow_id: str | None = None
    workflow_step_id: str | None = None
    agent_profile_id: str | None = None
    executor_profile_id: str | None = None
    origin: TaskOrigin = TaskOrigin.USER
    repositories: list[RepositoryChoice] = field(default_factory=list)
    # None: start the agent when there is a prompt (the rule on every create surface).
    start_agent: bool | None = None
    # Tasks this one waits on; a start requested while any is still open is recorded, not run.
    blocked_by: list[str] = field(default_factory=list)
    # False: link to blocked_by without recording a start at all.
    start_when_unblocked: bool | None = None
    # Uploads of the caller's that go with the task's first prompt.
    attachment_ids: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class CreatedTask:
    task: TaskRecord
    deduplicated: bool
    creation_complete: bool
    # A new task's predecessors, known from its create (None for a deduplicated one: not read).
    blocked_by: list[TaskRecord] | None = None


@dataclass(frozen=True)
class Archived:
    task: TaskRecord
    already_archived: bool  # it was archived before this call, which changed nothing


@dataclass
class TaskFilter:
    workflow_step_id: str | None = None
    state: TaskState | None = None
    parent_id: str | None = None
    # False: live tasks only; True: archived only; None: both.
    archived: bool | None = False


@dataclass(frozen=True)
class TaskPage:
    records: list[TaskRecord]
    has_next_page: bool
    total_count: int | None
    cursors: list[str] = field(default_factory=list)


async def _profile_in(
    db: AsyncSession,
    model: type[AgentProfile] | type[ExecutorProfile],
    profile_id: str | None,
    workspace_id: str,
) -> str | None:
    """The id back when it names a profile of this workspace or a server-wide one; not-found otherwise."""
    if profile_id is None:
        return None
    profile: AgentProfile | ExecutorProfile | None = await db.get(model, profile_id)
    if profile is None or not usable_in(profile.workspace_id, workspace_id):
        entity = "agent profile" if model is AgentProfile else "executor profile"
        raise NotFoundError(entity, profile_id)
    return profile_id


class TaskService:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    # -- reads -----------------------------------------------------------------------------

    async def get(self, task_id: str) -> TaskRecord:
        async with self.ctx.read() as db:
            return TaskRecord.of(await load_task(db, self.ctx.principal, task_id))

    async def checkouts(self, task_id: str) -> list[TaskCheckout]:
        """The repositories the task works in, in order, with their branches."""
        async with self.ctx.read() as db:
            await load_task(db, self.ctx.principal, task_id)
            return await task_checkouts(db, task_id)

    async def list(
        self, workspace_id: str, filters: TaskFilter, *, first: int = 50, after: str | None = None, count: bool = True
    ) -> TaskPage:
        """Newest first, keyset-paginated; hidden tasks (automation runs, authoring chats) never appear.
        `count=False` skips the total (a statement over every matching task), leaving total_count None."""
        if not 0 <= first <= MAX_PAGE_SIZE:
            raise ValidationError(f"first must be between 0 and {MAX_PAGE_SIZE}", field="first")
        self.ctx.principal.refuse_own_run_task(filters.parent_id, "list the subtasks of")
        async with self.ctx.read() as db:
            await load_workspace(db, self.ctx.principal, workspace_id)
            conditions = [
                Task.workspace_id == workspace_id,
                Task.deleted_at.is_(None),
                Task.origin.not_in(HIDDEN_ORIGINS),
            ]
            if filters.workflow_step_id is not None:
                conditions.append(Task.workflow_step_id == filters.workflow_step_id)
            if filters.state is not None:
                conditions.append(Task.state == filters.state)
            if filters.parent_id is not None:
                conditions.append(Task.parent_id == filters.parent_id)
            if filters.archived is True:
                conditions.append(Task.archived_at.is_not(None))
            elif filters.archived is False:
                conditions.append(Task.archived_at.is_(None))
            total = await db.scalar(select(func.count()).select_from(Task).where(*conditions)) if count else None
            page_conditions = list(conditions)
            if after:
                created_at, task_id = decode_cursor(after)
                page_conditions.append(
                    or_(Task.created_at < created_at, and_(Task.created_at == created_at, Task.id < task_id))
                )
            rows = (
                await db.execute(
                    select(*TaskRecord.columns())
                    .where(*page_conditions)
                    .order_by(Task.created_at.desc(), Task.id.desc())
                    .limit(first + 1)
                )
            ).all()
        page = [TaskRecord(*row) for row in rows[:first]]
        return TaskPage(
            records=page,
            has_next_page=len(rows) > first,
            total_count=(total or 0) if count else None,
            cursors=[encode_cursor(t.created_at, t.id) for t in page],
        )

    # -- writes ----------------------------------------------------------------------------

    def _named(self, command: CreateTask) -> tuple[CreateTask, str]:
        """The command with the caller's defaults filled in (its workspace, and `self` as its own task), and
        that workspace."""
        principal = self.ctx.principal
        workspace_id = principal.workspace_or_own(command.workspace_id)
        named = replace(
            command,
            workspace_id=workspace_id,
            parent_id=principal.task_named(command.parent_id, "parent_id") if command.parent_id else None,
            blocked_by=[principal.task_named(task_id, "blocked_by") for task_id in command.blocked_by],
        )
        # A subtask of an automation run's own task, or one waiting on it, would hand the run work of its own.
        principal.refuse_own_run_task(named.parent_id, "create a subtask of")
        for blocker_id in named.blocked_by:
            principal.refuse_own_run_task(blocker_id.strip(), "make a new task wait on")
        return named, workspace_id

    async def create(self, command: CreateTask) -> CreatedTask:
        """One transaction does all of a create's work, completion mark included, so no other reader ever
        sees a task that holds an identity without the mark (rows from older versions may lack it)."""
        command, workspace_id = self._named(command)
        title = clean_title(command.title)
        external_id = clean_external_id(command.external_id)
        check_prompt(command.prompt)
        contributions = await self._contributions(command, workspace_id, external_id)
        if isinstance(contributions, CreatedTask):
            return contributions
        for _ in range(3):
            undo = Undo([])
            try:
                async with self.ctx.unit_of_work() as uow:
                    if external_id is not None:
                        existing = await self._by_external_id(uow.db, workspace_id, external_id)
                        if existing is not None:
                            return _deduplicated(existing)
                    task = await self._new_task(uow, command, workspace_id, title, external_id)
                    await bind(uow.db, self.ctx.principal, task, command.attachment_ids, waiting=True)
                    for position, contribution in contributions.items():
                        await attach_contribution(self.ctx.settings, uow, task, contribution, position, undo)
                    start = command.start_agent
                    if start is None:
                        start = bool(command.prompt.strip())
                    gated, blockers = await gate_new_task(
                        self.ctx,
                        uow,
                        task,
                        command.blocked_by,
                        start=start,
                        start_when_unblocked=command.start_when_unblocked,
                        agent_profile_id=command.agent_profile_id,
                    )
                    emit_task_event(uow, "CREATED", task)
                    self._remember_choice(uow, command, workspace_id)
                    if start and not gated:
                        await self.ctx.hooks.begin_task(
                            self.ctx, uow, task, task.prompt or None, command.agent_profile_id
                        )
                    return CreatedTask(
                        TaskRecord.of(task),
                        deduplicated=False,
                        creation_complete=True,
                        blocked_by=[TaskRecord.of(b) for b in blockers],
                    )
            except BaseException as error:
                await asyncio.to_thread(undo.run)  # a contribution's clone, remote and branch go again
                if not isinstance(error, IntegrityError):
                    raise
                # A concurrent create with the same identity committed first: answer with its task.
                if external_id is None:
                    raise
                async with self.ctx.read() as db:
                    existing = await self._by_external_id(db, workspace_id, external_id)
                if existing is not None:
                    return _deduplicated(existing)
                # The holder was deleted or released in between: the identity is free again, try anew.
        raise ConflictError("the external_id is being created and released concurrently; retry")

    def _remember_choice(self, uow: UnitOfWork, command: CreateTask, workspace_id: str) -> None:
        """A person's create of a top-level task is their new-task form's next default
        (kandev.domain.workspace.task_choices); a subtask's form offers no repositories to remember."""
        if self.ctx.principal.session_id is not None or command.origin != TaskOrigin.USER or command.parent_id:
            return
        repositories = [
            ChosenRepository(c.repository_id, c.base_branch) for c in command.repositories if c.repository_id
        ]
        choice = LastChoice(repositories, command.executor_profile_id, command.agent_profile_id)
        uow.then(lambda: remember_choice(self.ctx, workspace_id, choice))

    async def _contributions(
        self, command: CreateTask, workspace_id: str, external_id: str | None
    ) -> dict[int, Contribution] | CreatedTask:
        """The pull/merge requests named by URL, resolved with the workspace's connection before anything is
        written (by position among the repositories); an existing task for external_id instead."""
        for position, choice in enumerate(command.repositories):
            if bool(choice.repository_id) == (choice.url is not None):
                raise ValidationError(
                    "a repository needs exactly one of repositoryId or repositoryUrl", field=f"repositories[{position}]"
                )
        wanted = {
            position: parse_contribution_url(choice.url, f"repositories[{position}].repository_url")
            for position, choice in enumerate(command.repositories)
            if choice.url is not None
        }
        if not wanted:
            return {}
        async with self.ctx.read() as db:
            await load_workspace(db, self.ctx.principal, workspace_id)  # before its token is used
            if external_id is not None:
                existing = await self._by_external_id(db, workspace_id, external_id)
                if existing is not None:
                    return _deduplicated(existing)
            resolved = {}
            for position, ref in wanted.items():
                resolved[position] = await resolve_contribution(db, self.ctx.settings, workspace_id, ref)
        repositories = [(c.host, c.target.lower()) for c in resolved.values()]
        if len(set(repositories)) != len(repositories):
            raise ValidationError("a repository is listed twice", field="repositories")
        return resolved

    async def create_within(self, uow: UnitOfWork, command: CreateTask) -> Task:
        """create's writes inside the caller's unit of work, without starting anything: for a caller that
        binds the new task to its own row in the same transaction (an automation run). No external id and no
        dependencies (the caller's row is its idempotency)."""
        command, workspace_id = self._named(command)
        check_prompt(command.prompt)
        task = await self._new_task(uow, command, workspace_id, clean_title(command.title), None)
        emit_task_event(uow, "CREATED", task)
        return task

    async def find_by_external_id(self, workspace_id: str, external_id: str | None) -> TaskRecord:
        """The live task holding an identity, finished or not; not-found when nothing holds it."""
        value = _required_external_id(external_id)
        async with self.ctx.read() as db:
            task = await self._by_external_id(db, workspace_id, value)
        if task is None:
            raise NotFoundError("task with this external_id")
        return TaskRecord.of(task)

    async def release_external_id(self, workspace_id: str, external_id: str | None) -> TaskRecord:
        """Free an identity (an operator's call, for a create known to be abandoned); the task stays."""
        value = _required_external_id(external_id)
        async with self.ctx.unit_of_work() as uow:
            task = await self._by_external_id(uow.db, workspace_id, value)
            if task is None:
                raise NotFoundError("task with this external_id")
            task.external_id = None
            task.updated_at = utcnow()
            emit_task_event(uow, "UPDATED", task)
            return TaskRecord.of(task)

    async def _executor(
        self, db: AsyncSession, chosen: str | None, workspace_id: str, parent: Task | None
    ) -> str | None:
        """Where the new task's agents run. An agent's tasks run where it runs, its own task's executor: an agent in
        a box can't start one outside it. A person's choice is checked; a subtask without one takes its parent's."""
        principal = self.ctx.principal
        if principal.session_id is not None:
            own = await db.get(Task, principal.task_id) if principal.task_id else None
            inherited = own.executor_profile_id if own is not None else None
            if chosen not in (None, inherited):
                raise ValidationError(
                    "an agent's tasks run where the agent runs: it can't choose their executor",
                    field="executorProfileId",
                )
            return inherited
        if chosen is None and parent is not None:
            return parent.executor_profile_id
        return await _profile_in(db, ExecutorProfile, chosen, workspace_id)

    async def _new_task(
        self, uow: UnitOfWork, command: CreateTask, workspace_id: str, title: str, external_id: str | None
    ) -> Task:
        db, principal = uow.db, self.ctx.principal
        workspace = await load_workspace(db, principal, workspace_id)
        await check_tasks(db, self.ctx, workspace.owner_id)
        step = await self._initial_step(db, command, workspace.default_workflow_id)
        parent = None
        if command.parent_id is not None:
            parent = await db.get(Task, command.parent_id)
            if parent is None or parent.deleted_at is not None or parent.workspace_id != workspace.id:
                raise NotFoundError("parent task", command.parent_id)
        agent_profile_id = await _profile_in(db, AgentProfile, command.agent_profile_id, workspace.id)
        executor_profile_id = await self._executor(db, command.executor_profile_id, workspace.id, parent)
        if command.autopilot:
            profile = await db.get(AgentProfile, agent_profile_id or workspace.default_agent_profile_id or "")
            if profile is not None and not profile.supports_mcp:
                raise ValidationError(
                    "autopilot needs an agent profile that can receive the task MCP tools", field="autopilot"
                )
        # Who creates decides the origin: an agent db's task is the agent's, whatever it sends.
        origin = TaskOrigin.AGENT if principal.session_id and command.origin == TaskOrigin.USER else command.origin
        now = utcnow()
        task = Task(
            id=new_id(),
            workspace_id=workspace.id,
            workflow_id=step.workflow_id,
            workflow_step_id=step.id,
            parent_id=command.parent_id,
            title=title,
            prompt=command.prompt or "",
            state=TaskState.COMPLETED if step.is_final_step else TaskState.TODO,
            autopilot=command.autopilot,
            origin=origin,
            external_id=external_id,
            agent_profile_id=agent_profile_id,
            executor_profile_id=executor_profile_id,
            created_by=principal.actor,
            title_pending=wants_generated_title(workspace, origin),
            created_at=now,
            updated_at=now,
            creation_completed_at=now,
        )
        db.add(task)
        await db.flush()
        await attach_repositories(db, task.id, workspace.id, command.repositories)
        return task

    async def _initial_step(
        self, db: AsyncSession, command: CreateTask, default_workflow_id: str | None
    ) -> WorkflowStep:
        principal = self.ctx.principal
        if command.workflow_step_id is not None:
            step = await load_step(db, principal, command.workflow_step_id)
            workflow = await db.get(Workflow, step.workflow_id)
            if workflow is None or workflow.workspace_id != command.workspace_id:
                raise NotFoundError("workflow step", command.workflow_step_id)
            if command.workflow_id is not None and command.workflow_id != step.workflow_id:
                raise ValidationError("workflowStepId is not a step of workflowId", field="workflowStepId")
            return step
        workflow_id = command.workflow_id or default_workflow_id
        if workflow_id is None:
            raise ValidationError("the workspace has no default workflow; name one", field="workflowId")
        # The steps with their workflow in one statement; the workspace was checked by the caller.
        steps = list(
            await db.scalars(
                select(WorkflowStep)
                .join(Workflow, Workflow.id == WorkflowStep.workflow_id)
                .where(Workflow.id == workflow_id, Workflow.workspace_id == command.workspace_id)
                .order_by(WorkflowStep.position)
            )
        )
        if not steps:
            # Unknown, another workspace's, or (rarely) a workflow without steps: the full check tells which.
            workflow = await load_workflow(db, principal, workflow_id)
            if workflow.workspace_id != command.workspace_id:
                raise NotFoundError("workflow", workflow_id)
        return start_step_of(steps)

    async def _by_external_id(self, db: AsyncSession, workspace_id: str, external_id: str) -> Task | None:
        await load_workspace(db, self.ctx.principal, workspace_id)
        return await db.scalar(
            select(Task).where(
                Task.workspace_id == workspace_id,
                Task.external_id == external_id,
                Task.deleted_at.is_(None),
            )
        )

    async def update(
        self,
        task_id: str,
        *,
        title: str | None = None,
        state: TaskState | None = None,
        deferred_launch_prompt: str | None = None,
    ) -> TaskRecord:
        """Rename, set state, or replace the prompt of a start waiting on dependencies; COMPLETED
        moves the task to its workflow's final step. The external id can't be changed."""
        new_title = clean_title(title) if title is not None else None
        check_prompt(deferred_launch_prompt, "deferredLaunchPrompt")
        if deferred_launch_prompt is not None and not deferred_launch_prompt.strip():
            raise ValidationError("deferredLaunchPrompt must not be empty", field="deferredLaunchPrompt")
        async with self.ctx.unit_of_work() as uow:
            task = await load_task(uow.db, self.ctx.principal, task_id)
            self.ctx.principal.refuse_own_run_task(task.id, "update")
            if deferred_launch_prompt is not None:
                if task.deferred_launch is None:
                    raise ConflictError(
                        "the task has no start waiting on its dependencies (it has started, or none was "
                        "recorded); send new context with a message instead",
                        task_id=task.id,
                    )
                task.deferred_launch = {**task.deferred_launch, "prompt": deferred_launch_prompt}
            if new_title is not None:
                task.title = new_title
                if self.ctx.principal.session_id is None:
                    await end_title_handoff(uow, task)  # a human rename first wins over the agent's title
            if state is not None and state != task.state:
                if state == TaskState.COMPLETED:
                    final = final_step_of(await ordered_steps(uow.db, task.workflow_id))
                    await move_task(self.ctx, uow, task, final, trigger=TransitionTrigger.TASK_UPDATE)
                    return TaskRecord.of(task)
                task.state = state
                await after_task_state_change(self.ctx, uow, task)
            task.updated_at = utcnow()
            emit_task_event(uow, "UPDATED", task)
            return TaskRecord.of(task)

    async def move(self, task_id: str, workflow_step_id: str) -> TaskRecord:
        async with self.ctx.unit_of_work() as uow:
            task = await load_task(uow.db, self.ctx.principal, task_id)
            self.ctx.principal.refuse_own_run_task(task.id, "move")
            step = await uow.db.get(WorkflowStep, workflow_step_id)
            if step is None or step.workflow_id != task.workflow_id:
                raise NotFoundError("workflow step", workflow_step_id)
            if step.id == task.workflow_step_id:
                return TaskRecord.of(task)
            if not step.allow_manual_move:
                raise ConflictError("tasks can't be moved into this step by hand", step_id=step.id)
            if step.wip_limit is not None:
                occupied = await uow.db.scalar(
                    select(func.count())
                    .select_from(Task)
                    .where(
                        Task.workflow_step_id == step.id,
                        Task.deleted_at.is_(None),
                        Task.archived_at.is_(None),
                    )
                )
                if (occupied or 0) >= step.wip_limit:
                    raise ConflictError("the step is at its WIP limit", step_id=step.id, wip_limit=step.wip_limit)
            await move_task(self.ctx, uow, task, step, trigger=TransitionTrigger.MANUAL)
            return TaskRecord.of(task)

    async def archive(self, task_id: str) -> Archived:
        """Archive the task; one already archived is reported as such and left unchanged."""
        async with self.ctx.unit_of_work() as uow:
            task = await load_task(uow.db, self.ctx.principal, task_id)
            await _check_bound_archive(uow.db, self.ctx.principal, task.id)
            already = task.archived_at is not None
            if not already:
                task.archived_at = task.updated_at = utcnow()
                await make_stale(uow, task_id=task.id, reason="the task was archived")
                await parent_gone(self.ctx, uow, task.id, "the parent task was archived")
                emit_task_event(uow, "ARCHIVED", task)
            return Archived(TaskRecord.of(task), already)

    async def delete(self, task_id: str) -> TaskRecord:
        """Soft delete: the task disappears everywhere and frees its external id."""
        async with self.ctx.unit_of_work() as uow:
            task = await load_task(uow.db, self.ctx.principal, task_id)
            self.ctx.principal.refuse_own_run_task(task.id, "delete")
            await delete_task(self.ctx, uow, task)
            return TaskRecord.of(task)


async def delete_task(ctx: ServiceContext, uow: UnitOfWork, task: Task) -> None:
    """The soft delete itself (deleteTask's, and the automation cleanup job's as the system): tokens revoked,
    waits made stale, the DELETED event."""
    task.deleted_at = task.updated_at = utcnow()
    await forget_task_selections(uow.db, Task.id == task.id)
    await delete_task_attachments(uow.db, task.id)
    for session in await task_sessions(uow.db, task.id):
        await ctx.publish(uow, SessionEnded(session.id))
    await make_stale(uow, task_id=task.id, reason="the task was deleted")
    await parent_gone(ctx, uow, task.id, "the parent task was deleted")
    emit_task_event(uow, "DELETED", task)
    # Tasks waiting on it stay blocked, now with a reason that says it was deleted.
    await after_predecessor_changed(ctx, uow, task)


async def _check_bound_archive(db: AsyncSession, principal: Principal, task_id: str) -> None:
    """A session of a merged-PR automation run archives only the task its firing named (`data.task_id`), and
    its own run task (archiving itself is how any automation run says it is done)."""
    if principal.session_id is None or principal.task_id is None or task_id == principal.task_id:
        return
    bound = await db.scalar(
        select(AutomationRun.trigger_data).where(
            AutomationRun.task_id == principal.task_id,
            AutomationRun.trigger_type == RunTriggerType.GITHUB_PR_MERGED,
        )
    )
    if bound is None:
        return
    target = bound.get("task_id") if isinstance(bound, dict) else None
    if not isinstance(target, str) or task_id != target:
        raise PermissionDeniedError(
            "this merged-PR automation run may archive only the task whose pull request merged",
            task_id=target,
        )


def _deduplicated(existing: Task) -> CreatedTask:
    complete = existing.creation_completed_at is not None
    return CreatedTask(TaskRecord.of(existing), deduplicated=True, creation_complete=complete)


def _required_external_id(value: str | None) -> str:
    cleaned = clean_external_id(value)
    if cleaned is None:
        raise ValidationError("external_id is required", field="external_id")
    return cleaned
