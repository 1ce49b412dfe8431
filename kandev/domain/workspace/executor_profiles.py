"""Executor profiles (where an agent works: a worktree, the repository itself, a scratch directory).

Choosing where code runs is the machine's business: creating, changing and deleting executor profiles is
for admins only, in a workspace or server-wide (no workspace: listed in every workspace and usable by its
tasks). Everyone lists their workspaces' executor profiles and the server-wide ones."""

from __future__ import annotations

from sqlalchemy import or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.context import ServiceContext, ensure_admin
from kandev.domain.errors import ConflictError, NotFoundError
from kandev.domain.scope import load_workspace
from kandev.domain.validation import clean_name
from kandev.domain.workspace.agent_profiles import ensure_unique_server_wide
from kandev.models import ExecutorProfile, Workspace
from kandev.models.base import new_id
from kandev.models.enums import ExecutorKind

_WRITE = "create, change or delete executor profiles"


class ExecutorProfileService:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    async def list(self, workspace_id: str) -> list[ExecutorProfile]:
        async with self.ctx.read() as db:
            await load_workspace(db, self.ctx.principal, workspace_id)
            rows = await db.scalars(
                select(ExecutorProfile)
                .where(or_(ExecutorProfile.workspace_id == workspace_id, ExecutorProfile.workspace_id.is_(None)))
                .order_by(ExecutorProfile.builtin.desc(), ExecutorProfile.name, ExecutorProfile.id)
            )
            return list(rows)

    async def _load(self, db: AsyncSession, profile_id: str) -> ExecutorProfile:
        profile = await db.get(ExecutorProfile, profile_id)
        if profile is None:
            raise NotFoundError("executor profile", profile_id)
        if profile.workspace_id is not None:
            try:
                await load_workspace(db, self.ctx.principal, profile.workspace_id)
            except NotFoundError:
                raise NotFoundError("executor profile", profile_id) from None
        return profile

    async def create(self, workspace_id: str | None, name: str, kind: ExecutorKind) -> ExecutorProfile:
        """A profile of the workspace, or a server-wide one (workspace_id None)."""
        ensure_admin(self.ctx.principal, _WRITE)
        name = clean_name(name, "name")
        try:
            async with self.ctx.unit_of_work() as uow:
                if workspace_id is None:
                    await ensure_unique_server_wide(uow.db, ExecutorProfile, name)
                else:
                    await load_workspace(uow.db, self.ctx.principal, workspace_id)
                profile = ExecutorProfile(
                    id=new_id(), workspace_id=workspace_id, name=name, kind=kind, config={}, builtin=False
                )
                uow.db.add(profile)
                await uow.db.flush()
                return profile
        except IntegrityError:
            raise ConflictError("an executor profile with this name already exists", field="name") from None

    async def update(
        self, profile_id: str, *, name: str | None = None, kind: ExecutorKind | None = None
    ) -> ExecutorProfile:
        ensure_admin(self.ctx.principal, _WRITE)
        new_name = None if name is None else clean_name(name, "name")
        try:
            async with self.ctx.unit_of_work() as uow:
                profile = await self._load(uow.db, profile_id)
                if new_name is not None:
                    if profile.workspace_id is None:
                        await ensure_unique_server_wide(uow.db, ExecutorProfile, new_name, profile.id)
                    profile.name = new_name
                if kind is not None:
                    profile.kind = kind
                await uow.db.flush()
                return profile
        except IntegrityError:
            raise ConflictError("an executor profile with this name already exists", field="name") from None

    async def delete(self, profile_id: str) -> ExecutorProfile:
        ensure_admin(self.ctx.principal, _WRITE)
        async with self.ctx.unit_of_work() as uow:
            profile = await self._load(uow.db, profile_id)
            defaults = select(Workspace.id).where(Workspace.default_executor_profile_id == profile.id).limit(1)
            if await uow.db.scalar(defaults) is not None:
                raise ConflictError("the workspace's default executor profile can't be deleted")
            await uow.db.delete(profile)
            return profile
