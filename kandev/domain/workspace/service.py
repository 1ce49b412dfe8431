"""Workspaces: listing and finding what the caller may see and creating a ready-to-use workspace."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.access.scope import (
    load_workspace,
    sees_workspace,
    visible_workspaces,
    visible_workspaces_in_order,
)
from kandev.domain.automations.profile_checks import default_changed, default_text
from kandev.domain.context import ServiceContext
from kandev.domain.errors import NotFoundError, PermissionDeniedError, ValidationError
from kandev.domain.quotas import check_workspaces
from kandev.domain.validation import clean_name
from kandev.domain.workflow.service import DEFAULT_KANBAN_STEPS, DEFAULT_WORKFLOW_NAME, add_workflow
from kandev.domain.workspace.agent_profiles import add_builtin_profiles, usable_in
from kandev.models import AgentProfile, Workspace
from kandev.models.base import new_id, utcnow

DEFAULT_SETTINGS = {"agent_generated_titles": True}
# A task whose pull requests are all merged moves to its workflow's final step (kandev.domain.shipping.requests).
MERGED_TO_FINAL_STEP = "move_merged_to_final_step"


async def add_workspace(db: AsyncSession, owner_id: str, name: str) -> Workspace:
    """Stage a workspace with the default Kanban workflow and the built-in profiles."""
    workspace = Workspace(id=new_id(), name=name, owner_id=owner_id, settings=dict(DEFAULT_SETTINGS))
    db.add(workspace)
    await db.flush()
    workflow = add_workflow(db, workspace.id, DEFAULT_WORKFLOW_NAME, DEFAULT_KANBAN_STEPS)
    agent, executor = add_builtin_profiles(db, workspace.id)
    workspace.default_workflow_id = workflow.id
    workspace.default_agent_profile_id = agent.id
    workspace.default_executor_profile_id = executor.id
    await db.flush()
    return workspace


class WorkspaceService:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    async def list(self) -> list[Workspace]:
        async with self.ctx.read() as db:
            return list(await db.scalars(visible_workspaces_in_order(self.ctx.principal)))

    async def get(self, workspace_id: str) -> Workspace:
        async with self.ctx.read() as db:
            return await load_workspace(db, self.ctx.principal, workspace_id)

    async def find(self, reference: str) -> Workspace:
        """A workspace the caller sees, by id or else by its name; a name several of them share is refused
        with their ids, so the caller can pick one."""
        async with self.ctx.read() as db:
            found = await db.get(Workspace, reference)
            if found is not None and sees_workspace(self.ctx.principal, found):
                return found
            named = list(
                await db.scalars(
                    visible_workspaces(self.ctx.principal)
                    .where(Workspace.name == reference)
                    .order_by(Workspace.created_at, Workspace.id)
                )
            )
        if not named:
            raise NotFoundError("workspace", reference)
        if len(named) > 1:
            ids = ", ".join(w.id for w in named)
            message = f"{len(named)} workspaces have this name; give the id of one: {ids}"
            raise ValidationError(message, field="workspace")
        return named[0]

    async def create(self, name: str) -> Workspace:
        """A new workspace of the caller's, ready to use: the default workflow and the built-in profiles."""
        name = clean_name(name, "name")
        if not self.ctx.principal.user_id:
            raise PermissionDeniedError("only a signed-in user can own a workspace")
        if self.ctx.principal.workspace_id is not None:
            # An agent session acts only within its task's workspace; a new one would be outside it.
            raise PermissionDeniedError("an agent session cannot create workspaces")
        async with self.ctx.unit_of_work() as uow:
            await check_workspaces(uow.db, self.ctx, self.ctx.principal.user_id)
            return await add_workspace(uow.db, self.ctx.principal.user_id, name)

    async def update(
        self,
        workspace_id: str,
        *,
        name: str | None = None,
        default_agent_profile_id: str | None = None,
        move_merged_to_final_step: bool | None = None,
    ) -> Workspace:
        """Change the given fields of a workspace the caller may see (another user's is not found). A new default
        agent profile re-acks the automations that follow it (those naming no profile)."""
        new_name = None if name is None else clean_name(name, "name")
        async with self.ctx.unit_of_work() as uow:
            workspace = await load_workspace(uow.db, self.ctx.principal, workspace_id)
            if new_name is not None and new_name != workspace.name:
                workspace.name = new_name
                workspace.updated_at = utcnow()
            wanted = default_agent_profile_id
            if wanted is not None and wanted != workspace.default_agent_profile_id:
                profile = await uow.db.get(AgentProfile, wanted)
                if profile is None or not usable_in(profile.workspace_id, workspace.id):
                    raise NotFoundError("agent profile", wanted)
                before = await uow.db.get(AgentProfile, workspace.default_agent_profile_id or "")
                workspace.default_agent_profile_id = profile.id
                workspace.updated_at = utcnow()
                await default_changed(
                    uow, self.ctx, workspace.id, default_text(before.name if before else None, profile.name)
                )
            if move_merged_to_final_step is not None:
                workspace.settings = {**(workspace.settings or {}), MERGED_TO_FINAL_STEP: move_merged_to_final_step}
                workspace.updated_at = utcnow()
            await uow.db.flush()
            return workspace
