"""Agent and executor profiles: built-ins, presets, availability and the profile CRUD rules."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.context import Principal, ServiceContext, ensure_admin, is_admin
from kandev.domain.errors import (
    AutopilotNeedsMcpError,
    ConflictError,
    NotFoundError,
    PermissionDeniedError,
    ValidationError,
)
from kandev.domain.events import AgentProfileDeleting, AgentProfileSaved, AgentProfileSnapshot
from kandev.domain.scope import load_workspace
from kandev.domain.sealed_secrets import SECRET_REFERENCE
from kandev.domain.session_rows import is_terminal
from kandev.domain.validation import check_env, clean_name
from kandev.models import AgentProfile, ExecutorProfile, McpServerSelection, Session, Task, Workspace
from kandev.models.base import new_id, utcnow
from kandev.models.enums import AgentKind, ExecutorKind, McpScope, PermissionPolicy, TaskState
from kandev.platform.agent_host import scripted_command

SCRIPTED_PROFILE_NAME = "Scripted"
AUTHOR_PROFILE_NAME = "Automation author"
# Kinds that run one of kandev's own programs on this interpreter: nothing to install, no command to trust.
BUILTIN_PROGRAMS = {AgentKind.SCRIPTED: "scripted", AgentKind.AUTHOR: "author"}

# Well-known ACP agents; usable once their command is on PATH.
ACP_PRESETS: list[dict[str, Any]] = [
    {"name": "Claude Code", "command": ["claude-code-acp"]},
    {"name": "Codex", "command": ["codex-acp"]},
    {"name": "Gemini CLI", "command": ["gemini", "--experimental-acp"]},
]


def launch_command(profile: AgentProfile) -> list[str]:
    """The argv to spawn; the scripted agent runs on this interpreter wherever it is installed."""
    program = BUILTIN_PROGRAMS.get(AgentKind(profile.kind))
    return scripted_command(program) if program else list(profile.command)


def missing_command(profile: AgentProfile | AgentProfileSnapshot) -> str | None:
    """The executable that is not on PATH, or None when the profile can run here."""
    if profile.kind in BUILTIN_PROGRAMS:
        return None
    if not profile.command:
        return "(no command)"
    executable = profile.command[0]
    return None if shutil.which(executable) else executable


def ensure_available(profile: AgentProfile) -> None:
    missing = missing_command(profile)
    if missing is not None:
        raise ConflictError(
            f"agent profile '{profile.name}' is unavailable: command '{missing}' is not on PATH",
            command=missing,
            agent_profile_id=profile.id,
        )


def ensure_autopilot_capable(task: Any, profile: AgentProfile) -> None:
    """The one autopilot check of every start, spawn, auto-start and profile change."""
    if task.autopilot and not profile.supports_mcp:
        raise AutopilotNeedsMcpError(
            f"the task is in autopilot mode and agent profile '{profile.name}' can't receive the Kandev MCP "
            "tools its contract needs (supports_mcp is false); use an agent profile that supports MCP",
            task_id=task.id,
            agent_profile_id=profile.id,
        )


def _builtin(workspace_id: str, name: str, kind: AgentKind, command: list[str] | None = None) -> AgentProfile:
    """A built-in profile: kandev's own programs run with every permission, the ACP presets ask."""
    policy = PermissionPolicy.ASK if kind == AgentKind.ACP else PermissionPolicy.ALLOW
    return AgentProfile(
        id=new_id(),
        workspace_id=workspace_id,
        name=name,
        kind=kind,
        command=list(command or []),
        env={},
        supports_mcp=True,
        permission_policy=policy,
        builtin=True,
    )


def add_builtin_profiles(db: AsyncSession, workspace_id: str) -> tuple[AgentProfile, ExecutorProfile]:
    """Stage the Scripted agent, the ACP presets and the executors; returns the defaults."""
    scripted = _builtin(workspace_id, SCRIPTED_PROFILE_NAME, AgentKind.SCRIPTED)
    presets = [_builtin(workspace_id, p["name"], AgentKind.ACP, p["command"]) for p in ACP_PRESETS]
    db.add_all([scripted, *presets])
    executors = [
        ExecutorProfile(id=new_id(), workspace_id=workspace_id, name=kind.value, kind=kind, builtin=True)
        for kind in (ExecutorKind.WORKTREE, ExecutorKind.LOCAL, ExecutorKind.SCRATCH)
    ]
    db.add_all(executors)
    return scripted, executors[0]


@dataclass
class AgentProfileFields:
    name: str | None = None
    kind: AgentKind | None = None
    command: list[str] | None = None
    env: dict[str, str] | None = None
    supports_mcp: bool | None = None
    permission_policy: PermissionPolicy | None = None


def _check_fields(fields: AgentProfileFields, kind: AgentKind) -> None:
    if fields.command is not None and any(not isinstance(a, str) or not a for a in fields.command):
        raise ValidationError("command must be a list of non-empty strings", field="command")
    if kind == AgentKind.ACP and fields.command is not None and not fields.command:
        raise ValidationError("an ACP profile needs a command to spawn", field="command")
    if fields.env is not None:
        if not isinstance(fields.env, dict) or not all(isinstance(v, str) for v in fields.env.values()):
            raise ValidationError("env must be an object of string values", field="env")
        for key in fields.env:
            if not key or "=" in key or "\0" in key:
                raise ValidationError("env names must be non-empty and contain no '='", field="env")
        check_env(fields.env)


def check_rights(principal: Principal, fields: AgentProfileFields, current: AgentProfile | None) -> None:
    """Only admins decide what the machine runs: a non-admin may create built-in profiles (Scripted, Author:
    no command, no env) and change the name, MCP support and permission policy of their workspaces' profiles, never the
    kind, command or env of any profile (sending a field's current value changes nothing and is allowed)."""
    if is_admin(principal):
        return
    if current is None:
        if (fields.kind or AgentKind.ACP) not in BUILTIN_PROGRAMS:
            raise PermissionDeniedError(
                "only an admin can create agent profiles other than the built-in ones", field="kind"
            )
        changes = {"command": bool(fields.command), "env": bool(fields.env)}
    else:
        changes = {
            "kind": fields.kind is not None and fields.kind != current.kind,
            "command": fields.command is not None and list(fields.command) != list(current.command),
            "env": fields.env is not None and dict(fields.env) != dict(current.env),
        }
    for field, changed in changes.items():
        if changed:
            raise PermissionDeniedError(f"only an admin can set an agent profile's {field}", field=field)


class AgentProfileService:
    """A workspace's agent profiles plus the server-wide ones (no workspace), which only admins change and
    which every workspace lists and may run; a non-admin changing one is refused as permission-denied (it is
    visible to them, so not-found would be a lie)."""

    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    async def list(self, workspace_id: str) -> list[AgentProfile]:
        async with self.ctx.read() as db:
            await load_workspace(db, self.ctx.principal, workspace_id)
            rows = await db.scalars(
                select(AgentProfile)
                .where(or_(AgentProfile.workspace_id == workspace_id, AgentProfile.workspace_id.is_(None)))
                .order_by(AgentProfile.builtin.desc(), AgentProfile.name, AgentProfile.id)
            )
            return list(rows)

    async def get(self, profile_id: str) -> AgentProfile:
        async with self.ctx.read() as db:
            return await self._load(db, profile_id)

    async def _load(self, db: AsyncSession, profile_id: str, *, write: bool = False) -> AgentProfile:
        profile = await db.get(AgentProfile, profile_id)
        if profile is None:
            raise NotFoundError("agent profile", profile_id)
        if profile.workspace_id is None:
            if write:
                ensure_admin(self.ctx.principal, "change server-wide agent profiles", field="agent_profile_id")
            return profile
        try:
            await load_workspace(db, self.ctx.principal, profile.workspace_id)
        except NotFoundError:
            raise NotFoundError("agent profile", profile_id) from None
        return profile

    async def create(self, workspace_id: str | None, fields: AgentProfileFields) -> AgentProfile:
        """A profile of the workspace, or a server-wide one (workspace_id None, admins only)."""
        if workspace_id is None:
            ensure_admin(self.ctx.principal, "define server-wide agent profiles", field="workspace_id")
        check_rights(self.ctx.principal, fields, None)
        name = clean_name(fields.name, "name")
        kind = fields.kind or AgentKind.ACP
        if kind == AgentKind.ACP and not fields.command:
            raise ValidationError("an ACP profile needs a command to spawn", field="command")
        _check_fields(fields, kind)
        try:
            async with self.ctx.unit_of_work() as uow:
                if workspace_id is not None:
                    await load_workspace(uow.db, self.ctx.principal, workspace_id)
                else:
                    await ensure_unique_server_wide(uow.db, AgentProfile, name)
                profile = AgentProfile(
                    id=new_id(),
                    workspace_id=workspace_id,
                    name=name,
                    kind=kind,
                    command=list(fields.command or []),
                    env=dict(fields.env or {}),
                    supports_mcp=True if fields.supports_mcp is None else fields.supports_mcp,
                    permission_policy=fields.permission_policy or PermissionPolicy.ASK,
                    builtin=False,
                )
                uow.db.add(profile)
                await uow.db.flush()
                return profile
        except IntegrityError:
            raise ConflictError("an agent profile with this name already exists", field="name") from None

    async def update(self, profile_id: str, fields: AgentProfileFields) -> AgentProfile:
        """Saved with AgentProfileSaved published (automations re-ack when what their ack reads changed)."""
        try:
            async with self.ctx.unit_of_work() as uow:
                profile = await self._load(uow.db, profile_id, write=True)
                before = AgentProfileSnapshot.of(profile)
                check_rights(self.ctx.principal, fields, profile)
                kind = fields.kind or AgentKind(profile.kind)
                _check_fields(fields, kind)
                if fields.name is not None:
                    profile.name = clean_name(fields.name, "name")
                    if profile.workspace_id is None:
                        await ensure_unique_server_wide(uow.db, AgentProfile, profile.name, profile.id)
                if fields.kind is not None:
                    profile.kind = fields.kind
                if fields.supports_mcp is False and profile.supports_mcp:
                    await _ensure_no_autopilot_runs_on(uow.db, profile)
                for attr in ("command", "env", "supports_mcp", "permission_policy"):
                    value = getattr(fields, attr)
                    if value is not None:
                        setattr(profile, attr, value)
                if profile.kind == AgentKind.ACP and not profile.command:
                    raise ValidationError("an ACP profile needs a command to spawn", field="command")
                profile.updated_at = utcnow()
                await uow.db.flush()
                await self.ctx.publish(uow, AgentProfileSaved(profile, before))
                return profile
        except IntegrityError:
            raise ConflictError("an agent profile with this name already exists", field="name") from None

    async def delete(self, profile_id: str) -> AgentProfile:
        """Deleted with AgentProfileDeleting published first (the automations using it move on)."""
        async with self.ctx.unit_of_work() as uow:
            profile = await self._load(uow.db, profile_id, write=True)
            defaults = select(Workspace.id).where(Workspace.default_agent_profile_id == profile.id).limit(1)
            if await uow.db.scalar(defaults) is not None:
                raise ConflictError("the workspace's default agent profile can't be deleted")
            await self.ctx.publish(uow, AgentProfileDeleting(profile))
            # Its MCP server selections go with it (they name it by id, without a foreign key).
            await uow.db.execute(
                delete(McpServerSelection).where(
                    McpServerSelection.scope == McpScope.PROFILE, McpServerSelection.target_id == profile.id
                )
            )
            await uow.db.delete(profile)
            return profile


async def _ensure_no_autopilot_runs_on(db: AsyncSession, profile: AgentProfile) -> None:
    """Turning MCP off is refused while an unfinished autopilot task would run on the profile: through a
    live session, or (with none) as its own profile or its workspace's default."""
    rows = await db.execute(
        select(Task, Workspace.default_agent_profile_id)
        .join(Workspace, Workspace.id == Task.workspace_id)
        .where(
            Task.autopilot.is_(True),
            Task.deleted_at.is_(None),
            Task.archived_at.is_(None),
            Task.state.not_in((TaskState.COMPLETED, TaskState.CANCELLED)),
            or_(
                Task.agent_profile_id == profile.id,
                Task.agent_profile_id.is_(None) & (Workspace.default_agent_profile_id == profile.id),
                Task.id.in_(select(Session.task_id).where(Session.agent_profile_id == profile.id)),
            ),
        )
    )
    for task, default_id in rows.all():
        sessions = await db.scalars(select(Session).where(Session.task_id == task.id))
        live = [s for s in sessions if not is_terminal(s)]
        runs_on = {s.agent_profile_id for s in live} if live else {task.agent_profile_id or default_id}
        if profile.id in runs_on:
            raise AutopilotNeedsMcpError(
                f"agent profile '{profile.name}' runs autopilot task {task.id}, whose contract needs the Kandev "
                "MCP tools; supports_mcp can't be turned off while it does",
                task_id=task.id,
                agent_profile_id=profile.id,
            )


async def ensure_unique_server_wide(
    db: AsyncSession, model: type[AgentProfile] | type[ExecutorProfile], name: str, own_id: str | None = None
) -> None:
    """Server-wide names are unique too (the table's unique key treats every missing workspace as distinct)."""
    query = select(model.id).where(model.workspace_id.is_(None), model.name == name)
    if own_id is not None:
        query = query.where(model.id != own_id)
    if await db.scalar(query.limit(1)) is not None:
        entity = "an agent profile" if model is AgentProfile else "an executor profile"
        raise ConflictError(f"{entity} with this name already exists", field="name")


def visible_env(profile: AgentProfile, principal: Principal) -> dict[str, str]:
    """The env as the caller may see it: a non-admin sees a server-wide profile's ${secret:NAME} references
    (which they must define in their workspace) but none of the literal text an admin put beside them."""
    if profile.workspace_id is not None or is_admin(principal):
        return dict(profile.env)
    return {key: mask_literals(value) for key, value in profile.env.items()}


def mask_literals(value: str) -> str:
    # With its one group, split alternates literal text and reference names: [text, name, text, ...].
    parts = SECRET_REFERENCE.split(value)
    return "".join(
        f"${{secret:{part}}}" if index % 2 else ("[REDACTED]" if part else "") for index, part in enumerate(parts)
    )


def usable_in(profile_workspace_id: str | None, workspace_id: str) -> bool:
    """A workspace may use its own profiles and the server-wide ones."""
    return profile_workspace_id is None or profile_workspace_id == workspace_id


async def resolve_agent_profile(db: AsyncSession, task: Any, requested_id: str | None = None) -> AgentProfile:
    """The profile a task's agent runs with: the one asked for, the task's own, or the workspace default; it must
    be the task workspace's or server-wide (whose ${secret:NAME} references resolve in the task's workspace)."""
    workspace = await db.get(Workspace, task.workspace_id)
    profile_id = requested_id or task.agent_profile_id or (workspace.default_agent_profile_id if workspace else None)
    profile = await db.get(AgentProfile, profile_id) if profile_id else None
    if profile is None or not usable_in(profile.workspace_id, task.workspace_id):
        raise NotFoundError("agent profile", profile_id)
    return profile


async def author_profile(db: AsyncSession, workspace_id: str) -> AgentProfile:
    """The workspace's built-in authoring agent, made on first use (workspaces made before it existed, and
    new ones, get it only when someone first describes an automation)."""
    query = select(AgentProfile).where(AgentProfile.workspace_id == workspace_id, AgentProfile.kind == AgentKind.AUTHOR)
    profile = await db.scalar(query.order_by(AgentProfile.builtin.desc(), AgentProfile.created_at).limit(1))
    if profile is not None:
        return profile
    profile = _builtin(workspace_id, AUTHOR_PROFILE_NAME, AgentKind.AUTHOR)
    try:
        async with db.begin_nested():
            db.add(profile)
    except IntegrityError:  # made concurrently, or the name is a profile of the user's own
        found = await db.scalar(query.limit(1))
        if found is None:
            raise ConflictError(
                f"the built-in authoring agent can't be added: an agent profile is already named "
                f"'{AUTHOR_PROFILE_NAME}'; rename it, or pick an agent profile for the chat",
                field="agent_profile_id",
            ) from None
        return found
    return profile
