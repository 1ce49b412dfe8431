"""Which OS identity a user's agents run as: none (the server's own), one shared account (KANDEV_AGENT_USER, for a
server with one Kandev user), or a numeric id of their own from KANDEV_AGENT_UIDS, given on first need, recorded
and never given to anyone else."""

from __future__ import annotations

import pwd

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.errors import ConflictError
from kandev.models import AgentIdentity, Task, User, Workspace
from kandev.platform.agent_host import AgentUser, AgentUserError, numeric_identity, resolve_agent_user
from kandev.platform.settings import Settings

SHARED_AGENT_USER = (
    "KANDEV_AGENT_USER runs every Kandev user's agents as one OS user, so one user's agent could read another's: "
    "with auth on and more than one user, set KANDEV_AGENT_UIDS to a range of unused numeric ids "
    "(e.g. 61000-61999) instead, and unset KANDEV_AGENT_USER"
)
_ALLOCATION_TRIES = 5


async def task_agent_identity(db: AsyncSession, settings: Settings, task: Task) -> AgentUser | None:
    """The identity the task's agents run as: its workspace owner's."""
    owner_id = await db.scalar(select(Workspace.owner_id).where(Workspace.id == task.workspace_id))
    assert owner_id is not None
    return await agent_identity(db, settings, owner_id)


async def workspace_agent_identity(db: AsyncSession, settings: Settings, workspace_id: str) -> AgentUser | None:
    owner_id = await db.scalar(select(Workspace.owner_id).where(Workspace.id == workspace_id))
    assert owner_id is not None
    return await agent_identity(db, settings, owner_id)


async def agent_identity(db: AsyncSession, settings: Settings, user_id: str) -> AgentUser | None:
    """The identity `user_id`'s agents run as, or None for the server's own; ConflictError saying what to set
    when the configured one can't be used."""
    ids = settings.agent_uid_range
    if ids is not None:
        return numeric_identity(await _allocated_uid(db, user_id, ids), settings.work_path)
    if not settings.agent_user:
        return None
    if settings.auth == "on" and (await db.scalar(select(func.count()).select_from(User)) or 0) > 1:
        raise ConflictError(SHARED_AGENT_USER)
    try:
        return resolve_agent_user(settings.agent_user)
    except AgentUserError as error:
        raise ConflictError(str(error)) from None


async def _allocated_uid(db: AsyncSession, user_id: str, ids: range) -> int:
    for _ in range(_ALLOCATION_TRIES):
        found = await db.scalar(select(AgentIdentity.uid).where(AgentIdentity.user_id == user_id))
        if found is not None:
            return found
        taken = set(
            await db.scalars(
                select(AgentIdentity.uid).where(AgentIdentity.uid >= ids.start, AgentIdentity.uid < ids.stop)
            )
        )
        uid = next((uid for uid in ids if uid not in taken and not _has_account(uid)), None)
        if uid is None:
            raise ConflictError(
                f"KANDEV_AGENT_UIDS {ids.start}-{ids.stop - 1} has no id left for another user: widen the range"
            )
        try:
            async with db.begin_nested():
                db.add(AgentIdentity(uid=uid, user_id=user_id))
        except IntegrityError:
            continue  # another process gave that id, or this user an id, at the same time: look again
        return uid
    raise ConflictError("no agent identity could be given: too many at once, try again")


def _has_account(uid: int) -> bool:
    """An id an account of this machine took since start-up: never an agent's."""
    try:
        pwd.getpwuid(uid)
    except KeyError:
        return False
    return True
