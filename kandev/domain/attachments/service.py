"""Attachments: an upload is kept unbound, visible to its uploader alone, until a createTask or sendMessage of
theirs names it; from then on it belongs to that task (a later message to the same task, an agent's
message_task_kandev included, may name it again) and is deleted with it. Every refusal is typed and leaves
nothing half-stored: a refused reference binds none of the others."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import undefer

from kandev.domain.access.scope import load_task
from kandev.domain.attachments.content import (
    MAX_PER_MESSAGE,
    AttachmentRefused,
    check_size,
    checked_type,
    clean_name,
)
from kandev.domain.context import Principal, ServiceContext
from kandev.domain.errors import NotFoundError, PermissionDeniedError, QuotaExceededError
from kandev.models import Attachment, PromptAttachment, Task
from kandev.models.base import new_id, utcnow

# Uploads nobody referenced: at most this many per person at once, and forgotten after a day.
MAX_UNBOUND = 100
UNBOUND_LIFETIME = timedelta(days=1)
FIELD = "attachmentIds"


@dataclass(frozen=True)
class AttachmentRecord:
    id: str
    name: str
    size: int
    content_type: str
    task_id: str | None
    created_at: datetime

    @classmethod
    def of(cls, row: Attachment) -> AttachmentRecord:
        return cls(row.id, row.name, row.size, row.content_type, row.task_id, row.created_at)

    def summary(self) -> dict[str, Any]:
        """What a transcript message keeps of it (names and sizes, never the bytes)."""
        return {"id": self.id, "name": self.name, "size": self.size, "content_type": self.content_type}


@dataclass(frozen=True)
class AttachmentFile:
    """An attachment with its bytes, as the agent is handed it."""

    record: AttachmentRecord
    data: bytes


class AttachmentService:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    async def upload(self, name: str | None, claimed_type: str | None, data: bytes) -> AttachmentRecord:
        """Store an upload of the caller's (a person's: an agent session has no uploads)."""
        principal = self.ctx.principal
        if principal.session_id is not None:
            raise PermissionDeniedError("an agent session cannot upload attachments", reason="agent_session")
        check_size(len(data))
        content_type = checked_type(data, claimed_type)
        async with self.ctx.unit_of_work() as uow:
            unbound = await uow.db.scalar(
                select(func.count())
                .select_from(Attachment)
                .where(Attachment.owner_id == principal.user_id, Attachment.task_id.is_(None))
            )
            if (unbound or 0) >= MAX_UNBOUND:
                raise QuotaExceededError(
                    f"you have {MAX_UNBOUND} uploads no task or message uses yet; send them or wait a day",
                    quota="unbound_attachments",
                    limit=MAX_UNBOUND,
                )
            row = Attachment(
                id=new_id(),
                owner_id=principal.user_id,
                task_id=None,
                waiting=None,
                name=clean_name(name, content_type),
                content_type=content_type,
                size=len(data),
                sha256=hashlib.sha256(data).hexdigest(),
                data=data,
                created_at=utcnow(),
            )
            uow.db.add(row)
            await uow.db.flush()
            return AttachmentRecord.of(row)

    async def download(self, attachment_id: str) -> AttachmentFile:
        """The bytes, for whoever sees its task (or uploaded it, while unbound); not-found otherwise."""
        async with self.ctx.read() as db:
            row = await db.scalar(
                select(Attachment).where(Attachment.id == attachment_id).options(undefer(Attachment.data))
            )
            if row is None or not await _visible(db, self.ctx.principal, row):
                raise NotFoundError("attachment", attachment_id)
            return AttachmentFile(AttachmentRecord.of(row), row.data)


async def _visible(db: AsyncSession, principal: Principal, row: Attachment) -> bool:
    if row.task_id is None:
        return principal.session_id is None and row.owner_id == principal.user_id
    try:
        await load_task(db, principal, row.task_id)
    except NotFoundError:
        return False
    return True


async def bind(
    db: AsyncSession, principal: Principal, task: Task, ids: list[str], *, waiting: bool = False
) -> list[str]:
    """Give the caller's uploads named by `ids` to `task` (those already its own stay so), in order; refuses
    the lot when one is unknown, someone else's or another task's. `waiting`: they go with the task's first
    prompt, whichever start sends it (createTask)."""
    if not ids:
        return []
    if len(ids) > MAX_PER_MESSAGE:
        raise AttachmentRefused(
            f"at most {MAX_PER_MESSAGE} attachments go with one message", "too_many", FIELD, limit=MAX_PER_MESSAGE
        )
    if len(set(ids)) != len(ids):
        raise AttachmentRefused("an attachment is listed twice", "duplicate", FIELD)
    rows = {row.id: row for row in await db.scalars(select(Attachment).where(Attachment.id.in_(ids)).with_for_update())}
    for index, attachment_id in enumerate(ids):
        row = rows.get(attachment_id)
        field = f"{FIELD}[{index}]"
        if row is not None and row.task_id == task.id:
            continue
        mine = row is not None and row.owner_id == principal.user_id
        if row is None or not mine or principal.session_id is not None and row.task_id is None:
            raise AttachmentRefused("attachment not found", "not_found", field)
        if row.task_id is not None:
            raise AttachmentRefused("the attachment belongs to another task", "other_task", field)
    now = utcnow()
    for position, attachment_id in enumerate(ids):
        row = rows[attachment_id]
        if row.task_id is None:
            row.task_id, row.bound_at, row.waiting = task.id, now, position if waiting else None
    await db.flush()
    return ids


async def link_to_prompt(db: AsyncSession, task_id: str, prompt_id: str, ids: list[str]) -> None:
    """The prompt carries `ids` and whatever waited for the task's first prompt, in that order."""
    waiting = list(
        await db.scalars(
            select(Attachment.id)
            .where(Attachment.task_id == task_id, Attachment.waiting.is_not(None))
            .order_by(Attachment.bound_at, Attachment.waiting)
        )
    )
    carried = list(dict.fromkeys([*waiting, *ids]))
    if not carried:
        return
    if waiting:
        await db.execute(
            update(Attachment)
            .where(Attachment.id.in_(waiting))
            .values(waiting=None)
            .execution_options(synchronize_session=False)
        )
    db.add_all(PromptAttachment(prompt_id=prompt_id, attachment_id=i, position=n) for n, i in enumerate(carried))
    await db.flush()


async def prompt_attachments(db: AsyncSession, prompt_id: str) -> list[AttachmentRecord]:
    """What a prompt carries, in order (an attachment deleted since is left out)."""
    rows = await db.scalars(
        select(Attachment)
        .join(PromptAttachment, PromptAttachment.attachment_id == Attachment.id)
        .where(PromptAttachment.prompt_id == prompt_id)
        .order_by(PromptAttachment.position)
    )
    return [AttachmentRecord.of(row) for row in rows]


async def attachment_files(ctx: ServiceContext, ids: list[str]) -> list[AttachmentFile]:
    """The bytes of these attachments, in order, for the agent (read by the worker, as the system)."""
    if not ids:
        return []
    async with ctx.read() as db:
        rows = {
            row.id: row
            for row in await db.scalars(
                select(Attachment).where(Attachment.id.in_(ids)).options(undefer(Attachment.data))
            )
        }
    return [AttachmentFile(AttachmentRecord.of(rows[i]), rows[i].data) for i in ids if i in rows]


async def delete_task_attachments(db: AsyncSession, task_id: str) -> None:
    """A deleted task's attachments go with it (a soft-deleted task keeps none of their bytes)."""
    await db.execute(delete(Attachment).where(Attachment.task_id == task_id))


async def forget_unbound(ctx: ServiceContext, now: datetime | None = None) -> int:
    """Delete uploads no task took within a day of their upload."""
    cutoff = (now or utcnow()) - UNBOUND_LIFETIME
    async with ctx.unit_of_work() as uow:
        result = await uow.db.execute(
            delete(Attachment).where(Attachment.task_id.is_(None), Attachment.created_at < cutoff)
        )
        return int(getattr(result, "rowcount", 0) or 0)
