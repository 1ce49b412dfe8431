"""Selecting workspace MCP definitions at a scope. A narrower scope only adds: a definition inherited from the
session's profile, its task's repositories or its task can't be removed at the task or session."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, and_, delete, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.context import ServiceContext, ensure_admin
from kandev.domain.errors import ConflictError, NotFoundError, ValidationError
from kandev.domain.mcp.revisions import effective_servers, refresh_live_sessions, selected_at, session_targets
from kandev.domain.scope import load_session, load_task, load_workspace
from kandev.models import (
    AgentProfile,
    McpServer,
    McpServerSelection,
    Repository,
    Session,
    Task,
    TaskRepository,
    Workspace,
)
from kandev.models.base import new_id
from kandev.models.enums import McpScope


@dataclass
class SessionMcpServers:
    """A session's effective servers now, and the revisions saved (desired) and launched with (applied)."""

    session_id: str
    servers: list[dict[str, Any]]
    desired_revision: int
    applied_revision: int
    applied: list[dict[str, Any]]


class McpSelectionService:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    async def select(self, server_id: str, scope: McpScope, target_id: str) -> McpServer:
        """Select the definition at the scope (again is a no-op); live sessions save a new desired revision."""
        async with self.ctx.unit_of_work() as uow:
            workspace_id = await self._target_workspace(uow.db, scope, target_id)
            server = await self._usable(uow.db, server_id, workspace_id)
            existing = await _selection(uow.db, server_id, scope, target_id)
            if existing is None:
                try:
                    async with uow.db.begin_nested():
                        uow.db.add(
                            McpServerSelection(id=new_id(), mcp_server_id=server_id, scope=scope, target_id=target_id)
                        )
                except IntegrityError:  # selected concurrently: the same outcome
                    pass
                await refresh_live_sessions(uow.db, workspace_id)
            return server

    async def deselect(self, server_id: str, scope: McpScope, target_id: str) -> McpServer:
        """Remove the selection made at exactly this scope; an inherited one is a conflict naming where it is from."""
        async with self.ctx.unit_of_work() as uow:
            workspace_id = await self._target_workspace(uow.db, scope, target_id)
            server = await self._usable(uow.db, server_id, workspace_id)
            existing = await _selection(uow.db, server_id, scope, target_id)
            if existing is None:
                inherited = await _inherited_from(uow.db, server_id, scope, target_id)
                if inherited is not None:
                    raise ConflictError(
                        f"the MCP server is inherited from the {inherited.value.lower()} scope; a narrower scope can "
                        "only add servers, so remove it where it was selected",
                        field="scope",
                        inherited_from=inherited.value,
                        reason="inherited",
                    )
                raise NotFoundError("MCP server selection", server_id)
            await uow.db.delete(existing)
            await uow.db.flush()
            await refresh_live_sessions(uow.db, workspace_id)
            return server

    async def selected(self, scope: McpScope, target_id: str) -> list[McpServer]:
        """The definitions selected at exactly this scope."""
        async with self.ctx.read() as db:
            workspace_id = await self._target_workspace(db, scope, target_id, write=False)
            rows = await db.scalars(
                select(McpServer)
                .join(McpServerSelection, McpServerSelection.mcp_server_id == McpServer.id)
                .where(McpServerSelection.scope == scope, McpServerSelection.target_id == target_id)
                .order_by(McpServer.name)
            )
            return [s for s in rows if workspace_id is None or s.workspace_id in (None, workspace_id)]

    async def for_session(self, session_id: str) -> SessionMcpServers:
        async with self.ctx.read() as db:
            session = await load_session(db, self.ctx.principal, session_id)
            task = await db.get(Task, session.task_id)
            assert task is not None
            return SessionMcpServers(
                session_id=session.id,
                servers=await effective_servers(db, session, task),
                desired_revision=session.mcp_servers_desired_revision,
                applied_revision=session.mcp_servers_applied_revision,
                applied=list(session.mcp_servers_applied or []),
            )

    async def _target_workspace(
        self, db: AsyncSession, scope: McpScope, target_id: str, *, write: bool = True
    ) -> str | None:
        """The workspace of the scope's target, after checking the caller may change it (None: a server-wide
        profile, which only an admin changes)."""
        principal = self.ctx.principal
        if scope == McpScope.PROFILE:
            profile = await db.get(AgentProfile, target_id)
            if profile is None:
                raise NotFoundError("agent profile", target_id)
            if profile.workspace_id is None:
                if write:
                    ensure_admin(principal, "change server-wide agent profiles", field="target_id")
                return None
            try:
                await load_workspace(db, principal, profile.workspace_id)
            except NotFoundError:
                raise NotFoundError("agent profile", target_id) from None
            return profile.workspace_id
        if scope == McpScope.REPOSITORY:
            repository = await db.get(Repository, target_id)
            if repository is None:
                raise NotFoundError("repository", target_id)
            try:
                await load_workspace(db, principal, repository.workspace_id)
            except NotFoundError:
                raise NotFoundError("repository", target_id) from None
            return repository.workspace_id
        if scope == McpScope.TASK:
            return (await load_task(db, principal, target_id)).workspace_id
        if scope == McpScope.SESSION:
            session = await load_session(db, principal, target_id)
            task = await db.get(Task, session.task_id)
            assert task is not None
            return task.workspace_id
        raise ValidationError("unknown scope", field="scope")

    async def _usable(self, db: AsyncSession, server_id: str, workspace_id: str | None) -> McpServer:
        """The definition, usable where the target lives (a server-wide profile takes server-wide ones only)."""
        server = await db.get(McpServer, server_id)
        if server is None or server.workspace_id not in (None, workspace_id):
            raise NotFoundError("MCP server", server_id)
        if server.workspace_id is not None:
            try:
                await load_workspace(db, self.ctx.principal, server.workspace_id)
            except NotFoundError:
                raise NotFoundError("MCP server", server_id) from None
        return server


async def _selection(db: AsyncSession, server_id: str, scope: McpScope, target_id: str) -> McpServerSelection | None:
    return await db.scalar(
        select(McpServerSelection).where(
            McpServerSelection.mcp_server_id == server_id,
            McpServerSelection.scope == scope,
            McpServerSelection.target_id == target_id,
        )
    )


async def _inherited_from(db: AsyncSession, server_id: str, scope: McpScope, target_id: str) -> McpScope | None:
    """The widest scope a task or session inherits the definition from, if any."""
    if scope == McpScope.SESSION:
        session = await db.get(Session, target_id)
        task = await db.get(Task, session.task_id) if session else None
        if session is None or task is None:
            return None
        targets = [t for t in await session_targets(db, session, task) if t[0] != McpScope.SESSION]
        workspace_id = task.workspace_id
    elif scope == McpScope.TASK:
        task = await db.get(Task, target_id)
        if task is None:
            return None
        # The profile the task's sessions run with by default: its own, else the workspace's default.
        workspace = await db.get(Workspace, task.workspace_id)
        profile_id = task.agent_profile_id or (workspace.default_agent_profile_id if workspace else None)
        targets = [(McpScope.PROFILE, profile_id)] if profile_id else []
        repositories = await db.scalars(select(TaskRepository.repository_id).where(TaskRepository.task_id == task.id))
        targets += [(McpScope.REPOSITORY, r) for r in repositories]
        workspace_id = task.workspace_id
    else:
        return None
    scopes = [found for server, found, _ in await selected_at(db, targets, workspace_id) if server.id == server_id]
    return min(scopes, key=list(McpScope).index) if scopes else None


async def forget_task_selections(db: AsyncSession, tasks: ColumnElement[bool]) -> None:
    """Drop the selections made at the tasks matching `tasks` and at their sessions, as those tasks are deleted:
    a scope's target has no foreign key to take them with it."""
    task_ids = select(Task.id).where(tasks)
    session_ids = select(Session.id).where(Session.task_id.in_(task_ids))
    await db.execute(
        delete(McpServerSelection).where(
            or_(
                and_(McpServerSelection.scope == McpScope.TASK, McpServerSelection.target_id.in_(task_ids)),
                and_(McpServerSelection.scope == McpScope.SESSION, McpServerSelection.target_id.in_(session_ids)),
            )
        )
    )
