"""MCP Registry metadata in the marketplace: publisher-supplied entries, plain text, and how current the cache is."""

from __future__ import annotations

from datetime import datetime
from enum import Enum

import strawberry

from kandev.domain.mcp.registry import RegistryView
from kandev.domain.mcp.registry_entries import RegistryEntry, RegistryOption
from kandev.models import enums as m


@strawberry.enum(description="How current the cached MCP Registry metadata is.")
class McpRegistryStatus(Enum):
    DISABLED = "DISABLED"
    FRESH = "FRESH"
    STALE = "STALE"
    UNAVAILABLE = "UNAVAILABLE"


@strawberry.enum(description="A registry entry's lifecycle; only ACTIVE entries can be added.")
class McpRegistryEntryStatus(Enum):
    ACTIVE = "ACTIVE"
    DEPRECATED = "DEPRECATED"
    DELETED = "DELETED"


@strawberry.type(description="One way to install a registry entry; not installable ones say why.")
class McpRegistryOption:
    index: int
    kind: m.McpServerKind | None
    label: str
    transport: str
    url: str | None
    package: str | None = strawberry.field(description="NPM: name@exact-version.")
    secrets: list[str] = strawberry.field(description="Workspace secrets the definition would reference.")
    installable: bool
    reason: str | None

    @staticmethod
    def of(index: int, option: RegistryOption) -> McpRegistryOption:
        return McpRegistryOption(
            index=index,
            kind=m.McpServerKind(option.kind) if option.kind else None,
            label=option.label,
            transport=option.transport,
            url=option.url,
            package=option.package,
            secrets=list(option.secrets),
            installable=option.installable,
            reason=option.reason,
        )


@strawberry.type(description="Publisher-supplied MCP Registry metadata (not a Kandev review); text is plain text.")
class McpRegistryEntry:
    key: str
    name: str
    title: str
    description: str
    version: str
    publisher: str
    status: McpRegistryEntryStatus
    website_url: str | None
    suggested_name: str
    installable: bool = strawberry.field(description="Active, with at least one installable option.")
    options: list[McpRegistryOption]

    @staticmethod
    def of(entry: RegistryEntry) -> McpRegistryEntry:
        return McpRegistryEntry(
            key=entry.key,
            name=entry.name,
            title=entry.title,
            description=entry.description,
            version=entry.version,
            publisher=entry.publisher,
            status=McpRegistryEntryStatus(entry.status),
            website_url=entry.website_url,
            suggested_name=entry.suggested_name(),
            installable=entry.installable,
            options=[McpRegistryOption.of(i, o) for i, o in enumerate(entry.options)],
        )


@strawberry.type(description="The MCP Registry as cached: its entries and how current they are.")
class McpRegistry:
    status: McpRegistryStatus
    fetched_at: datetime | None = strawberry.field(description="When the shown entries were fetched.")
    checked_at: datetime | None = strawberry.field(description="When the registry was last asked.")
    error: str | None
    entries: list[McpRegistryEntry]

    @staticmethod
    def of(view: RegistryView) -> McpRegistry:
        return McpRegistry(
            status=McpRegistryStatus(view.status),
            fetched_at=view.fetched_at,
            checked_at=view.checked_at,
            error=view.error,
            entries=[McpRegistryEntry.of(e) for e in view.entries],
        )


@strawberry.input(description="Add a registry entry as a workspace MCP definition (npm with auth on: server-wide).")
class AddMcpRegistryEntryInput:
    workspace_id: strawberry.ID
    entry_key: str
    option: int | None = strawberry.field(
        default=None, description="The option's index; default the first installable."
    )
    name: str | None = strawberry.field(default=None, description="The definition's name; default the suggested name.")
