"""Starting an agent on a task: pick or open its session and queue the first prompt."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from kandev.domain.context import ServiceContext, UnitOfWork
from kandev.domain.sessions.prompts import PromptSpec, enqueue_prompt, is_terminal, open_session, task_sessions
from kandev.domain.sessions.transcript import emit_session_event
from kandev.domain.workflow.service import ordered_steps
from kandev.domain.workflow.transitions import auto_start_action, emit_task_event, move_task
from kandev.domain.workspace.agent_profiles import ensure_autopilot_capable, ensure_available, resolve_agent_profile
from kandev.models import AgentProfile, QueuedPrompt, Session, Task
from kandev.models.base import utcnow
from kandev.models.enums import TaskState, TransitionTrigger


async def check_start(uow: UnitOfWork, task: Task, agent_profile_id: str | None) -> AgentProfile:
    """The profile a start would run with (the live session's, unless an override replaces an unstarted
    one), refused before any write when it can't run here or would downgrade an autopilot task."""
    requested = await resolve_agent_profile(uow.db, task, agent_profile_id)
    profile = requested
    live = [s for s in await task_sessions(uow.db, task.id) if not is_terminal(s)]
    if live and live[0].agent_profile_id != requested.id:
        keeps_own = agent_profile_id is None or live[0].state != "CREATED"
        own = await uow.db.get(AgentProfile, live[0].agent_profile_id) if live[0].agent_profile_id else None
        if keeps_own and own is not None:
            profile = own
    ensure_available(requested)
    ensure_autopilot_capable(task, profile)
    return requested


async def start_agent(
    ctx: ServiceContext,
    uow: UnitOfWork,
    task: Task,
    prompt: str,
    *,
    source: str,
    agent_profile_id: str | None = None,
    sender: dict[str, Any] | None = None,
) -> tuple[Session, QueuedPrompt]:
    """Queue `prompt` on the task's live session (opening one if needed); fails before any row if the
    profile can't run here. `sender` is stored with the prompt (what its transcript message shows)."""
    profile = await check_start(uow, task, agent_profile_id)
    session = await open_session(uow, task, profile.id)
    if agent_profile_id is not None and session.agent_profile_id != profile.id and session.state == "CREATED":
        session.agent_profile_id = profile.id
    queued = await enqueue_prompt(ctx, uow, session, PromptSpec(text=prompt, source=source, sender=sender))
    # Any start consumes a start recorded behind dependencies, so the gate can't fire a second one.
    task.deferred_launch = None
    if task.state not in (TaskState.IN_PROGRESS, TaskState.COMPLETED):
        task.state = TaskState.SCHEDULING
        task.block_reason = None
        task.updated_at = utcnow()
        emit_task_event(uow, "UPDATED", task)
    emit_session_event(uow, "PROMPT_QUEUED", session)
    return session, queued


async def begin_task(
    ctx: ServiceContext, uow: UnitOfWork, task: Task, prompt: str | None, agent_profile_id: str | None
) -> tuple[Session, QueuedPrompt]:
    """startTask's rule: from the start step, move to the first auto-start step and send `prompt`
    instead of that step's own (one turn, never two); elsewhere start the agent where the task is."""
    steps = await ordered_steps(uow.db, task.workflow_id)
    current = next(s for s in steps if s.id == task.workflow_step_id)
    target = next((s for s in steps if auto_start_action(s) is not None), None)
    text = prompt if prompt and prompt.strip() else None
    if current.is_start_step and target is not None and target.id != current.id:
        await move_task(
            ctx,
            uow,
            task,
            target,
            trigger=TransitionTrigger.START_TASK,
            prompt_override=text,
            agent_profile_id=agent_profile_id,
        )
        session = (await task_sessions(uow.db, task.id))[0]
        queued = await uow.db.scalar(
            select(QueuedPrompt).where(QueuedPrompt.session_id == session.id).order_by(QueuedPrompt.seq.desc())
        )
        assert queued is not None
        return session, queued
    body = text or task.prompt or current.prompt or task.title
    return await start_agent(ctx, uow, task, body, source="user", agent_profile_id=agent_profile_id)
