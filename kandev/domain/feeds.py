"""The live feeds clients subscribe to (taskEvents, sessionEvents): every aggregate that changes what a task's
row or page, or a session's transcript, shows queues one payload in its unit of work (published after commit)."""

from __future__ import annotations

from typing import Any

from kandev.domain.context import UnitOfWork
from kandev.domain.records import MessageRecord, SessionRecord, TaskRecord, TurnRecord
from kandev.models import Message, Session, Task, Turn
from kandev.models.enums import HIDDEN_ORIGINS
from kandev.platform.event_bus import SessionEventPayload, TaskEventPayload, session_channel, task_channel


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


def emit_session_event(
    uow: UnitOfWork,
    kind: str,
    session: Session,
    *,
    message: Message | None = None,
    turn: Turn | None = None,
) -> None:
    payload = SessionEventPayload(kind=kind, session=SessionRecord.of(session).to_json())
    if message is not None:
        payload["message"] = MessageRecord.of(message).to_json()
    if turn is not None:
        payload["turn"] = TurnRecord.of(turn).to_json()
    uow.emit(session_channel(session.id), payload)
