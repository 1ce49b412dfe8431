"""The one writer of step moves: history row, COMPLETED on the final step, and the MOVED event."""

from __future__ import annotations

from typing import Any

from kandev.domain.context import UnitOfWork
from kandev.domain.records import TaskRecord
from kandev.events import task_channel
from kandev.models import StepTransition, Task, WorkflowStep
from kandev.models.base import utcnow
from kandev.models.enums import TaskState


def emit_task_event(uow: UnitOfWork, kind: str, task: Task) -> None:
    """Queue a taskEvents payload (published after commit) carrying the task's sidebar row."""
    uow.emit(task_channel(task.workspace_id), {"kind": kind, "task": TaskRecord.of(task).to_json()})


def record_transition(
    uow: UnitOfWork,
    task: Task,
    to_step: WorkflowStep,
    *,
    trigger: str,
    actor: str,
    details: dict[str, Any] | None = None,
) -> StepTransition:
    """Put `task` on `to_step` and write history; entering the final step completes the task."""
    transition = StepTransition(
        task_id=task.id,
        from_step_id=task.workflow_step_id,
        to_step_id=to_step.id,
        trigger=trigger,
        actor=actor,
        details=details or {},
        created_at=utcnow(),
    )
    uow.session.add(transition)
    was_final = task.state == TaskState.COMPLETED
    task.workflow_step_id = to_step.id
    if to_step.is_final_step:
        task.state = TaskState.COMPLETED
    elif was_final:
        # Leaving the final step re-opens the task.
        task.state = TaskState.TODO
    task.updated_at = utcnow()
    return transition
