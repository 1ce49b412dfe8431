"""What a workspace's code-host connections (GitHub, GitLab) share: forgetting one with its token."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from kandev.domain.context import ServiceContext, UnitOfWork
from kandev.domain.events import CodeHostsChanged
from kandev.models import Secret


async def forget_connection(ctx: ServiceContext, uow: UnitOfWork, model: Any, workspace_id: str) -> bool:
    """Delete the workspace's connection row of `model` and its token secret; False when there was none.
    The hosts that count as providers change with it, so the live sessions' tool lists are recomputed."""
    row = await uow.db.scalar(select(model).where(model.workspace_id == workspace_id))
    if row is None:
        return False
    secret = await uow.db.get(Secret, row.secret_id)
    await uow.db.delete(row)
    if secret is not None:
        await uow.db.delete(secret)
    await uow.db.flush()
    await ctx.publish(uow, CodeHostsChanged(workspace_id))
    return True
