"""The one writer of step moves: history, COMPLETED task and sessions on the final step, events, on-enter."""

from __future__ import annotations

from typing import Any

from kandev.domain.automations.pending import pending_changed
from kandev.domain.context import ServiceContext, UnitOfWork
from kandev.domain.records import TaskRecord
from kandev.domain.sessions.prompts import is_terminal, task_sessions
from kandev.domain.sessions.transcript import append_message, emit_session_event
from kandev.models import StepTransition, Task, WorkflowStep
from kandev.models.base import utcnow
from kandev.models.enums import HIDDEN_ORIGINS, MessageKind, TaskState
from kandev.platform.event_bus import TaskEventPayload, task_channel

AUTO_START_AGENT = "auto_start_agent"


def emit_task_event(
    uow: UnitOfWork,
    kind: str,
    task: Task,
    *,
    changed_files: list[dict[str, str]] | None = None,
    review_thread: dict[str, Any] | None = None,
) -> None:
    """Queue a taskEvents payload (published after commit) carrying the task's sidebar row (and what a CHANGES or
    REVIEW_THREAD event is about); a hidden task (an automation run's, told by automationEvents; an authoring
    chat's) has none."""
    if task.origin in HIDDEN_ORIGINS:
        return
    payload = TaskEventPayload(kind=kind, task=TaskRecord.of(task).to_json())
    if changed_files is not None:
        payload["changed_files"] = changed_files
    if review_thread is not None:
        payload["review_thread"] = review_thread
    uow.emit(task_channel(task.workspace_id), payload)


def auto_start_action(step: WorkflowStep) -> dict[str, Any] | None:
    return next((a for a in (step.events or {}).get("on_enter", []) if a.get("type") == AUTO_START_AGENT), None)


async def move_task(
    ctx: ServiceContext,
    uow: UnitOfWork,
    task: Task,
    to_step: WorkflowStep,
    *,
    trigger: str,
    prompt_override: str | None = None,
    agent_profile_id: str | None = None,
    details: dict[str, Any] | None = None,
    step_actions: bool = True,
) -> StepTransition:
    """Put `task` on `to_step`, write history, then run the step's on-enter actions.

    `prompt_override` replaces the auto-start prompt (startTask's prompt): one turn, never two.
    `step_actions` False moves without the steps' event actions (no auto-start, no on-exit/on-enter modes):
    a relocation, not a step change the workflow reacts to. The final step still completes the task.
    """
    action = auto_start_action(to_step) if step_actions else None
    if action is not None:
        # Refused before anything moves: an auto-start that can't run leaves the task where it is.
        await ctx.hooks.check_start(uow, task, agent_profile_id)
    transition = StepTransition(
        task_id=task.id,
        from_step_id=task.workflow_step_id,
        to_step_id=to_step.id,
        trigger=trigger,
        actor=ctx.principal.actor,
        details=details or {},
        created_at=utcnow(),
    )
    uow.db.add(transition)
    from_step = await uow.db.get(WorkflowStep, task.workflow_step_id)
    was_final = task.state == TaskState.COMPLETED
    task.workflow_step_id = to_step.id
    if to_step.is_final_step:
        task.state = TaskState.COMPLETED
    elif was_final:
        task.state = TaskState.TODO  # leaving the final step re-opens the task
    task.updated_at = utcnow()
    await _clear_completion_state(uow, task)
    if to_step.is_final_step:
        # The task's sessions end with it: running turns are cancelled, then the sessions COMPLETED.
        await ctx.hooks.complete_task_sessions(ctx, uow, task, to_step)
    emit_task_event(uow, "MOVED", task)
    if task.state == TaskState.COMPLETED:
        await ctx.hooks.after_task_state_change(ctx, uow, task)
    if action is not None:
        prompt = prompt_override or action.get("prompt") or to_step.prompt or task.prompt or task.title
        # A prompt someone gave (startTask, a create with a prompt) is theirs; otherwise it is the step's.
        source = "user" if prompt_override else "step"
        await ctx.hooks.start_agent(ctx, uow, task, prompt, source=source, agent_profile_id=agent_profile_id)
    # After the auto-start, so a session it opened gets the step's modes too.
    if step_actions:
        await _step_mode_actions(uow, task, from_step, to_step)
    return transition


async def _clear_completion_state(uow: UnitOfWork, task: Task) -> None:
    """Completion pending and a stored signal belong to the step they were raised on: every move drops them."""
    for session in await task_sessions(uow.db, task.id):
        if session.completion_pending or session.pending_signal is not None:
            if session.completion_pending:
                pending_changed(uow, task.id)
            session.completion_pending = False
            session.pending_signal = None
            session.updated_at = utcnow()
            emit_session_event(uow, "STATE_CHANGED", session)


async def _step_mode_actions(
    uow: UnitOfWork, task: Task, from_step: WorkflowStep | None, to_step: WorkflowStep
) -> None:
    """on_exit / on_enter mode actions on the task's live session; a context reset starts a new ACP session."""
    exit_actions = list((from_step.events or {}).get("on_exit", [])) if from_step else []
    enter_actions = list((to_step.events or {}).get("on_enter", []))
    if not exit_actions and not enter_actions:
        return
    live = [s for s in await task_sessions(uow.db, task.id) if not is_terminal(s)]
    if not live:
        return
    session = live[0]
    for action in [*exit_actions, *enter_actions]:
        kind = action.get("type")
        if kind == "enable_plan_mode":
            session.plan_mode = True
        elif kind == "disable_plan_mode":
            session.plan_mode = False
        elif kind == "reset_agent_context":
            session.acp_session_id = None
            # The marker also bounds the history a resume synthesizes: nothing before it.
            await append_message(
                uow,
                session,
                MessageKind.SYSTEM,
                f"Agent context reset on entering '{to_step.name}'.",
                data={"context_reset": True},
            )
