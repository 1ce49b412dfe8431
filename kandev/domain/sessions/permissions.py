"""Permission requests under the ASK policy: recorded durably, answered by an operator."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from sqlalchemy import select

from kandev.domain.access.scope import load_task, load_workspace
from kandev.domain.automations.pending import pending_changed
from kandev.domain.context import ServiceContext
from kandev.domain.errors import ConflictError, NotFoundError, ValidationError
from kandev.domain.events import TaskNeedsPerson
from kandev.domain.sessions.person_waits import deliver_or_continue
from kandev.domain.sessions.prompts import PromptSpec
from kandev.domain.workflow.transitions import emit_task_event
from kandev.models import PermissionRequest, Session, Task
from kandev.models.base import new_id, utcnow
from kandev.platform.event_bus import Channel, StateChange

PENDING, RESOLVED, CANCELLED = "PENDING", "RESOLVED", "CANCELLED"


def permission_channel(request_id: str) -> Channel[StateChange]:
    return Channel(f"permission:{request_id}")


async def record_request(
    ctx: ServiceContext,
    *,
    session_id: str,
    turn_id: str,
    title: str,
    tool_call: dict[str, Any],
    options: list[dict[str, Any]],
) -> str:
    async with ctx.unit_of_work() as uow:
        session = await uow.db.get(Session, session_id)
        assert session is not None
        request = PermissionRequest(
            id=new_id(),
            session_id=session_id,
            task_id=session.task_id,
            turn_id=turn_id,
            title=title,
            tool_call=tool_call,
            options=options,
            state=PENDING,
            created_at=utcnow(),
        )
        uow.db.add(request)
        task = await uow.db.get(Task, session.task_id)
        assert task is not None
        task.updated_at = utcnow()
        emit_task_event(uow, "UPDATED", task)  # pendingAction is now PERMISSION
        pending_changed(uow, task.id)
        await ctx.publish(uow, TaskNeedsPerson(task.id, f"permission:{request.id}", "permission", title))
        return request.id


async def wait_for_answer(ctx: ServiceContext, request_id: str, poll_seconds: float = 1.0) -> str | None:
    """The chosen option id once an operator answers (None when rejected or cancelled).

    Waits on the event bus and re-reads the row regularly, so a lost nudge only costs a poll.
    """
    async with ctx.bus.subscribe(permission_channel(request_id)) as events:
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


def agent_pending_id(request: PermissionRequest) -> str | None:
    """The agent's own id for what it asks about (the ACP tool call id): the spec's `pending_id`."""
    value = (request.tool_call or {}).get("tool_call_id")
    return str(value) if value else None


async def chosen_option(ctx: ServiceContext, request_id: str) -> str | None:
    """The option an operator chose, or None (rejected, cancelled, or not answered)."""
    async with ctx.read() as db:
        row = await db.get(PermissionRequest, request_id)
    return row.chosen_option_id if row is not None and row.state == RESOLVED else None


class PermissionService:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    async def pending(
        self, workspace_id: str, task_id: str | None = None, session_id: str | None = None
    ) -> list[PermissionRequest]:
        async with self.ctx.read() as db:
            await load_workspace(db, self.ctx.principal, workspace_id)
            query = (
                select(PermissionRequest)
                .join(Task, Task.id == PermissionRequest.task_id)
                .where(
                    Task.workspace_id == workspace_id,
                    PermissionRequest.state == PENDING,
                    Task.deleted_at.is_(None),
                )
                .order_by(PermissionRequest.created_at)
            )
            if task_id is not None:
                query = query.where(PermissionRequest.task_id == task_id)
            if session_id is not None:
                query = query.where(PermissionRequest.session_id == session_id)
            if (own := self.ctx.principal.own_run_task_id) is not None:
                query = query.where(PermissionRequest.task_id != own)  # none it could resolve: left out
            return list(await db.scalars(query))

    async def resolve(
        self,
        request_id: str,
        option_id: str,
        *,
        task_id: str | None = None,
        session_id: str | None = None,
        pending_id: str | None = None,
    ) -> PermissionRequest:
        """Answer a pending request; a task, session or agent-side pending id given must be the request's
        (else not found), so a client that checks all three can't answer a request it did not mean."""
        async with self.ctx.unit_of_work() as uow:
            request = await uow.db.get(PermissionRequest, request_id)
            named_other = request is not None and (
                task_id not in (None, request.task_id)
                or session_id not in (None, request.session_id)
                or pending_id not in (None, agent_pending_id(request))
            )
            if request is None or named_other:
                raise NotFoundError("permission request", request_id)
            try:
                task = await load_task(uow.db, self.ctx.principal, request.task_id)
            except NotFoundError:
                raise NotFoundError("permission request", request_id) from None
            self.ctx.principal.refuse_own_run_task(task.id, "resolve a permission request of")
            if request.state != PENDING:
                raise ConflictError(f"the permission request is already {request.state.lower()}")
            if option_id not in {o.get("option_id") for o in request.options}:
                raise ValidationError("optionId is not one of the request's options", field="optionId")
            request.state = RESOLVED
            request.chosen_option_id = option_id
            request.resolved_by = self.ctx.principal.actor
            request.resolved_at = task.updated_at = utcnow()
            uow.emit(permission_channel(request.id), StateChange(state=RESOLVED))
            emit_task_event(uow, "UPDATED", task)
            pending_changed(uow, task.id)
            if not (request.tool_call or {}).get("waits_in_call"):  # a Kandev tool call waits for it itself
                await deliver_or_continue(
                    self.ctx, uow, request.session_id, request.turn_id, continuation_prompt(request, option_id)
                )
            return request


def continuation_prompt(request: PermissionRequest, option_id: str) -> PromptSpec:
    """The answer as the next prompt, for when the waiting turn could not be woken on its worker."""
    name = next((o.get("name") for o in request.options if o.get("option_id") == option_id), option_id)
    text = (
        f'The user answered your permission request "{request.title}": {name}. The turn that asked was '
        "ended while it waited; continue your work with this answer."
    )
    return PromptSpec(text=text, source="permission_answer", idempotency_key=f"permission:{request.id}")
