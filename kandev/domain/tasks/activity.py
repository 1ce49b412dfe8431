"""What a board card says about a task's agent: who works on it, when it last did something, the gist of
what it last said, whether a person is needed and where the agent runs. Read for a whole page of tasks in one
statement."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any

from sqlalchemy import Select, String, bindparam, cast, exists, func, or_, select

from kandev.domain.context import ServiceContext
from kandev.models import AgentProfile, Clarification, Message, PermissionRequest, Session, Task, Turn
from kandev.models.enums import TERMINAL_SESSION_STATES, MessageKind, TurnState

PREVIEW_CHARS = 140
# Read from the database: enough for a preview line once markup is gone, without shipping whole essays.
_PREVIEW_SOURCE_CHARS = 2000


@dataclass(frozen=True)
class TaskActivity:
    agent_profile_id: str | None
    agent_name: str | None
    last_activity_at: datetime | None
    preview: str | None
    has_run: bool
    last_turn_failed: bool
    needs_answer: bool
    # Where its newest session's agent was launched ({kind, worker, box}), and the worker capabilities a queued
    # turn of a live session waits for.
    placement: dict[str, Any] | None = None
    waiting_for: tuple[str, ...] = ()


NO_ACTIVITY = TaskActivity(None, None, None, None, has_run=False, last_turn_failed=False, needs_answer=False)

_FENCE = re.compile(r"```.*?(```|$)", re.S)
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_TAG = re.compile(r"<[^>]*>")
_MARKS = re.compile(r"(^|\s)(#{1,6}|>|[-*+]|\d+\.)\s+")
_EMPHASIS = re.compile(r"[*_~`]+")
_SPACE = re.compile(r"\s+")


def preview_line(text: str, limit: int = PREVIEW_CHARS) -> str | None:
    """The message as one line of plain text: code blocks, markup and HTML dropped, links reduced to their
    words, cut at a word boundary near `limit` with an ellipsis. None when nothing readable is left."""
    plain = _FENCE.sub(" ", text)
    plain = _LINK.sub(r"\1", plain)
    plain = _TAG.sub(" ", plain)
    plain = _MARKS.sub(r"\1", plain)
    plain = _EMPHASIS.sub("", plain)
    plain = _SPACE.sub(" ", plain).strip()
    if not plain:
        return None
    if len(plain) <= limit:
        return plain
    cut = plain[: limit - 1]
    word_end = cut.rfind(" ")
    if word_end > limit // 2:
        cut = cut[:word_end]
    return cut.rstrip(" ,.;:") + "…"


async def read_activity(ctx: ServiceContext, task_ids: Sequence[str]) -> list[TaskActivity]:
    """Per task id, in order: its card's activity. One statement for the whole batch (a correlated
    subquery per column, each bounded by the task's own sessions). Callers have authorized the tasks."""
    if not task_ids:
        return []
    async with ctx.read() as db:
        rows = (await db.execute(_activity_statement(), {"task_ids": list(task_ids)})).tuples().all()
    found: dict[str, TaskActivity] = {}
    for task_id, ran, agent_id, agent_name, at_session, at_message, said, ended, asking, placed, waiting in rows:
        moments = [m for m in (at_session, at_message) if m is not None]
        found[task_id] = TaskActivity(
            agent_profile_id=agent_id,
            agent_name=agent_name,
            last_activity_at=max(moments) if moments else None,
            preview=preview_line(said) if said else None,
            has_run=bool(ran),
            last_turn_failed=ended == TurnState.FAILED,
            needs_answer=bool(asking),
            placement=placed,
            waiting_for=tuple(waiting or ()),
        )
    return [found.get(i, NO_ACTIVITY) for i in task_ids]


@cache
def _activity_statement() -> Select[Any]:
    """Built once (the ids are an expanding parameter): building it and its cache key took longer than
    running it, once per board page and once per live task event."""
    newest_first = (Session.created_at.desc(), Session.id.desc())
    has_run = exists().where(Session.task_id == Task.id)
    profile_id = (
        select(Session.agent_profile_id).where(Session.task_id == Task.id).order_by(*newest_first).limit(1)
    ).scalar_subquery()
    profile_name = (
        select(AgentProfile.name)
        .select_from(Session)
        .outerjoin(AgentProfile, AgentProfile.id == Session.agent_profile_id)
        .where(Session.task_id == Task.id)
        .order_by(*newest_first)
        .limit(1)
        .scalar_subquery()
    )
    session_at = select(func.max(Session.updated_at)).where(Session.task_id == Task.id).scalar_subquery()
    message_at = (
        select(func.max(Message.created_at))
        .join(Session, Session.id == Message.session_id)
        .where(Session.task_id == Task.id)
        .scalar_subquery()
    )
    last_said = (
        select(func.substr(Message.text, 1, _PREVIEW_SOURCE_CHARS))
        .join(Session, Session.id == Message.session_id)
        .where(Session.task_id == Task.id, Message.kind == MessageKind.AGENT)
        .order_by(Message.created_at.desc(), Message.seq.desc())
        .limit(1)
        .scalar_subquery()
    )
    # The same rule as Task.lastTurnError: the newest turn that ended COMPLETED or FAILED decides.
    last_ended = (
        select(Turn.state)
        .join(Session, Session.id == Turn.session_id)
        .where(
            Session.task_id == Task.id,
            Turn.state.in_([TurnState.COMPLETED, TurnState.FAILED]),
            Turn.ended_at.is_not(None),
        )
        .order_by(Turn.ended_at.desc(), Turn.seq.desc())
        .limit(1)
        .scalar_subquery()
    )
    asks = or_(
        exists().where(Clarification.task_id == Task.id, Clarification.state == "PENDING"),
        exists().where(PermissionRequest.task_id == Task.id, PermissionRequest.state == "PENDING"),
    )
    placement = (
        select(Session.placement).where(Session.task_id == Task.id).order_by(*newest_first).limit(1)
    ).scalar_subquery()
    waiting_for = (
        select(Session.waiting_for)
        .where(
            Session.task_id == Task.id,
            cast(Session.waiting_for, String) != "[]",
            Session.state.not_in([s.value for s in TERMINAL_SESSION_STATES]),
        )
        .order_by(*newest_first)
        .limit(1)
        .scalar_subquery()
    )
    return select(
        Task.id,
        has_run,
        profile_id,
        profile_name,
        session_at,
        message_at,
        last_said,
        last_ended,
        asks,
        placement,
        waiting_for,
    ).where(Task.id.in_(bindparam("task_ids", expanding=True)))
