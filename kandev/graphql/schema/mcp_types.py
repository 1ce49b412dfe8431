"""Workspace MCP servers: definitions, selections, a session's effective set and the curated templates."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, TypeAlias, cast

import strawberry
from strawberry.scalars import JSON

import kandev.graphql.schema.enums  # noqa: F401  # registers McpServerKind and McpScope
from kandev.domain.mcp.templates import McpTemplate as TemplateRow
from kandev.graphql.schema.columns import column
from kandev.graphql.schema.errors import ExpectedError
from kandev.graphql.schema.fields import described
from kandev.models import McpServer as McpServerRow
from kandev.models import enums as m


@strawberry.type(description="A workspace MCP server definition; header and env values are ${secret:NAME} references.")
class McpServer:
    row: strawberry.Private[McpServerRow]

    id: strawberry.ID = column("id", strawberry.ID)
    name: str = column("name", str)
    kind: m.McpServerKind = column("kind", m.McpServerKind, convert=m.McpServerKind)
    url: str | None = column("url", str | None)
    command: str | None = column("command", str | None, description="EXECUTABLE: the absolute path.")
    args: list[str] = column("args", list[str])
    workspace_id: strawberry.ID | None = column(
        "workspace_id", strawberry.ID | None, description="The owning workspace; null for a server-wide definition."
    )
    created_at: datetime = column("created_at", datetime)

    @described("NPM: the package as name@exact-version.")
    def package(self) -> str | None:
        return f"{self.row.package}@{self.row.version}" if self.row.package else None

    @described("REMOTE: header names to values holding ${secret:NAME} references.")
    def headers(self) -> JSON:
        return cast(JSON, dict(self.row.headers or {}))

    @described("Local kinds: env names to values (literal text or ${secret:NAME} references).")
    def env(self) -> JSON:
        return cast(JSON, dict(self.row.env or {}))

    @described("Defined by an admin for the whole server, usable in every workspace.")
    def server_wide(self) -> bool:
        return self.row.workspace_id is None


@strawberry.type(description="One place a session's MCP server comes from.")
class McpOrigin:
    scope: m.McpScope
    id: strawberry.ID


@strawberry.type(description="A server in a session's effective set, delivered once with every origin.")
class EffectiveMcpServer:
    id: strawberry.ID
    name: str
    kind: m.McpServerKind
    origins: list[McpOrigin]

    @staticmethod
    def of(entry: dict[str, Any]) -> EffectiveMcpServer:
        return EffectiveMcpServer(
            id=strawberry.ID(entry["id"]),
            name=entry["name"],
            kind=m.McpServerKind(entry["kind"]),
            origins=[McpOrigin(scope=m.McpScope(o["scope"]), id=strawberry.ID(o["id"])) for o in entry["origins"]],
        )


@strawberry.type(description="A session's MCP servers: the effective set now, and the desired and applied revisions.")
class SessionMcpServers:
    session_id: strawberry.ID
    servers: list[EffectiveMcpServer]
    desired_revision: int = strawberry.field(description="The revision saved for the session's next agent start.")
    applied_revision: int = strawberry.field(description="The revision its agent was last launched with.")
    applied: list[EffectiveMcpServer] = strawberry.field(description="The servers of the applied revision.")


@strawberry.type(description="A Kandev-curated MCP server template to review and add (not a security review).")
class McpServerTemplate:
    row: strawberry.Private[TemplateRow]

    key: str = column("key", str)
    name: str = column("name", str)
    title: str = column("title", str)
    description: str = column("description", str)
    publisher: str = column("publisher", str)
    kind: m.McpServerKind = column("kind", m.McpServerKind)
    url: str | None = column("url", str | None)
    package: str | None = column("package", str | None)

    @described("Header names to ${secret:NAME} references.")
    def headers(self) -> JSON:
        return cast(JSON, dict(self.row.headers))

    @described("The workspace secrets the template expects.")
    def secrets(self) -> list[str]:
        return list(self.row.secrets)


@strawberry.input(
    description="REMOTE: name, url, headers. NPM (admins): name, package (name@x.y.z), args, env. EXECUTABLE "
    "(admins): name, command (absolute path), args, env. With auth on, local kinds are server-wide (workspaceId null)."
)
class CreateMcpServerInput:
    workspace_id: strawberry.ID | None = strawberry.field(
        default=strawberry.UNSET, description="The workspace; null: a server-wide definition (admins only)."
    )
    name: str
    kind: m.McpServerKind
    url: str | None = None
    headers: JSON | None = None
    package: str | None = None
    command: str | None = None
    args: list[str] | None = None
    env: JSON | None = None


@strawberry.input(description="Only the fields given change; the kind can't.")
class UpdateMcpServerInput:
    mcp_server_id: strawberry.ID
    name: str | None = None
    url: str | None = None
    headers: JSON | None = None
    package: str | None = None
    command: str | None = None
    args: list[str] | None = None
    env: JSON | None = None


@strawberry.input(description="A definition and the scope to select it at (or deselect it from).")
class McpSelectionInput:
    mcp_server_id: strawberry.ID
    scope: m.McpScope
    target_id: strawberry.ID = strawberry.field(description="The agent profile, repository, task or session.")


@strawberry.type
class McpServerPayload:
    mcp_server: McpServer


McpServerResult: TypeAlias = Annotated[McpServerPayload | ExpectedError, strawberry.union("McpServerResult")]
