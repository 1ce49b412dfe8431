"""GraphQL types of the agent catalogue."""

from __future__ import annotations

from typing import Annotated, TypeAlias

import strawberry

from kandev.graphql.schema.errors import ExpectedError


@strawberry.type(description="How an agent is installed: an npm package (Install / Update), or a binary to download.")
class AgentInstall:
    npm_package: str | None
    version: str | None = strawberry.field(description="The version the catalogue pins (what Install installs).")
    binary_url: str | None


@strawberry.type(description="An ACP agent people use, from Kandev's catalogue.")
class AgentCatalogueEntry:
    id: str
    name: str
    command: list[str] = strawberry.field(description="What an agent profile runs (argv).")
    install: AgentInstall
    env_keys: list[str] = strawberry.field(description="Environment keys it needs (put them in workspace secrets).")
    docs_url: str
    verified: str = strawberry.field(
        description="How its command was checked: e2e, tarball, metadata (npm metadata only) or docs."
    )
    installed: bool
    installed_command: list[str] | None = strawberry.field(description="The argv that runs it here, when installed.")


@strawberry.type
class AgentInstallPayload:
    agent: AgentCatalogueEntry


AgentInstallResult: TypeAlias = Annotated[AgentInstallPayload | ExpectedError, strawberry.union("AgentInstallResult")]
