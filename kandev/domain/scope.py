"""Loading aggregates on behalf of a principal: unknown and unauthorized look the same. A user sees the
workspaces they own (the local user with auth off sees all); a session's agent sees only its own task's
workspace."""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql import Select

from kandev.domain.context import Principal
from kandev.domain.errors import NotFoundError
from kandev.models import Session, Task, Workflow, WorkflowStep, Workspace


def visible_workspaces(principal: Principal) -> Select[Workspace]:
    return _visible_workspaces(*_bounds(principal))


def visible_workspaces_in_order(principal: Principal) -> Select[Workspace]:
    """The workspaces the principal sees, oldest first (the order every list of them shows)."""
    return _visible_in_order(*_bounds(principal))


def _bounds(principal: Principal) -> tuple[str | None, str | None]:
    """The one workspace a principal is bound to, and the owner it is limited to (None: no bound, no limit)."""
    return principal.workspace_id, None if principal.sees_everything else principal.user_id


# Statements are immutable, so one per caller is built once: building the filters cost an agent's
# list_workspaces_kandev about 0.1 ms a call, more than reading its one row.
@lru_cache(maxsize=1024)
def _visible_workspaces(workspace_id: str | None, owner_id: str | None) -> Select[Workspace]:
    query = select(Workspace)
    if workspace_id is not None:
        query = query.where(Workspace.id == workspace_id)
    if owner_id is not None:
        query = query.where(Workspace.owner_id == owner_id)
    return query


@lru_cache(maxsize=1024)
def _visible_in_order(workspace_id: str | None, owner_id: str | None) -> Select[Workspace]:
    return _visible_workspaces(workspace_id, owner_id).order_by(Workspace.created_at, Workspace.id)


def sees_workspace(principal: Principal, workspace: Workspace) -> bool:
    if principal.workspace_id is not None and workspace.id != principal.workspace_id:
        return False
    return principal.sees_everything or workspace.owner_id == principal.user_id


def owner_wide(principal: Principal) -> Principal:
    """The principal without its session's workspace bound, for the spec's one exception only: a message
    (message_task_kandev with a full task id) may reach a task in another workspace of the same owner."""
    return replace(principal, workspace_id=None)


async def load_workspace(db: AsyncSession, principal: Principal, workspace_id: str) -> Workspace:
    workspace = await db.get(Workspace, workspace_id)
    if workspace is None or not sees_workspace(principal, workspace):
        raise NotFoundError("workspace", workspace_id)
    return workspace


async def load_workflow(db: AsyncSession, principal: Principal, workflow_id: str) -> Workflow:
    workflow = await db.get(Workflow, workflow_id)
    if workflow is None:
        raise NotFoundError("workflow", workflow_id)
    try:
        await load_workspace(db, principal, workflow.workspace_id)
    except NotFoundError:
        raise NotFoundError("workflow", workflow_id) from None
    return workflow


async def load_step(db: AsyncSession, principal: Principal, step_id: str) -> WorkflowStep:
    step = await db.get(WorkflowStep, step_id)
    if step is None:
        raise NotFoundError("workflow step", step_id)
    try:
        await load_workflow(db, principal, step.workflow_id)
    except NotFoundError:
        raise NotFoundError("workflow step", step_id) from None
    return step


async def load_task(db: AsyncSession, principal: Principal, task_id: str) -> Task:
    """A live (not deleted) task the principal may see; `self` is a session principal's own task."""
    task_id = principal.task_named(task_id)
    task = await db.get(Task, task_id)
    if task is None or task.deleted_at is not None:
        raise NotFoundError("task", task_id)
    try:
        await load_workspace(db, principal, task.workspace_id)
    except NotFoundError:
        raise NotFoundError("task", task_id) from None
    return task


async def load_session(db: AsyncSession, principal: Principal, session_id: str) -> Session:
    """A session of a live task the principal may see, read with its task and workspace in one statement."""
    found = (
        await db.execute(
            select(Session, Task.deleted_at, Workspace)
            .join(Task, Task.id == Session.task_id)
            .join(Workspace, Workspace.id == Task.workspace_id)
            .where(Session.id == session_id)
        )
    ).first()
    if found is None:
        raise NotFoundError("session", session_id)
    session, deleted_at, workspace = found.tuple()
    if deleted_at is not None or not sees_workspace(principal, workspace):
        raise NotFoundError("session", session_id)
    return session
