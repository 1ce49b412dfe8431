"""GraphQL types of the agent catalogue."""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Annotated, TypeAlias

import strawberry

from kandev.graphql.schema.errors import ExpectedError
from kandev.platform.job_queues import InstallProgress


@strawberry.type(description="How an agent is installed: an npm package (Install / Update), or a binary to download.")
class AgentInstall:
    npm_package: str | None
    version: str | None = strawberry.field(description="The version the catalogue pins (what Install installs).")
    binary_url: str | None


@strawberry.enum(
    description="QUEUED: waiting for a worker; RESOLVING: an update asks the package source for the current version; "
    "INSTALLING: npm at work; DONE; FAILED (the job's error says why)."
)
class AgentInstallState(Enum):
    QUEUED = "QUEUED"
    RESOLVING = "RESOLVING"
    INSTALLING = "INSTALLING"
    DONE = "DONE"
    FAILED = "FAILED"


@strawberry.type(
    description="An install or update of a catalogue agent, run by a worker; kept for an hour after it ends."
)
class AgentInstallJob:
    state: AgentInstallState
    update: bool = strawberry.field(description="An update (the registry's current version), not the pinned one.")
    error: str | None = strawberry.field(description="Why it FAILED, safe to show; null otherwise.")
    enqueued_at: datetime | None
    started_at: datetime | None
    ended_at: datetime | None

    @classmethod
    def of(cls, progress: InstallProgress | None) -> AgentInstallJob | None:
        if progress is None:
            return None
        return cls(
            state=AgentInstallState(progress.state),
            update=progress.update,
            error=progress.error,
            enqueued_at=progress.enqueued_at,
            started_at=progress.started_at,
            ended_at=progress.ended_at,
        )


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
    install_job: AgentInstallJob | None = strawberry.field(
        description="Its latest Install or Update, while it waits or runs and for an hour after; null: none."
    )


@strawberry.type
class AgentInstallPayload:
    agent: AgentCatalogueEntry


AgentInstallResult: TypeAlias = Annotated[AgentInstallPayload | ExpectedError, strawberry.union("AgentInstallResult")]
