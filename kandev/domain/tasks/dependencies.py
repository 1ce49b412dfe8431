"""Task dependencies: links without cycles, the BLOCKED gate, and the start recorded behind it.

A task is blocked by its predecessors until every one of them is COMPLETED; only success resolves
a link. A start requested while the gate is closed is recorded in `Task.deferred_launch` and fired
(through `begin_task`) in the transaction that opens the gate; any other start consumes it.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.context import ServiceContext, UnitOfWork
from kandev.domain.errors import ConflictError, DomainError, PermissionDeniedError, ValidationError
from kandev.domain.feeds import emit_task_event
from kandev.domain.records import TaskRecord
from kandev.domain.scope import load_task
from kandev.models import Task, TaskDependency, Workspace
from kandev.models.base import utcnow
from kandev.models.enums import TaskState

# Only a task that has not started yet is held at the gate; a running or finished one keeps its state.
GATED_STATES = (TaskState.TODO, TaskState.BLOCKED)
MAX_BLOCKERS = 50


@dataclass(frozen=True)
class Predecessor:
    id: str
    title: str
    state: str
    deleted: bool

    @property
    def label(self) -> str:
        return f"'{self.title}' ({self.id})"


@dataclass(frozen=True)
class DependencyChange:
    task: TaskRecord
    depends_on_task_id: str
    # False when the link was already there (add) or was not there (remove).
    changed: bool


async def predecessors(db: AsyncSession, task_id: str) -> list[Predecessor]:
    """Fresh column reads (not the identity map), so a concurrent commit is seen once a lock is held."""
    rows = await db.execute(
        select(Task.id, Task.title, Task.state, Task.deleted_at)
        .join(TaskDependency, TaskDependency.blocked_by_id == Task.id)
        .where(TaskDependency.task_id == task_id)
        .order_by(TaskDependency.created_at, Task.id)
    )
    return [Predecessor(r.id, r.title, r.state, r.deleted_at is not None) for r in rows]


def block_reason(rows: list[Predecessor]) -> str | None:
    """Why the gate is closed, naming each predecessor at fault; None when every one has completed."""
    broken = [r for r in rows if r.deleted or r.state in (TaskState.FAILED, TaskState.CANCELLED)]
    waiting = [r for r in rows if r not in broken and r.state != TaskState.COMPLETED]
    if not broken and not waiting:
        return None
    parts = []
    for row in broken:
        what = "was deleted" if row.deleted else ("failed" if row.state == TaskState.FAILED else "was cancelled")
        parts.append(f"{row.label} {what}")
    if broken:
        tail = "it must complete" if len(broken) == 1 else "they must complete"
        parts[-1] += f"; {tail} (or the dependency be removed) before this task can start"
    if waiting:
        parts.append("waiting for " + ", ".join(r.label for r in waiting) + " to complete")
    return "Blocked: " + "; ".join(parts) + "."


async def _cycle_path(db: AsyncSession, start: str, target: str) -> list[str] | None:
    """The chain of 'waits on' links from `start` to `target`, if there is one (breadth first: shortest)."""
    came_from: dict[str, str | None] = {start: None}
    queue = deque([start])
    while queue:
        current = queue.popleft()
        if current == target:
            path = [current]
            while (previous := came_from[path[-1]]) is not None:
                path.append(previous)
            return list(reversed(path))
        nexts = await db.scalars(select(TaskDependency.blocked_by_id).where(TaskDependency.task_id == current))
        for following in nexts:
            if following not in came_from:
                came_from[following] = current
                queue.append(following)
    return None


async def link(uow: UnitOfWork, task: Task, blocker: Task, *, field: str = "depends_on_task_id") -> bool:
    """Make `task` wait on `blocker`; False when the link was already there."""
    if task.id == blocker.id:
        raise ValidationError("a task can't depend on itself", field=field)
    if task.workspace_id != blocker.workspace_id:
        raise ValidationError("both tasks of a dependency must be in the same workspace", field=field)
    # One dependency writer per workspace at a time, so two links can't close a cycle between them;
    # and the blocker's row, so a completion racing this link either sees it or is seen by it.
    await uow.db.execute(select(Workspace.id).where(Workspace.id == task.workspace_id).with_for_update())
    await uow.db.execute(select(Task.id).where(Task.id == blocker.id).with_for_update())
    if await uow.db.get(TaskDependency, (task.id, blocker.id)) is not None:
        return False
    path = await _cycle_path(uow.db, blocker.id, task.id)
    if path is not None:
        cycle = [task.id, *path]
        titles = dict((await uow.db.execute(select(Task.id, Task.title).where(Task.id.in_(cycle)))).tuples().all())
        rendered = " -> ".join(f"'{titles.get(i, '?')}' ({i})" for i in cycle)
        raise ConflictError(
            f"the dependency would close a cycle: {rendered} (each waits on the next)",
            path=cycle,
            field=field,
        )
    uow.db.add(TaskDependency(task_id=task.id, blocked_by_id=blocker.id, created_at=utcnow()))
    await uow.db.flush()
    return True


async def refresh_gate(ctx: ServiceContext, uow: UnitOfWork, task: Task) -> None:
    """Hold an unstarted task BLOCKED (with the reason) while a predecessor has not completed; once
    every one has, release it and fire the recorded start."""
    if task.deleted_at is not None or task.state not in GATED_STATES:
        return
    reason = block_reason(await predecessors(uow.db, task.id))
    if reason is not None:
        if task.state != TaskState.BLOCKED or task.block_reason != reason:
            _set(uow, task, TaskState.BLOCKED, reason)
        return
    if task.state == TaskState.BLOCKED and task.block_reason is not None:
        _set(uow, task, TaskState.TODO, None)
    if task.deferred_launch is not None:
        await _fire(ctx, uow, task)


def _set(uow: UnitOfWork, task: Task, state: TaskState, reason: str | None) -> None:
    task.state = state
    task.block_reason = reason
    task.updated_at = utcnow()
    emit_task_event(uow, "UPDATED", task)


async def _fire(ctx: ServiceContext, uow: UnitOfWork, task: Task) -> None:
    """Run the recorded start in a savepoint: a start that fails keeps the intent and leaves the
    predecessor's change (which opened the gate) committed."""
    launch: dict[str, Any] = dict(task.deferred_launch or {})
    marks = (len(uow.events), len(uow.after_commit))
    try:
        async with uow.db.begin_nested():
            await ctx.hooks.begin_task(ctx, uow, task, launch.get("prompt"), launch.get("agent_profile_id"))
    except DomainError as error:
        del uow.events[marks[0] :]
        del uow.after_commit[marks[1] :]
        await uow.db.refresh(task)
        _set(
            uow,
            task,
            TaskState.BLOCKED,
            f"Every dependency completed, but the recorded start failed: {error.message} Start the task to retry.",
        )


async def after_predecessor_changed(ctx: ServiceContext, uow: UnitOfWork, task: Task) -> None:
    """`task` changed state (or was deleted): re-evaluate the gate of every task waiting on it."""
    dependents = await uow.db.scalars(
        select(Task)
        .join(TaskDependency, TaskDependency.task_id == Task.id)
        .where(TaskDependency.blocked_by_id == task.id, Task.deleted_at.is_(None))
        .order_by(Task.created_at, Task.id)
        .with_for_update(of=Task)
        .execution_options(populate_existing=True)
    )
    for dependent in list(dependents):
        await refresh_gate(ctx, uow, dependent)


async def gate_new_task(
    ctx: ServiceContext,
    uow: UnitOfWork,
    task: Task,
    blocked_by: list[str],
    *,
    start: bool,
    start_when_unblocked: bool | None,
    agent_profile_id: str | None,
) -> tuple[bool, list[Task]]:
    """Link a task being created to its predecessors; True when it must not start now, and the predecessors.

    With a predecessor still open, a requested start is recorded (unless start_when_unblocked is
    false) and the task waits BLOCKED; when all have already completed, the start rule applies as usual.
    """
    ids = list(dict.fromkeys(i.strip() for i in blocked_by if i and i.strip()))
    if len(ids) > MAX_BLOCKERS:
        raise ValidationError(f"blockedBy takes at most {MAX_BLOCKERS} tasks", field="blockedBy")
    blockers = []
    for blocker_id in ids:
        blocker = await load_task(uow.db, ctx.principal, blocker_id)
        await link(uow, task, blocker, field="blockedBy")
        blockers.append(blocker)
    if not ids or task.state not in GATED_STATES:
        return False, blockers
    reason = block_reason(await predecessors(uow.db, task.id))
    if reason is None:
        return False, blockers
    if start and start_when_unblocked is not False:
        task.deferred_launch = {
            "prompt": task.prompt or None,
            "agent_profile_id": agent_profile_id,
            "executor_profile_id": task.executor_profile_id,
        }
    task.state = TaskState.BLOCKED
    task.block_reason = reason
    return True, blockers


class DependencyService:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    def _own_end(self, task_id: str | None) -> str:
        """In a task session the dependent end is the caller's own task, and only that one; an automation run's
        agent orders other tasks, so it names the dependent end (its own is refused)."""
        own = self.ctx.principal.task_id
        if own is not None:
            if task_id is None or task_id in ("self", own):
                return own
            if self.ctx.principal.coordinates:
                return task_id
            raise PermissionDeniedError(
                "in a task session task_id can only be your own task; name the other end with depends_on_task_id"
            )
        if not task_id:
            raise ValidationError("taskId is required outside a task session", field="taskId")
        return task_id

    async def add(self, task_id: str | None, depends_on_task_id: str) -> DependencyChange:
        dependent_id = self._own_end(task_id)
        async with self.ctx.unit_of_work() as uow:
            task = await load_task(uow.db, self.ctx.principal, dependent_id)
            blocker = await load_task(uow.db, self.ctx.principal, depends_on_task_id)
            for end in (task, blocker):
                self.ctx.principal.refuse_own_run_task(end.id, "link dependencies to")
            changed = await link(uow, task, blocker)
            if changed:
                await refresh_gate(self.ctx, uow, task)
                task.updated_at = utcnow()
                emit_task_event(uow, "UPDATED", task)
            return DependencyChange(TaskRecord.of(task), blocker.id, changed)

    async def remove(self, task_id: str | None, depends_on_task_id: str) -> DependencyChange:
        """Removing a link that is not there succeeds (changed=False)."""
        dependent_id = self._own_end(task_id)
        async with self.ctx.unit_of_work() as uow:
            task = await load_task(uow.db, self.ctx.principal, dependent_id)
            for end in (task.id, depends_on_task_id):
                self.ctx.principal.refuse_own_run_task(end, "unlink dependencies of")
            row = await uow.db.get(TaskDependency, (task.id, depends_on_task_id))
            if row is None:
                # Still authorize the other end, so ids can't be probed through a no-op.
                other = await uow.db.get(Task, depends_on_task_id)
                if other is None or other.workspace_id != task.workspace_id:
                    await load_task(uow.db, self.ctx.principal, depends_on_task_id)
                return DependencyChange(TaskRecord.of(task), depends_on_task_id, False)
            # A deleted predecessor can still be unlinked: that is how its dependents are released.
            await uow.db.delete(row)
            await uow.db.flush()
            await refresh_gate(self.ctx, uow, task)
            task.updated_at = utcnow()
            emit_task_event(uow, "UPDATED", task)
            return DependencyChange(TaskRecord.of(task), depends_on_task_id, True)
