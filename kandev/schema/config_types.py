"""Agent profiles, secrets (names only) and permission requests."""

from __future__ import annotations

from datetime import datetime

import strawberry
from strawberry.scalars import JSON

from kandev.domain.agent_profiles import missing_command
from kandev.models import AgentProfile as AgentProfileRow
from kandev.models import PermissionRequest as PermissionRow
from kandev.models import Repository as RepositoryRow
from kandev.models import Secret as SecretRow
from kandev.schema.enums import AgentKind, PermissionPolicy


@strawberry.type(description="What agent to run and how.")
class AgentProfile:
    row: strawberry.Private[AgentProfileRow]

    @strawberry.field
    def id(self) -> strawberry.ID:
        return strawberry.ID(self.row.id)

    @strawberry.field
    def name(self) -> str:
        return self.row.name

    @strawberry.field
    def kind(self) -> AgentKind:
        return AgentKind(self.row.kind)

    @strawberry.field(description="The argv spawned for ACP profiles.")
    def command(self) -> list[str]:
        return list(self.row.command)

    @strawberry.field(description="Environment for the agent; values may reference ${secret:NAME}.")
    def env(self) -> JSON:
        return dict(self.row.env)

    @strawberry.field
    def supports_mcp(self) -> bool:
        return self.row.supports_mcp

    @strawberry.field
    def permission_policy(self) -> PermissionPolicy:
        return PermissionPolicy(self.row.permission_policy)

    @strawberry.field(description="Built in (Scripted and the well-known ACP presets).")
    def builtin(self) -> bool:
        return self.row.builtin

    @strawberry.field(description="False while the profile's command is not on the server's PATH.")
    def available(self) -> bool:
        return missing_command(self.row) is None

    @strawberry.field(description="The command that is missing, when unavailable.")
    def missing_command(self) -> str | None:
        return missing_command(self.row)


@strawberry.type(description="A workspace secret; its value is never returned.")
class Secret:
    row: strawberry.Private[SecretRow]

    @strawberry.field
    def id(self) -> strawberry.ID:
        return strawberry.ID(self.row.id)

    @strawberry.field
    def name(self) -> str:
        return self.row.name

    @strawberry.field
    def created_at(self) -> datetime:
        return self.row.created_at


@strawberry.type
class PermissionOption:
    option_id: str
    name: str
    kind: str


@strawberry.type(description="An agent waiting for an operator to allow or deny a tool call.")
class PermissionRequest:
    row: strawberry.Private[PermissionRow]

    @strawberry.field
    def id(self) -> strawberry.ID:
        return strawberry.ID(self.row.id)

    @strawberry.field
    def task_id(self) -> strawberry.ID:
        return strawberry.ID(self.row.task_id)

    @strawberry.field
    def session_id(self) -> strawberry.ID:
        return strawberry.ID(self.row.session_id)

    @strawberry.field
    def title(self) -> str:
        return self.row.title

    @strawberry.field
    def state(self) -> str:
        return self.row.state

    @strawberry.field
    def tool_call(self) -> JSON:
        return dict(self.row.tool_call)

    @strawberry.field
    def options(self) -> list[PermissionOption]:
        return [
            PermissionOption(option_id=o["option_id"], name=o.get("name", ""), kind=o.get("kind", ""))
            for o in self.row.options
        ]

    @strawberry.field
    def chosen_option_id(self) -> str | None:
        return self.row.chosen_option_id

    @strawberry.field
    def created_at(self) -> datetime:
        return self.row.created_at


@strawberry.type(description="A local git repository tasks can work in.")
class Repository:
    row: strawberry.Private[RepositoryRow]

    @strawberry.field
    def id(self) -> strawberry.ID:
        return strawberry.ID(self.row.id)

    @strawberry.field
    def name(self) -> str:
        return self.row.name

    @strawberry.field
    def path(self) -> str:
        return self.row.path

    @strawberry.field
    def default_branch(self) -> str:
        return self.row.default_branch
