"""Executor profiles on the wire: the box kinds' settings (read and written as the same flat fields), where a
session's agent runs, and what testing a profile found."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.scalars import JSON

from kandev.domain.workspace.executor_config import BOX_SETTINGS
from kandev.graphql.schema.enums import PullPolicy


@strawberry.input(description="A host folder (under KANDEV_SOURCE_ROOTS) seen in a DOCKER executor's container.")
class ExecutorMountInput:
    source: str = strawberry.field(description="Absolute host path under the source roots.")
    target: str = strawberry.field(description="Absolute path in the container (never /workspace or /run/kandev).")
    read_only: bool = True


@strawberry.type(description="A host folder seen in the container.")
class ExecutorMount:
    source: str
    target: str
    read_only: bool


@strawberry.input(description="The settings of the box kinds; only the fields given are set.")
class ExecutorSettingsInput:
    image: str | None = strawberry.field(default=None, description="DOCKER: the image to run, e.g. debian:bookworm.")
    pull_policy: PullPolicy | None = strawberry.field(default=None, description="DOCKER: default NEVER.")
    dockerfile: str | None = strawberry.field(
        default=None, description="DOCKER: a Dockerfile the image is built from (once per content) instead."
    )
    env: JSON | None = strawberry.field(
        default=None, description="DOCKER: environment in the container; values may reference ${secret:NAME}."
    )
    mounts: list[ExecutorMountInput] | None = strawberry.field(default=None, description="DOCKER: extra folders.")
    cpus: float | None = strawberry.field(default=None, description="DOCKER: CPUs the container may use.")
    memory_mb: int | None = strawberry.field(
        default=None, description="Memory limit in MB (DOCKER: the container, no swap; SANDBOX: address space)."
    )
    pids: int | None = strawberry.field(default=None, description="Most processes the box may hold.")
    network: str | None = strawberry.field(
        default=None, description="NONE (default); SANDBOX: or FULL; DOCKER: or the name of a Docker network."
    )
    user: str | None = strawberry.field(
        default=None, description="DOCKER: numeric uid[:gid]; default: the agent's identity (never root)."
    )
    prepare_script: str | None = strawberry.field(
        default=None, description="DOCKER: a shell script run in the container before the agent; its failure fails."
    )
    capabilities: list[str] | None = strawberry.field(
        default=None, description="Worker capabilities the profile needs besides its kind's own (docker, sandbox)."
    )

    def given(self) -> dict[str, Any]:
        """The settings given, snake_case, as the profiles service takes them."""
        values: dict[str, Any] = {}
        for name in BOX_SETTINGS:
            value = getattr(self, name)
            if value is None:
                continue
            if name == "mounts":
                value = [{"source": m.source, "target": m.target, "read_only": m.read_only} for m in value]
            elif name == "pull_policy":
                value = value.value
            values[name] = value
        return values


@strawberry.type(description="Where a session's agent runs (or last ran), and what its queued turn waits for.")
class Placement:
    executor: str | None = strawberry.field(description="The executor kind, lower-case (docker, sandbox, ...).")
    worker: str | None = strawberry.field(description="The worker that launched the agent.")
    box_id: str | None = strawberry.field(description="The container id, or the sandbox's process.")
    waiting_for: list[str] = strawberry.field(
        description="Capabilities no live worker offers: the turn waits until a worker with them all starts."
    )


@strawberry.type(description="What starting and stopping a box of the profile found.")
class ExecutorTestPayload:
    ok: bool
    worker: str | None = strawberry.field(description="The worker that made the box.")
    findings: list[str] = strawberry.field(description="What the box reported, one fact a line.")
    error: str | None = strawberry.field(description="Why the box could not be made, when it could not.")
