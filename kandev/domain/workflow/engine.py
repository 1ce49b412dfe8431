"""The workflow engine: what a step's events do when a turn starts or completes, when a completion
signal arrives, and when a parent's children are all done."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from kandev.domain.automations.pending import pending_changed
from kandev.domain.context import ServiceContext, UnitOfWork
from kandev.domain.errors import AutopilotNeedsMcpError
from kandev.domain.events import TaskReachedReview
from kandev.domain.sessions.parent_questions import parent_gone
from kandev.domain.sessions.prompts import task_sessions
from kandev.domain.sessions.transcript import append_message, emit_session_event
from kandev.domain.tasks.dependencies import after_predecessor_changed
from kandev.domain.workflow.service import ordered_steps
from kandev.domain.workflow.transitions import emit_task_event, move_task
from kandev.models import Clarification, ParentQuestion, Session, Task, Turn, WorkflowStep
from kandev.models.base import new_id, utcnow
from kandev.models.enums import MessageKind, TaskState, TransitionTrigger

MOVES = ("move_to_next", "move_to_previous", "move_to_step")
TERMINAL_TASK_STATES = (TaskState.COMPLETED, TaskState.FAILED, TaskState.CANCELLED)
# Prompts that continue an interrupted turn rather than start new work: no turn-start triggers.
CONTINUATION_SOURCES = ("clarification_answer", "permission_answer")


def actions_of(step: WorkflowStep, event: str) -> list[dict[str, Any]]:
    return list((step.events or {}).get(event, []))


async def move_target(uow: UnitOfWork, task: Task, actions: list[dict[str, Any]]) -> WorkflowStep | None:
    """The step the first move action leads to, or None."""
    move = next((a for a in actions if a.get("type") in MOVES), None)
    if move is None:
        return None
    steps = await ordered_steps(uow.db, task.workflow_id)
    index = next(i for i, s in enumerate(steps) if s.id == task.workflow_step_id)
    if move["type"] == "move_to_next":
        return steps[index + 1] if index + 1 < len(steps) else None
    if move["type"] == "move_to_previous":
        return steps[index - 1] if index > 0 else None
    return next((s for s in steps if s.id == move.get("step_id")), None)


def apply_mode_actions(session: Session | None, actions: list[dict[str, Any]]) -> None:
    if session is None:
        return
    for action in actions:
        if action.get("type") == "enable_plan_mode":
            session.plan_mode = True
        elif action.get("type") == "disable_plan_mode":
            session.plan_mode = False


async def run_actions(
    ctx: ServiceContext,
    uow: UnitOfWork,
    task: Task,
    session: Session | None,
    actions: list[dict[str, Any]],
    *,
    trigger: str,
    details: dict[str, Any] | None = None,
) -> WorkflowStep | None:
    """Mode actions, then the first move; returns the step moved to."""
    apply_mode_actions(session, actions)
    target = await move_target(uow, task, actions)
    if target is not None and target.id != task.workflow_step_id:
        try:
            await move_task(ctx, uow, task, target, trigger=trigger, details=details)
        except AutopilotNeedsMcpError as refused:
            # No caller to answer: the task stays on its step and its transcript says why.
            await _note_refused_move(uow, task, session, target, refused)
            return None
        return target
    return None


async def _note_refused_move(
    uow: UnitOfWork, task: Task, session: Session | None, target: WorkflowStep, refused: AutopilotNeedsMcpError
) -> None:
    if session is None:
        sessions = await task_sessions(uow.db, task.id)
        session = sessions[0] if sessions else None
    if session is None:
        return
    await append_message(
        uow,
        session,
        MessageKind.SYSTEM,
        f"The task did not move to '{target.name}': its agent would start there, but {refused.message}.",
        data={"refused_move": {"to_step_id": target.id, "code": refused.code}},
    )


async def current_turn_question_pending(uow: UnitOfWork, session: Session) -> bool:
    """The hard-pause barrier: a pending clarification raised in the session's newest turn, or a
    pending question to the parent (the child waits for it whatever turn asked)."""
    asked_parent = await uow.db.scalar(
        select(ParentQuestion.id).where(
            ParentQuestion.child_session_id == session.id, ParentQuestion.state == "PENDING"
        )
    )
    if asked_parent is not None:
        return True
    newest = await uow.db.scalar(
        select(Turn.id).where(Turn.session_id == session.id).order_by(Turn.seq.desc()).limit(1)
    )
    if newest is None:
        return False
    pending = await uow.db.scalar(
        select(Clarification.id).where(
            Clarification.session_id == session.id,
            Clarification.turn_id == newest,
            Clarification.state == "PENDING",
        )
    )
    return pending is not None


def valid_signal(session: Session, step_id: str) -> dict[str, Any] | None:
    """The pending signal if it is for `step_id`; a stale one (another step) is dropped."""
    signal = session.pending_signal
    if signal and signal.get("step_id") != step_id:
        session.pending_signal = None
        return None
    return signal


async def on_turn_started(ctx: ServiceContext, uow: UnitOfWork, session: Session, task: Task, source: str) -> None:
    if source in CONTINUATION_SOURCES:
        return
    step = await uow.db.get(WorkflowStep, task.workflow_step_id)
    if step is not None:
        await run_actions(
            ctx,
            uow,
            task,
            session,
            actions_of(step, "on_turn_start"),
            trigger=TransitionTrigger.ON_TURN_START,
        )


async def on_turn_completed(
    ctx: ServiceContext, uow: UnitOfWork, session: Session, task: Task, turn: Turn | None = None
) -> None:
    """After a turn ended normally: gated steps wait for a signal, others run on_turn_complete."""
    step = await uow.db.get(WorkflowStep, task.workflow_step_id)
    if step is None or await current_turn_question_pending(uow, session):
        return
    signal = valid_signal(session, step.id)
    if step.auto_advance_requires_signal:
        if turn is not None and turn.step_id is not None and turn.step_id != step.id:
            return  # the task was moved during the turn: this turn did no work on the step it is on now
        if signal is None:
            session.completion_pending = True
            emit_task_event(uow, "UPDATED", task)  # pendingAction is now COMPLETION_PENDING
            pending_changed(uow, task.id)
            return
        await consume_signal(ctx, uow, session, task, step, signal)
        return
    await run_actions(
        ctx, uow, task, session, actions_of(step, "on_turn_complete"), trigger=TransitionTrigger.AUTO_COMPLETE
    )


async def consume_signal(
    ctx: ServiceContext,
    uow: UnitOfWork,
    session: Session,
    task: Task,
    step: WorkflowStep,
    signal: dict[str, Any],
) -> None:
    """Run the step's turn-complete actions on a matching signal, recording it on the transition."""
    session.pending_signal = None
    if session.completion_pending:
        session.completion_pending = False
        pending_changed(uow, task.id)
    session.updated_at = utcnow()
    source = signal.get("source", "agent")
    summary = signal.get("summary", "")
    label = "the agent" if source == "agent" else "the operator"
    await append_message(
        uow,
        session,
        MessageKind.SYSTEM,
        f"Step '{step.name}' marked complete by {label}: {summary}".rstrip(": "),
        data={
            "step_completion": {
                "step_id": step.id,
                "source": source,
                "summary": summary,
                "handoff": signal.get("handoff"),
                "blockers": signal.get("blockers"),
            }
        },
    )
    details = {"signal_source": source, "signal_summary": summary}
    if signal.get("handoff"):
        details["signal_handoff"] = signal["handoff"]  # the next step's agent gets it in its context
    moved = await run_actions(
        ctx,
        uow,
        task,
        session,
        actions_of(step, "on_turn_complete"),
        trigger=TransitionTrigger.AUTO_COMPLETE,
        details=details,
    )
    if moved is None:
        emit_task_event(uow, "UPDATED", task)
    emit_session_event(uow, "STATE_CHANGED", session)


async def change_task_state(ctx: ServiceContext, uow: UnitOfWork, task: Task, state: TaskState) -> None:
    """The one path of a task's state change: the taskEvents update, then what depends on the state."""
    if task.state == state:
        return
    task.state = state
    task.updated_at = utcnow()
    emit_task_event(uow, "UPDATED", task)
    if state == TaskState.REVIEW:
        await ctx.publish(uow, TaskReachedReview(task.id, f"review:{task.id}:{new_id()}"))
    await after_task_state_change(ctx, uow, task)


async def after_task_state_change(ctx: ServiceContext, uow: UnitOfWork, task: Task) -> None:
    """Tasks waiting on this one re-check their gate; and when a child reaches a terminal state and all
    its siblings have too, the parent's step may move."""
    await after_predecessor_changed(ctx, uow, task)
    if task.state == TaskState.CANCELLED:
        await parent_gone(ctx, uow, task.id, "the parent task was cancelled")
    if task.parent_id is None or task.state not in TERMINAL_TASK_STATES:
        return
    parent = await uow.db.get(Task, task.parent_id)
    if parent is None or parent.deleted_at is not None:
        return
    children = list(await uow.db.scalars(select(Task).where(Task.parent_id == parent.id, Task.deleted_at.is_(None))))
    if not children or any(c.state not in TERMINAL_TASK_STATES for c in children):
        return
    step = await uow.db.get(WorkflowStep, parent.workflow_step_id)
    if step is None:
        return
    outcomes = {c.id: c.state for c in children}
    await run_actions(
        ctx,
        uow,
        parent,
        None,
        actions_of(step, "on_children_completed"),
        trigger=TransitionTrigger.CHILDREN_COMPLETED,
        details={"children": outcomes},
    )
