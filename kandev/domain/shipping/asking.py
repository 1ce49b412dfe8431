"""Agents ship under their profile's permission policy: ALLOW goes ahead, DENY is refused, ASK records a permission
request a person answers (as for the agent's own tool calls) while the tool call waits, at most ASK_SECONDS. A
request the person allowed stays allowed for the same call (same session, tool and arguments), so an agent that
calls again after the wait ran out is not asked twice."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
from typing import Any

from sqlalchemy import select

from kandev.domain.automations.pending import pending_changed
from kandev.domain.context import ServiceContext
from kandev.domain.errors import ConflictError, PermissionDeniedError
from kandev.domain.sessions.permissions import CANCELLED, PENDING, RESOLVED, permission_channel
from kandev.domain.workflow.transitions import emit_task_event
from kandev.models import AgentProfile, PermissionRequest, Session, Task, Turn
from kandev.models.base import new_id, utcnow
from kandev.models.enums import PermissionPolicy

ASK_SECONDS = 600.0
ALLOW, REJECT = "allow", "reject"
OPTIONS = [
    {"option_id": ALLOW, "name": "Allow", "kind": "allow_once"},
    {"option_id": REJECT, "name": "Reject", "kind": "reject_once"},
]
# Marks a request whose asker waits inside its tool call: answering it wakes that call, nothing else.
WAITS_IN_CALL = "waits_in_call"


def call_identity(session_id: str, tool: str, arguments: dict[str, Any]) -> str:
    canonical = json.dumps([session_id, tool, arguments], sort_keys=True, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


async def agent_may(ctx: ServiceContext, tool: str, title: str, arguments: dict[str, Any]) -> None:
    """Return once the calling agent may do this; PermissionDeniedError when its policy or a person says no,
    ConflictError (reason waiting_for_permission) when nobody answered in time."""
    session_id = ctx.principal.session_id
    if session_id is None:
        return
    identity = call_identity(session_id, tool, arguments)
    async with ctx.unit_of_work() as uow:
        session = await uow.db.get(Session, session_id)
        assert session is not None
        profile = await uow.db.get(AgentProfile, session.agent_profile_id) if session.agent_profile_id else None
        policy = profile.permission_policy if profile is not None else PermissionPolicy.ASK
        if policy == PermissionPolicy.ALLOW:
            return
        if policy == PermissionPolicy.DENY:
            raise PermissionDeniedError(f"the agent's profile does not allow it to {title.lower()}", reason="policy")
        found = await uow.db.scalar(
            select(PermissionRequest)
            .where(
                PermissionRequest.session_id == session_id,
                PermissionRequest.tool_call["identity"].as_string() == identity,
                PermissionRequest.state != CANCELLED,
            )
            .order_by(PermissionRequest.created_at.desc())
            .limit(1)
        )
        if found is not None and found.state == RESOLVED and found.chosen_option_id != ALLOW:
            found = None  # refused before: ask again
        if found is None:
            turn_id = await uow.db.scalar(
                select(Turn.id).where(Turn.session_id == session_id).order_by(Turn.seq.desc()).limit(1)
            )
            found = PermissionRequest(
                id=new_id(),
                session_id=session_id,
                task_id=session.task_id,
                turn_id=turn_id,
                title=title,
                tool_call={"tool": tool, "arguments": arguments, "identity": identity, WAITS_IN_CALL: True},
                options=OPTIONS,
                state=PENDING,
                created_at=utcnow(),
            )
            uow.db.add(found)
            task = await uow.db.get(Task, session.task_id)
            assert task is not None
            task.updated_at = utcnow()
            emit_task_event(uow, "UPDATED", task)  # pendingAction is now PERMISSION
            pending_changed(uow, task.id)
        request_id = found.id
    chosen = await _answer(ctx, request_id)
    if chosen is None:
        raise ConflictError(
            f"nobody allowed it within {ASK_SECONDS:g} s; the request stays open: call again once a person allowed it",
            reason="waiting_for_permission",
            permission_request_id=request_id,
        )
    if chosen != ALLOW:
        raise PermissionDeniedError("a person refused it", reason="refused", permission_request_id=request_id)


async def _answer(ctx: ServiceContext, request_id: str, poll_seconds: float = 1.0) -> str | None:
    """The option chosen, or None when nobody answered within ASK_SECONDS (or it was cancelled)."""
    async with ctx.bus.subscribe(permission_channel(request_id)) as events:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(ASK_SECONDS):
                while True:
                    async with ctx.read() as db:
                        row = await db.get(PermissionRequest, request_id)
                    if row is None or row.state == CANCELLED:
                        return None
                    if row.state == RESOLVED:
                        return row.chosen_option_id
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(poll_seconds):
                            await anext(events)
    return None
