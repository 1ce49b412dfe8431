"""Workspace MCP servers: thin adapters over McpServerService and McpSelectionService."""

from __future__ import annotations

from typing import Any

import strawberry

from kandev.domain.errors import ValidationError
from kandev.domain.mcp.rules import McpServerFields
from kandev.domain.mcp.templates import TEMPLATES
from kandev.graphql.resolvers.common import attempt
from kandev.graphql.schema.context import Info
from kandev.graphql.schema.mcp_registry_types import AddMcpRegistryEntryInput, McpRegistry
from kandev.graphql.schema.mcp_types import (
    CreateMcpServerInput,
    EffectiveMcpServer,
    McpSelectionInput,
    McpServer,
    McpServerPayload,
    McpServerResult,
    McpServerTemplate,
    SessionMcpServers,
    UpdateMcpServerInput,
)
from kandev.models.enums import McpScope, McpServerKind


def _fields(input: CreateMcpServerInput | UpdateMcpServerInput, kind: McpServerKind | None) -> McpServerFields:
    headers: Any = input.headers
    env: Any = input.env
    return McpServerFields(
        name=input.name,
        kind=kind,
        url=input.url,
        headers=headers,
        package=input.package,
        command=input.command,
        args=input.args,
        env=env,
    )


def _payload(row: Any) -> McpServerPayload:
    return McpServerPayload(mcp_server=McpServer(row=row))


async def mcp_servers(info: Info, workspace_id: strawberry.ID) -> list[McpServer]:
    return [McpServer(row=r) for r in await info.context.services.mcp_servers.list(str(workspace_id))]


async def selected_mcp_servers(info: Info, scope: McpScope, target_id: strawberry.ID) -> list[McpServer]:
    return [McpServer(row=r) for r in await info.context.services.mcp_selections.selected(scope, str(target_id))]


async def session_mcp_servers(info: Info, session_id: strawberry.ID) -> SessionMcpServers:
    found = await info.context.services.mcp_selections.for_session(str(session_id))
    return SessionMcpServers(
        session_id=strawberry.ID(found.session_id),
        servers=[EffectiveMcpServer.of(e) for e in found.servers],
        desired_revision=found.desired_revision,
        applied_revision=found.applied_revision,
        applied=[EffectiveMcpServer.of(e) for e in found.applied],
    )


def mcp_server_templates() -> list[McpServerTemplate]:
    return [McpServerTemplate(row=t) for t in TEMPLATES]


async def _create(info: Info, input: CreateMcpServerInput) -> Any:
    if input.workspace_id is strawberry.UNSET:
        raise ValidationError("workspaceId is required (null for a server-wide definition)", field="workspace_id")
    workspace_id = str(input.workspace_id) if input.workspace_id is not None else None
    return await info.context.services.mcp_servers.create(workspace_id, _fields(input, McpServerKind(input.kind)))


async def create_mcp_server(info: Info, input: CreateMcpServerInput) -> McpServerResult:
    return await attempt(_create(info, input), _payload)


async def update_mcp_server(info: Info, input: UpdateMcpServerInput) -> McpServerResult:
    call = info.context.services.mcp_servers.update(str(input.mcp_server_id), _fields(input, None))
    return await attempt(call, _payload)


async def delete_mcp_server(info: Info, mcp_server_id: strawberry.ID) -> McpServerResult:
    return await attempt(info.context.services.mcp_servers.delete(str(mcp_server_id)), _payload)


async def select_mcp_server(info: Info, input: McpSelectionInput) -> McpServerResult:
    call = info.context.services.mcp_selections.select(str(input.mcp_server_id), input.scope, str(input.target_id))
    return await attempt(call, _payload)


async def deselect_mcp_server(info: Info, input: McpSelectionInput) -> McpServerResult:
    call = info.context.services.mcp_selections.deselect(str(input.mcp_server_id), input.scope, str(input.target_id))
    return await attempt(call, _payload)


async def mcp_registry(info: Info, workspace_id: strawberry.ID) -> McpRegistry:
    return McpRegistry.of(await info.context.services.mcp_registry.view(str(workspace_id)))


async def refresh_mcp_registry(info: Info, workspace_id: strawberry.ID) -> McpRegistry:
    return McpRegistry.of(await info.context.services.mcp_registry.view(str(workspace_id), refresh=True))


async def add_mcp_registry_entry(info: Info, input: AddMcpRegistryEntryInput) -> McpServerResult:
    registry = info.context.services.mcp_registry
    call = registry.add(str(input.workspace_id), input.entry_key, input.option, input.name)
    return await attempt(call, _payload)
