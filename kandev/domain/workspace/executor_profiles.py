"""Executor profiles (where an agent works: a worktree, the repository itself, a scratch directory, a sandbox or a
Docker container, with the settings of the box kinds).

Choosing where code runs is the machine's business: creating, changing and deleting executor profiles is
for admins only, in a workspace or server-wide (no workspace: listed in every workspace and usable by its
tasks). Everyone lists their workspaces' executor profiles and the server-wide ones."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.context import ServiceContext, ensure_admin
from kandev.domain.errors import ConflictError, NotFoundError
from kandev.domain.scope import load_workspace
from kandev.domain.validation import clean_name
from kandev.domain.workspace.agent_profiles import ensure_unique_server_wide
from kandev.domain.workspace.executor_config import BOX_KINDS, check_config, required_capabilities
from kandev.models import ExecutorProfile, Workspace
from kandev.models.base import new_id
from kandev.models.enums import ExecutorKind
from kandev.platform.job_queues import live_capabilities_of, missing_capabilities

_WRITE = "create, change or delete executor profiles"


class ExecutorProfileService:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx
        self._live: dict[str, frozenset[str]] | None = None

    async def unavailable_reason(self, profile: ExecutorProfile) -> str | None:
        """Why no live worker can run the profile now (the capabilities none offers), None when one can; live
        workers are read once per request."""
        needed = frozenset(required_capabilities(profile.kind, profile.config))
        if not needed:
            return None
        if self._live is None:
            self._live = await live_capabilities_of(self.ctx.bus.redis)
        missing = missing_capabilities(needed, self._live)
        return f"no live worker offers {', '.join(missing)}" if missing else None

    async def test(self, profile_id: str) -> dict[str, Any]:
        """Start and stop a box of the profile on a worker able to run it; what it found ({ok, worker, findings,
        error}). Admins only: it runs what the profile says."""
        ensure_admin(self.ctx.principal, "test executor profiles")
        async with self.ctx.read() as db:
            profile = await self._load(db, profile_id)
            if profile.kind not in BOX_KINDS:
                raise ConflictError("only SANDBOX and DOCKER profiles make boxes to test", field="executor_profile_id")
            needed = frozenset(required_capabilities(profile.kind, profile.config))
        return await self.ctx.jobs.test_executor(profile_id, needed)

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

    async def create(
        self, workspace_id: str | None, name: str, kind: ExecutorKind, config: Mapping[str, Any] | None = None
    ) -> ExecutorProfile:
        """A profile of the workspace, or a server-wide one (workspace_id None), with its settings checked for
        its kind (kandev.domain.workspace.executor_config)."""
        ensure_admin(self.ctx.principal, _WRITE)
        name = clean_name(name, "name")
        stored = check_config(self.ctx.settings, kind, config or {}).stored()
        try:
            async with self.ctx.unit_of_work() as uow:
                if workspace_id is None:
                    await ensure_unique_server_wide(uow.db, ExecutorProfile, name)
                else:
                    await load_workspace(uow.db, self.ctx.principal, workspace_id)
                profile = ExecutorProfile(
                    id=new_id(), workspace_id=workspace_id, name=name, kind=kind, config=stored, builtin=False
                )
                uow.db.add(profile)
                await uow.db.flush()
                return profile
        except IntegrityError:
            raise ConflictError("an executor profile with this name already exists", field="name") from None

    async def update(
        self,
        profile_id: str,
        *,
        name: str | None = None,
        kind: ExecutorKind | None = None,
        config: Mapping[str, Any] | None = None,
    ) -> ExecutorProfile:
        """Only what is given changes; `config` holds the settings to change (the others are kept), checked with
        the rest for the profile's (new) kind."""
        ensure_admin(self.ctx.principal, _WRITE)
        new_name = None if name is None else clean_name(name, "name")
        try:
            async with self.ctx.unit_of_work() as uow:
                profile = await self._load(uow.db, profile_id)
                if new_name is not None:
                    if profile.workspace_id is None:
                        await ensure_unique_server_wide(uow.db, ExecutorProfile, new_name, profile.id)
                    profile.name = new_name
                if kind is not None or config is not None:
                    new_kind = ExecutorKind(kind or profile.kind)
                    kept = {} if kind is not None and kind != profile.kind else dict(profile.config or {})
                    profile.config = check_config(self.ctx.settings, new_kind, {**kept, **(config or {})}).stored()
                    profile.kind = new_kind
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
