"""What a box executor (SANDBOX, DOCKER) needs beyond a plain launch, read where the turn is prepared: the profile's
settings with its environment's secrets resolved and its mounts checked again (a link under a source root may
point elsewhere now), the host folders the agent writes besides its working directory (the task directory, its
repositories' git dirs, attached folders) and those it only reads (a built-in agent's interpreter and package, the
MCP package cache), and the labels every box carries."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.access.agent_identities import workspace_agent_identity
from kandev.domain.context import ServiceContext
from kandev.domain.errors import ConflictError, NotFoundError, ValidationError
from kandev.domain.sealed_secrets import SECRET_REFERENCE, resolve_env
from kandev.domain.workspace.executor_config import BOX_KINDS, BoxConfig, Mount, read_config
from kandev.domain.workspace.git import git
from kandev.domain.workspace.source_roots import confine_path
from kandev.domain.workspace.workdirs import task_directory
from kandev.models import ExecutorProfile, Repository, Task, TaskFolder, TaskRepository
from kandev.models.enums import ExecutorKind
from kandev.platform.agent_host import AgentUser, scripted_requirements
from kandev.platform.settings import Settings

# The labels of every box: Kandev's, which installation's, and whose (session, task, worker).
MANAGED, INSTANCE, SESSION, TASK, WORKER = (
    "kandev.managed",
    "kandev.instance",
    "kandev.session",
    "kandev.task",
    "kandev.worker",
)


@dataclass(frozen=True)
class BoxParts:
    """A box's settings and host folders for one launch (the executor profile's kind is `kind`)."""

    kind: str
    config: BoxConfig
    writable: tuple[str, ...]
    readable: tuple[str, ...]
    secrets: tuple[str, ...]


def box_labels(settings: Settings, session_id: str, task_id: str, worker: str) -> dict[str, str]:
    return {MANAGED: "1", INSTANCE: settings.instance_label, SESSION: session_id, TASK: task_id, WORKER: worker}


async def executor_of(db: AsyncSession, executor_id: str | None) -> tuple[str, dict[str, object]]:
    """The session's executor kind and stored config (the worktree executor when none is chosen)."""
    profile = await db.get(ExecutorProfile, executor_id) if executor_id else None
    if profile is None:
        return ExecutorKind.WORKTREE.value, {}
    return profile.kind, dict(profile.config or {})


@dataclass(frozen=True)
class ProbeSetup:
    """What testing an executor profile makes a box with."""

    kind: str
    config: BoxConfig
    run_as: AgentUser | None


async def probe_setup(ctx: ServiceContext, profile_id: str) -> ProbeSetup:
    """A box profile's settings as a launch would use them (secrets resolved, mounts checked again), with the
    identity its workspace owner's agents run as; ConflictError naming what can't be used."""
    # A write transaction: the owner's agent identity may be given here for the first time (a row).
    async with ctx.unit_of_work() as uow:
        db = uow.db
        profile = await db.get(ExecutorProfile, profile_id)
        if profile is None:
            raise NotFoundError("executor profile", profile_id)
        if profile.kind not in BOX_KINDS:
            raise ConflictError("only SANDBOX and DOCKER profiles make boxes to test")
        config = read_config(profile.kind, profile.config)
        env, run_as = dict(config.env), None
        if profile.workspace_id is not None:
            env, _ = await resolve_env(db, ctx.settings.server_key, profile.workspace_id, config.env)
            run_as = await workspace_agent_identity(db, ctx.settings, profile.workspace_id)
        else:  # a server-wide profile: each workspace gives its own secrets, so none are resolved here
            env = {k: v for k, v in env.items() if not SECRET_REFERENCE.search(v)}
    return ProbeSetup(profile.kind, replace(config, env=env, mounts=_confined(ctx.settings, config)), run_as)


def _confined(settings: Settings, config: BoxConfig) -> tuple[Mount, ...]:
    try:
        return tuple(
            Mount(str(confine_path(settings, m.source, f"mounts.{i}.source")), m.target, m.read_only)
            for i, m in enumerate(config.mounts)
        )
    except ValidationError as error:
        raise ConflictError(f"the executor profile's mount can't be used: {error.message}") from None


async def box_parts(
    db: AsyncSession, settings: Settings, task: Task, executor_id: str | None, workdir: Path, builtin: bool
) -> BoxParts | None:
    """The box of the session's executor, None for the plain kinds; ConflictError naming what can't be used."""
    kind, stored = await executor_of(db, executor_id)
    if kind not in BOX_KINDS:
        return None
    config = read_config(kind, stored)
    env, secrets = await resolve_env(db, settings.server_key, task.workspace_id, config.env)
    mounts = _confined(settings, config)
    readable = [str(settings.work_path / "mcp-packages")]
    if builtin:
        readable += scripted_requirements()
        if kind == ExecutorKind.SANDBOX:  # the host's interpreter runs in a sandbox, the image's in a container
            readable.append(os.path.realpath(sys.base_prefix))
    return BoxParts(
        kind=kind,
        config=replace(config, env=env, mounts=mounts),
        writable=await _writable(db, settings, task, workdir),
        readable=tuple(dict.fromkeys(readable)),
        secrets=tuple(secrets),
    )


def with_mcp_commands(box: BoxParts, entries: list[dict[str, object]]) -> BoxParts:
    """A sandbox also sees the command file of each executable MCP server handed to its agent, read-only (only the
    file: what an admin keeps beside it stays out); a container runs the image's commands."""
    if box.kind != ExecutorKind.SANDBOX:
        return box
    commands = [str(e["command"]) for e in entries if e.get("kind") == "EXECUTABLE" and e.get("command")]
    return replace(box, readable=tuple(dict.fromkeys([*box.readable, *commands])))


async def _writable(db: AsyncSession, settings: Settings, task: Task, workdir: Path) -> tuple[str, ...]:
    """The task directory around a worktree, each repository's git dir (a worktree's commits land there; found
    from the registered repository, never from the `.git` file the agent may rewrite) and attached folders."""
    folders: list[str] = []
    directory = task_directory(settings.work_path, task.id)
    if workdir.is_relative_to(directory):
        folders.append(str(directory))
        links = await db.scalars(select(TaskRepository).where(TaskRepository.task_id == task.id))
        for link in links:
            repository = await db.get(Repository, link.repository_id)
            if repository is not None and os.path.isdir(repository.path):
                common = git("rev-parse", "--path-format=absolute", "--git-common-dir", cwd=repository.path)
                folders.append(os.path.realpath(common))
    folders += [row.path for row in await db.scalars(select(TaskFolder).where(TaskFolder.task_id == task.id))]
    return tuple(p for p in dict.fromkeys(folders) if p != str(workdir))
