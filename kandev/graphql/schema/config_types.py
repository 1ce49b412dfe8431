"""Agent profiles, secrets (names only) and permission requests."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import strawberry
from strawberry.scalars import JSON

from kandev.domain.context import is_admin
from kandev.domain.sessions.permissions import agent_pending_id
from kandev.domain.workspace.agent_profiles import mask_literals, missing_command, visible_env
from kandev.domain.workspace.executor_config import BoxConfig, read_config, required_capabilities
from kandev.graphql.schema.columns import column
from kandev.graphql.schema.context import RUN_DOC, Info, run_at
from kandev.graphql.schema.enums import AgentKind, ExecutorKind, PermissionPolicy, PullPolicy
from kandev.graphql.schema.executor_types import ExecutorMount
from kandev.graphql.schema.fields import described
from kandev.models import AgentProfile as AgentProfileRow
from kandev.models import ExecutorProfile as ExecutorProfileRow
from kandev.models import PermissionRequest as PermissionRow
from kandev.models import Repository as RepositoryRow
from kandev.models import Secret as SecretRow


@strawberry.type(description="What agent to run and how.")
class AgentProfile:
    row: strawberry.Private[AgentProfileRow]

    id: strawberry.ID = column("id", strawberry.ID)
    name: str = column("name", str)
    kind: AgentKind = column("kind", AgentKind, convert=AgentKind)

    @described("The argv spawned for ACP profiles.")
    def command(self) -> list[str]:
        return list(self.row.command)

    @described(
        "Environment for the agent; values may reference ${secret:NAME}. Non-admins see only the "
        "references of a server-wide profile's values."
    )
    def env(self, info: Info) -> JSON:
        return JSON(visible_env(self.row, info.context.services.principal))

    supports_mcp: bool = column("supports_mcp", bool)
    permission_policy: PermissionPolicy = column("permission_policy", PermissionPolicy, convert=PermissionPolicy)
    builtin: bool = column("builtin", bool, description="Built in (Scripted and the well-known ACP presets).")
    workspace_id: strawberry.ID | None = column(
        "workspace_id", strawberry.ID | None, description="The owning workspace; null for a server-wide profile."
    )

    @described("Defined by an admin for the whole server, listed in every workspace.")
    def server_wide(self) -> bool:
        return self.row.workspace_id is None

    @described("False while the profile's command is not on the server's PATH.")
    def available(self) -> bool:
        return missing_command(self.row) is None

    @described("The command that is missing, when unavailable.")
    def missing_command(self) -> str | None:
        return missing_command(self.row)


@strawberry.type(description="Where an agent works; only admins create or change these.")
class ExecutorProfile:
    row: strawberry.Private[ExecutorProfileRow]

    id: strawberry.ID = column("id", strawberry.ID)
    name: str = column("name", str)
    kind: ExecutorKind = column("kind", ExecutorKind, convert=ExecutorKind)
    builtin: bool = column("builtin", bool)
    workspace_id: strawberry.ID | None = column(
        "workspace_id", strawberry.ID | None, description="The owning workspace; null for a server-wide profile."
    )

    @described("Defined by an admin for the whole server, listed in every workspace.")
    def server_wide(self) -> bool:
        return self.row.workspace_id is None

    def _config(self) -> BoxConfig:
        return read_config(self.row.kind, self.row.config)

    @described("DOCKER: the image to run (empty when built from the Dockerfile).")
    def image(self) -> str:
        return self._config().image

    @described("DOCKER: whether the image may be pulled.")
    def pull_policy(self) -> PullPolicy:
        return PullPolicy(self._config().pull_policy)

    @described("DOCKER: the Dockerfile the image is built from, when given.")
    def dockerfile(self) -> str:
        return self._config().dockerfile

    @described("DOCKER: the container's environment; non-admins see only the ${secret:NAME} references.")
    def env(self, info: Info) -> JSON:
        env = self._config().env
        if is_admin(info.context.services.principal):
            return JSON(env)
        return JSON({key: mask_literals(value) for key, value in env.items()})

    @described("DOCKER: extra host folders in the container.")
    def mounts(self) -> list[ExecutorMount]:
        return [ExecutorMount(source=m.source, target=m.target, read_only=m.read_only) for m in self._config().mounts]

    @described("DOCKER: CPUs the container may use; null: no limit.")
    def cpus(self) -> float | None:
        return self._config().cpus

    @described("Memory limit in MB; null: none.")
    def memory_mb(self) -> int | None:
        return self._config().memory_mb

    @described("Most processes in the box; null: no limit.")
    def pids(self) -> int | None:
        return self._config().pids

    @described("NONE, FULL (SANDBOX) or a Docker network's name (DOCKER).")
    def network(self) -> str:
        return self._config().network

    @described("DOCKER: the container's uid[:gid]; empty: the agent's identity.")
    def user(self) -> str:
        return self._config().user

    @described("DOCKER: the script run in the container before the agent.")
    def prepare_script(self) -> str:
        return self._config().prepare_script

    @described("Worker capabilities the profile needs (its kind's own included): its turns go only to such workers.")
    def capabilities(self) -> list[str]:
        return list(required_capabilities(self.row.kind, self.row.config))

    @described("Why no live worker can run the profile now (its capabilities, named); null when one can.")
    async def unavailable_reason(self, info: Info) -> str | None:
        return await info.context.services.executor_profiles.unavailable_reason(self.row)


@strawberry.type(description="A workspace secret; its value is never returned.")
class Secret:
    row: strawberry.Private[SecretRow]

    id: strawberry.ID = column("id", strawberry.ID)
    name: str = column("name", str)
    created_at: datetime = column("created_at", datetime)


@strawberry.type
class PermissionOption:
    option_id: str
    name: str
    kind: str


@strawberry.type(description="An agent waiting for an operator to allow or deny a tool call.")
class PermissionRequest:
    row: strawberry.Private[PermissionRow]

    id: strawberry.ID = column("id", strawberry.ID)
    task_id: strawberry.ID = column("task_id", strawberry.ID)
    session_id: strawberry.ID = column("session_id", strawberry.ID)
    title: str = column("title", str)
    state: str = column("state", str)

    @strawberry.field
    def tool_call(self) -> JSON:
        return JSON(dict(self.row.tool_call))

    @described("The agent's own id for the tool call it asks about (the spec's pending_id).")
    def pending_id(self) -> str | None:
        return agent_pending_id(self.row)

    @strawberry.field
    def options(self) -> list[PermissionOption]:
        return [
            PermissionOption(option_id=o["option_id"], name=o.get("name", ""), kind=o.get("kind", ""))
            for o in self.row.options
        ]

    chosen_option_id: str | None = column("chosen_option_id", str | None)
    created_at: datetime = column("created_at", datetime)

    @described(RUN_DOC)
    async def run_id(self, info: Info) -> strawberry.ID | None:
        run_id = await run_at(info, self.row.task_id, self.row.created_at)
        return strawberry.ID(run_id) if run_id else None


@strawberry.type(description="A local git repository tasks can work in.")
class Repository:
    row: strawberry.Private[RepositoryRow]

    id: strawberry.ID = column("id", strawberry.ID)
    name: str = column("name", str)
    path: str = column("path", str)
    default_branch: str = column("default_branch", str)

    @described(
        "The repository's branches (local and the origin remote's, by name), its default branch first, then the "
        "most recently committed to; `startsWith` filters them (a picker's search). Reads git: select it for the "
        "repository being picked, not for a whole list."
    )
    async def branches(
        self,
        info: Info,
        first: Annotated[int, strawberry.argument(description="1 to 500.")] = 100,
        starts_with: str | None = None,
    ) -> list[str]:
        return await info.context.services.repositories.branches(self.row, starts_with, first)
