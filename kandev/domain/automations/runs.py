"""The two read-time rules every view of runs shares: which runs are active (the concurrency cap and every
"still open" indicator) and which status a run shows (archived and cancelled are derived, never stored).

Each rule exists twice, as a SQL expression (for counts and filters) and as a Python function (for a row
already loaded); the tests hold the two to the same answers, so the cap and a view cannot disagree."""

from __future__ import annotations

from datetime import datetime
from functools import cache
from typing import Any

from sqlalchemy import and_, case, exists, or_, select
from sqlalchemy.orm import aliased
from sqlalchemy.sql.elements import ColumnElement

from kandev.models import AutomationRun, Clarification, ParentQuestion, PermissionRequest, Session, Task
from kandev.models.enums import PendingAction, RunStatus, TaskState

OPEN_STATUSES = (RunStatus.TRIGGERED, RunStatus.TASK_CREATED)


def _task_live() -> ColumnElement[bool]:
    # Its own alias of Task, so the rule also holds inside a statement that already joins the run's task.
    task = aliased(Task)
    return exists(
        select(task.id)
        .where(
            task.id == AutomationRun.task_id,
            task.deleted_at.is_(None),
            task.archived_at.is_(None),
            task.state != TaskState.CANCELLED,
        )
        .correlate(AutomationRun)
    )


@cache
def active_sql() -> ColumnElement[bool]:
    """(Built once: expressions are immutable, and building this one costs more than the query it is in.)

    A run is active while admitted and unsettled (triggered, or task_created until its turn ends), not
    stopped, and its task (once it has one) is neither deleted, archived nor cancelled. A finished run parked
    WAITING_FOR_INPUT is succeeded or failed, so a reply to it never makes it active again."""
    return and_(
        AutomationRun.status.in_(OPEN_STATUSES),
        AutomationRun.stopped_at.is_(None),
        or_(and_(AutomationRun.status == RunStatus.TRIGGERED, AutomationRun.task_id.is_(None)), _task_live()),
    )


def is_active(
    status: str,
    stopped_at: datetime | None,
    task_id: str | None,
    task_deleted_at: datetime | None,
    task_archived_at: datetime | None,
    task_state: str | None,
) -> bool:
    """active_sql for one loaded run (task_* are its task's columns, None when it has none)."""
    if status not in OPEN_STATUSES or stopped_at is not None:
        return False
    if task_id is None:
        return status == RunStatus.TRIGGERED
    return (
        task_state is not None
        and task_deleted_at is None
        and task_archived_at is None
        and (task_state != TaskState.CANCELLED)
    )


def shown_status(
    status: str,
    stopped_at: datetime | None,
    task_id: str | None,
    task_deleted_at: datetime | None,
    task_archived_at: datetime | None,
    task_state: str | None,
) -> RunStatus:
    """The status every view shows: a stopped run, or one whose task was deleted or cancelled, reads as
    cancelled (from the run's own stopped_at, not from the session's state); one whose task was archived
    reads as archived; otherwise the stored status. A skipped run never had a task and stays skipped."""
    if status == RunStatus.SKIPPED:
        return RunStatus.SKIPPED
    if stopped_at is not None:
        return RunStatus.CANCELLED
    if task_id is not None:
        if task_deleted_at is not None or task_state == TaskState.CANCELLED:
            return RunStatus.CANCELLED
        if task_archived_at is not None:
            return RunStatus.ARCHIVED
    return RunStatus(status)


def shown_status_sql() -> ColumnElement[Any]:
    """shown_status over AutomationRun outer-joined to its Task (see task_columns)."""
    return case(
        (AutomationRun.status == RunStatus.SKIPPED, RunStatus.SKIPPED.value),
        (AutomationRun.stopped_at.is_not(None), RunStatus.CANCELLED.value),
        (
            and_(
                AutomationRun.task_id.is_not(None),
                or_(Task.deleted_at.is_not(None), Task.state == TaskState.CANCELLED),
            ),
            RunStatus.CANCELLED.value,
        ),
        (and_(AutomationRun.task_id.is_not(None), Task.archived_at.is_not(None)), RunStatus.ARCHIVED.value),
        else_=AutomationRun.status,
    )


def task_columns() -> list[Any]:
    """The task facts both rules read, in the order their Python forms take them after (status, stopped_at,
    task_id); select them with `.outerjoin(Task, Task.id == AutomationRun.task_id)`."""
    return [Task.deleted_at, Task.archived_at, Task.state]


def has_newer_run() -> ColumnElement[bool]:
    """Another run of the same task came later (by created_at, then id): this one no longer owns the task's
    current conversation."""
    newer = aliased(AutomationRun)
    return exists(
        select(newer.id)
        .where(
            newer.task_id == AutomationRun.task_id,
            or_(
                newer.created_at > AutomationRun.created_at,
                and_(newer.created_at == AutomationRun.created_at, newer.id > AutomationRun.id),
            ),
        )
        .correlate(AutomationRun)
    )


@cache
def pending_action_sql() -> ColumnElement[Any]:
    """(Built once, like active_sql.) What the run's task waits on, ranked as Lookups.pending_actions ranks it
    (PERMISSION, then CLARIFICATION, then COMPLETION_PENDING), for the task's newest run only: the newest run
    owns the task's current conversation (a continue-session task serves many runs); older runs, and runs
    without a task, read NONE."""
    task_id = AutomationRun.task_id

    def waiting(query: Any) -> ColumnElement[bool]:
        return exists(query.correlate(AutomationRun))

    permission = waiting(
        select(PermissionRequest.id).where(PermissionRequest.task_id == task_id, PermissionRequest.state == "PENDING")
    )
    question = waiting(
        select(Clarification.id).where(Clarification.task_id == task_id, Clarification.state == "PENDING")
    )
    asked_parent = waiting(
        select(ParentQuestion.id).where(ParentQuestion.child_task_id == task_id, ParentQuestion.state == "PENDING")
    )
    completion = waiting(select(Session.id).where(Session.task_id == task_id, Session.completion_pending.is_(True)))
    return case(
        (or_(task_id.is_(None), has_newer_run()), PendingAction.NONE.value),
        (permission, PendingAction.PERMISSION.value),
        (or_(question, asked_parent), PendingAction.CLARIFICATION.value),
        (completion, PendingAction.COMPLETION_PENDING.value),
        else_=PendingAction.NONE.value,
    )
