"""Where a session's turns run: the worker capabilities its executor profile needs (a turn goes only to a worker
offering them all), what it waits for while no live worker offers them (the task's pendingAction
WAITING_FOR_WORKER, shown on its card until a capable worker takes the turn), and where its agent was launched
(executor kind, worker, box id), which the transcript and the task page show."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.context import ServiceContext
from kandev.domain.feeds import emit_task_event
from kandev.domain.session_rows import is_terminal
from kandev.domain.sessions.job_labels import describe_turn
from kandev.domain.sessions.transcript import append_message
from kandev.domain.workspace.executor_config import required_capabilities
from kandev.models import ExecutorProfile, Session, Task
from kandev.models.base import utcnow
from kandev.models.enums import MessageKind

_KIND_NAMES = {"sandbox": "a sandbox", "docker": "a Docker container"}


@dataclass(frozen=True)
class TurnRoute:
    """What dispatching a session's turn needs: the job's label, the capabilities, what it waits for now."""

    description: str
    capabilities: frozenset[str]
    waiting_for: tuple[str, ...]


async def turn_route(db: AsyncSession, session_id: str) -> TurnRoute | None:
    """One statement: the session's task, its executor's needs and its current wait; None when it is gone."""
    row = (
        await db.execute(
            select(Task.id, Task.title, ExecutorProfile.kind, ExecutorProfile.config, Session.waiting_for)
            .join(Session, Session.task_id == Task.id)
            .outerjoin(ExecutorProfile, ExecutorProfile.id == Session.executor_profile_id)
            .where(Session.id == session_id)
        )
    ).first()
    if row is None:
        return None
    needed = frozenset(required_capabilities(row.kind, row.config)) if row.kind else frozenset()
    return TurnRoute(describe_turn(session_id, row.id, row.title), needed, tuple(row.waiting_for or ()))


async def record_waiting(ctx: ServiceContext, session_id: str, missing: list[str]) -> None:
    """The capabilities the session's queued turn waits for ([]: none); the task's card hears of a change."""
    async with ctx.unit_of_work() as uow:
        session = await uow.db.get(Session, session_id)
        if session is None or is_terminal(session) or list(session.waiting_for or []) == missing:
            return
        session.waiting_for = missing
        session.updated_at = utcnow()
        await _announce(uow, session.task_id)


async def clear_waiting(uow: Any, session: Session) -> None:
    """A worker took the session's turn: it waits for nothing any more."""
    if session.waiting_for:
        session.waiting_for = []
        await _announce(uow, session.task_id)


async def _announce(uow: Any, task_id: str) -> None:
    uow.note_pending_action(task_id)
    task = await uow.db.get(Task, task_id)
    if task is not None:
        emit_task_event(uow, "UPDATED", task)


async def record_placement(ctx: ServiceContext, session_id: str, kind: str, worker: str, box_id: str) -> None:
    """Where the session's agent now runs; a box says so in the transcript (executor, worker, box id)."""
    placement = {"kind": kind, "worker": worker, "box": box_id}
    async with ctx.unit_of_work() as uow:
        session = await uow.db.get(Session, session_id)
        if session is None or session.placement == placement:
            return
        session.placement = placement
        session.updated_at = utcnow()
        if kind in _KIND_NAMES:
            text = f"The agent runs in {_KIND_NAMES[kind]} ({box_id[:12]}) on worker {worker}."
            await append_message(uow, session, MessageKind.SYSTEM, text, data={"placement": placement})
        task = await uow.db.get(Task, session.task_id)
        if task is not None:
            emit_task_event(uow, "UPDATED", task)
