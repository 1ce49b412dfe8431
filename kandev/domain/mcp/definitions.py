"""Workspace MCP server definitions: CRUD and who may define what. Remote endpoints belong to a workspace and any
member may define them, though a non-admin's URL may not point inward (kandev.domain.outbound: checked here and
again at launch); a definition that runs a local process (npm package, executable) is an admin's, and with auth on
it is server-wide. Saving starts, downloads and connects to nothing (it resolves a non-admin's URL's host)."""

from __future__ import annotations

import asyncio

from sqlalchemy import or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.context import ServiceContext, ensure_admin, is_admin
from kandev.domain.errors import ConflictError, NotFoundError, ValidationError
from kandev.domain.mcp.revisions import refresh_live_sessions
from kandev.domain.mcp.rules import (
    LOCAL_PROCESS_KINDS,
    McpServerFields,
    check_args,
    check_command,
    check_headers,
    check_server_env,
    check_url,
    clean_server_name,
    inapplicable,
    split_package,
)
from kandev.domain.outbound import outbound_policy
from kandev.domain.scope import load_workspace
from kandev.models import McpServer
from kandev.models.base import new_id, utcnow
from kandev.models.enums import McpServerKind


class McpServerService:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    async def list(self, workspace_id: str) -> list[McpServer]:
        """The workspace's definitions and the server-wide ones."""
        async with self.ctx.read() as db:
            await load_workspace(db, self.ctx.principal, workspace_id)
            rows = await db.scalars(
                select(McpServer)
                .where(or_(McpServer.workspace_id == workspace_id, McpServer.workspace_id.is_(None)))
                .order_by(McpServer.name, McpServer.id)
            )
            return list(rows)

    async def get(self, server_id: str) -> McpServer:
        async with self.ctx.read() as db:
            return await self._load(db, server_id)

    async def create(self, workspace_id: str | None, fields: McpServerFields) -> McpServer:
        kind = fields.kind
        if kind is None:
            raise ValidationError("missing required field: kind", field="kind")
        self._check_rights(workspace_id, kind)
        server = McpServer(id=new_id(), workspace_id=workspace_id, kind=kind, headers={}, args=[], env={})
        _apply(server, fields, kind, creating=True)
        await self._outward(server.url)
        try:
            async with self.ctx.unit_of_work() as uow:
                if workspace_id is not None:
                    await load_workspace(uow.db, self.ctx.principal, workspace_id)
                await _ensure_unique(uow.db, server)
                uow.db.add(server)
                await uow.db.flush()
                return server
        except IntegrityError:
            raise ConflictError("an MCP server with this name already exists", field="name") from None

    async def update(self, server_id: str, fields: McpServerFields) -> McpServer:
        """A changed definition becomes a new desired revision of every live session that selects it."""
        await self._outward(fields.url)
        try:
            async with self.ctx.unit_of_work() as uow:
                server = await self._load(uow.db, server_id)
                kind = McpServerKind(server.kind)
                if fields.kind is not None and fields.kind != kind:
                    raise ValidationError("an MCP server's kind can't change; define a new one", field="kind")
                self._check_rights(server.workspace_id, kind)
                _apply(server, fields, kind, creating=False)
                await _ensure_unique(uow.db, server)
                server.updated_at = utcnow()
                await uow.db.flush()
                await refresh_live_sessions(uow.db, server.workspace_id)
                return server
        except IntegrityError:
            raise ConflictError("an MCP server with this name already exists", field="name") from None

    async def delete(self, server_id: str) -> McpServer:
        async with self.ctx.unit_of_work() as uow:
            server = await self._load(uow.db, server_id)
            self._check_rights(server.workspace_id, McpServerKind(server.kind))
            await uow.db.delete(server)
            await uow.db.flush()
            await refresh_live_sessions(uow.db, server.workspace_id)
            return server

    async def _outward(self, url: str | None) -> None:
        """A non-admin's remote URL must not point inward; an admin's is theirs to choose."""
        if url is not None and not is_admin(self.ctx.principal):
            await asyncio.to_thread(outbound_policy(self.ctx.settings).check_url, check_url(url), "url")

    def _check_rights(self, workspace_id: str | None, kind: McpServerKind) -> None:
        if kind in LOCAL_PROCESS_KINDS:
            ensure_admin(self.ctx.principal, "define MCP servers that run a local process", field="kind")
            if workspace_id is not None and self.ctx.settings.auth == "on":
                raise ValidationError(
                    "with auth on, MCP servers that run a local process are server-wide: leave workspace_id out",
                    field="workspace_id",
                    reason="server_wide_only",
                )
        if workspace_id is None:
            ensure_admin(self.ctx.principal, "define server-wide MCP servers", field="workspace_id")

    async def _load(self, db: AsyncSession, server_id: str) -> McpServer:
        server = await db.get(McpServer, server_id)
        if server is None:
            raise NotFoundError("MCP server", server_id)
        if server.workspace_id is not None:
            try:
                await load_workspace(db, self.ctx.principal, server.workspace_id)
            except NotFoundError:
                raise NotFoundError("MCP server", server_id) from None
        return server


def _apply(server: McpServer, fields: McpServerFields, kind: McpServerKind, *, creating: bool) -> None:
    """Check and copy the submitted fields; on create the kind's required ones must be there."""
    if (extra := inapplicable(fields, kind)) is not None:
        raise ValidationError(f"{extra} does not apply to a {kind.value.lower()} MCP server", field=extra)
    if creating or fields.name is not None:
        server.name = clean_server_name(fields.name)
    if kind == McpServerKind.REMOTE:
        if creating or fields.url is not None:
            server.url = check_url(fields.url)
        if fields.headers is not None:
            server.headers = check_headers(fields.headers)
        return
    if kind == McpServerKind.NPM and (creating or fields.package is not None):
        server.package, server.version = split_package(fields.package)
    if kind == McpServerKind.EXECUTABLE and (creating or fields.command is not None):
        server.command = check_command(fields.command)
    if fields.args is not None:
        server.args = check_args(fields.args)
    if fields.env is not None:
        server.env = check_server_env(fields.env)


async def _ensure_unique(db: AsyncSession, server: McpServer) -> None:
    """One name per workspace, counting the server-wide definitions it also receives."""
    query = select(McpServer.id).where(McpServer.name == server.name, McpServer.id != server.id)
    if server.workspace_id is not None:
        query = query.where(or_(McpServer.workspace_id == server.workspace_id, McpServer.workspace_id.is_(None)))
    if await db.scalar(query.limit(1)) is not None:
        raise ConflictError("an MCP server with this name already exists", field="name")
