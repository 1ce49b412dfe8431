"""Starting an agent on a task: pick or open its session and queue the first prompt."""

from __future__ import annotations

from kandev.domain.context import ServiceContext, UnitOfWork
from kandev.domain.profiles import ensure_available, resolve_agent_profile
from kandev.domain.prompts import PromptSpec, enqueue_prompt, open_session
from kandev.domain.transcript import emit_session_event
from kandev.domain.transitions import emit_task_event
from kandev.models import QueuedPrompt, Session, Task
from kandev.models.base import utcnow
from kandev.models.enums import TaskState


async def start_agent(
    ctx: ServiceContext,
    uow: UnitOfWork,
    task: Task,
    prompt: str,
    *,
    source: str,
    agent_profile_id: str | None = None,
) -> tuple[Session, QueuedPrompt]:
    """Queue `prompt` on the task's live session (opening one if needed); fails before any row if the
    profile can't run here."""
    profile = await resolve_agent_profile(uow.session, task, agent_profile_id)
    ensure_available(profile)
    session = await open_session(uow, task, profile.id)
    if agent_profile_id is not None and session.agent_profile_id != profile.id and session.state == "CREATED":
        session.agent_profile_id = profile.id
    queued = await enqueue_prompt(ctx, uow, session, PromptSpec(text=prompt, source=source))
    if task.state not in (TaskState.IN_PROGRESS, TaskState.COMPLETED):
        task.state = TaskState.SCHEDULING
        task.updated_at = utcnow()
        emit_task_event(uow, "UPDATED", task)
    emit_session_event(uow, "PROMPT_QUEUED", session)
    return session, queued
