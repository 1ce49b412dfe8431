"""Everything a worker needs to run a claimed turn, read in one place: agent, env, directory, context."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.access.agent_identities import task_agent_identity
from kandev.domain.access.session_tokens import mint_session_token
from kandev.domain.context import ServiceContext
from kandev.domain.mcp.outbound import checked_definitions
from kandev.domain.mcp.revisions import refresh_desired
from kandev.domain.sealed_secrets import SECRET_REFERENCE, named_secret_values, resolve_env
from kandev.domain.sessions.agent_context import (
    CLOSE,
    context_block,
    history_messages,
    resume_history,
    step_handoff,
)
from kandev.domain.sessions.box_setup import BoxParts, box_parts, with_mcp_commands
from kandev.domain.sessions.tool_profiles import refresh_profile
from kandev.domain.sessions.turns import ClaimedTurn
from kandev.domain.tasks.titles import TITLE_INSTRUCTION, claim_title
from kandev.domain.workspace.agent_profiles import BUILTIN_PROGRAMS, launch_command, missing_command
from kandev.domain.workspace.contributions import agent_git_credentials
from kandev.domain.workspace.workdirs import prepare_home, prepare_workdir
from kandev.models import AgentProfile, Session, Task, WorkflowStep
from kandev.models.base import utcnow
from kandev.models.enums import ExecutorKind
from kandev.platform.agent_host import AgentUser, scripted_requirements
from kandev.platform.data_dir import prepare_work_dir


@dataclass
class TurnSetup:
    argv: list[str]
    env: dict[str, str]
    cwd: str
    permission_policy: str
    supports_mcp: bool
    mcp_url: str
    mcp_token: str
    resume_session_id: str | None
    secrets: list[str] = field(default_factory=list)
    missing_command: str | None = None
    # Prepended to the first prompt this agent process receives, and again whenever it changes.
    context: str = ""
    context_extra: list[str] = field(default_factory=list)
    history: str = ""
    task_origin: str = "user"
    plan_mode: bool = False
    # KANDEV_AGENT_USER: the OS user the agent runs as, and what it must be able to read to start.
    run_as: AgentUser | None = None
    readable: list[str] = field(default_factory=list)
    # What else a warm agent depends on: the session's executor and its MCP tool set.
    executor_profile_id: str | None = None
    tools_revision: int = 0
    # Workspace MCP servers: the desired revision to apply, the applied one to keep if it can't be, the secret
    # values their references need, and the revision this agent is (to be) launched with.
    mcp_desired: list[dict[str, Any]] = field(default_factory=list)
    mcp_desired_revision: int = 0
    mcp_applied: list[dict[str, Any]] = field(default_factory=list)
    mcp_applied_revision: int = 0
    mcp_secrets: dict[str, str] = field(default_factory=dict)
    mcp_revision: int = 0
    # The remote definitions whose URL passes the outbound rule again at launch (a non-admin's).
    mcp_checked: frozenset[str] = frozenset()
    # A box executor's settings and folders (SANDBOX, DOCKER); None: the agent is a plain process.
    box: BoxParts | None = None
    task_id: str = ""

    def fingerprint(self) -> str:
        """A digest of everything the agent process was launched with except its token: a warm agent
        whose fingerprint no longer matches is closed and the session launches fresh."""
        user = self.run_as
        parts = [
            self.argv,
            sorted(self.env.items()),
            self.cwd,
            self.permission_policy,
            self.supports_mcp,
            self.mcp_url,
            self.executor_profile_id,
            self.tools_revision,
            self.mcp_revision,
            sorted(self.mcp_secrets.items()),
            [user.uid, user.gid] if user is not None else None,
            self.box.config.stored() if self.box is not None else None,
        ]
        return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()

    def first_prompt(self, prompt: str, *, loaded: bool) -> str:
        """Context block (with synthesized history when the agent could not load the session) + prompt."""
        block = self.context
        if not loaded and self.history:
            block = block.replace(CLOSE, f"{self.history}\n{CLOSE}")
        return f"{block}\n\n{prompt}" if block else prompt


async def prepare_turn(ctx: ServiceContext, claimed: ClaimedTurn, *, mint_token: bool = True) -> TurnSetup:
    """What the turn's agent needs; `mint_token` False for a warm agent that keeps its token."""
    async with ctx.unit_of_work() as uow:
        db = uow.db
        session = await db.get(Session, claimed.session_id)
        task = await db.get(Task, claimed.task_id)
        assert session is not None and task is not None
        profile = await db.get(AgentProfile, session.agent_profile_id) if session.agent_profile_id else None
        step = await db.get(WorkflowStep, task.workflow_step_id)
        if profile is None:
            return TurnSetup(
                argv=[],
                env={},
                cwd="",
                permission_policy="DENY",
                supports_mcp=False,
                mcp_url="",
                mcp_token="",
                resume_session_id=None,
                missing_command="(the session's agent profile was deleted)",
            )
        env, secrets = await resolve_env(db, ctx.settings.server_key, task.workspace_id, profile.env or {})
        # The tokens the credential helper in the task's repositories reads (never in a remote URL).
        for credential in await agent_git_credentials(db, ctx.settings, task):
            env.update(credential.env())
            secrets.append(credential.token)
        owner = await task_agent_identity(db, ctx.settings, task)
        if owner is not None:
            prepare_home(ctx.settings.work_path, owner)
        if session.working_dir and _kept(Path(session.working_dir), owner):
            workdir = Path(session.working_dir)
        else:
            prepare_work_dir(ctx.settings)
            workdir = await prepare_workdir(db, ctx.settings.work_path, task, session.executor_profile_id, owner)
            session.working_dir = str(workdir)
            session.updated_at = utcnow()
            # Its checkout was reclaimed (automation worktree retention): it exists again, from its branch.
            if task.worktree_reclaimed_at is not None:
                task.worktree_reclaimed_at = None
        builtin = profile.kind in BUILTIN_PROGRAMS
        box = await box_parts(db, ctx.settings, task, session.executor_profile_id, workdir, builtin)
        argv = launch_command(profile)
        if box is not None:
            env.update(box.config.env)
            secrets.extend(box.secrets)
            if builtin:
                # A container runs the image's Python (the package mounted read-only); a sandbox this host's
                # interpreter itself, not a virtualenv's link to it: it sees only the folders it is given.
                argv[0] = "python3" if box.kind == ExecutorKind.DOCKER else os.path.realpath(argv[0])
        # Rebuilt on every launch and resume; a change is announced to the session's MCP connection.
        title_owner = await claim_title(uow, session, task)
        await refresh_profile(uow, session, task)
        await refresh_desired(db, session, task)
        if box is not None:
            box = with_mcp_commands(box, [*(session.mcp_servers_desired or []), *(session.mcp_servers_applied or [])])
        mcp_secrets = await named_secret_values(
            db,
            ctx.settings.server_key,
            task.workspace_id,
            _references(session.mcp_servers_desired, session.mcp_servers_applied),
        )
        secrets = [*secrets, *mcp_secrets.values()]
        # Each launch or resume gets a token of its own; a warm agent keeps the one it was launched with.
        mcp_token = await mint_session_token(uow, session.id) if mint_token else ""
        history = ""
        if claimed.turn_seq > 1:
            history = resume_history(await history_messages(db, session.id, claimed.turn_id))
        extra = [TITLE_INSTRUCTION] if title_owner else []
        return TurnSetup(
            argv=argv,
            env=env,
            cwd=str(workdir),
            permission_policy=profile.permission_policy,
            supports_mcp=profile.supports_mcp,
            mcp_url=f"{ctx.settings.resolved_public_url()}/mcp/session",
            mcp_token=mcp_token,
            resume_session_id=session.acp_session_id,
            secrets=secrets,
            # A container's command is the image's business: only a process here must find its command here.
            missing_command=None if box is not None and box.kind == "docker" else missing_command(profile),
            context=await _context(db, task, session, step, extra),
            context_extra=extra,
            history=history,
            task_origin=task.origin,
            plan_mode=session.plan_mode,
            run_as=owner,
            readable=scripted_requirements() if owner and profile.kind in BUILTIN_PROGRAMS else [],
            executor_profile_id=session.executor_profile_id,
            tools_revision=session.mcp_profile_revision,
            mcp_desired=list(session.mcp_servers_desired or []),
            mcp_desired_revision=session.mcp_servers_desired_revision,
            mcp_applied=list(session.mcp_servers_applied or []),
            mcp_applied_revision=session.mcp_servers_applied_revision,
            mcp_secrets=mcp_secrets,
            mcp_revision=session.mcp_servers_desired_revision,
            mcp_checked=await checked_definitions(
                db, task.workspace_id, [*(session.mcp_servers_desired or []), *(session.mcp_servers_applied or [])]
            ),
            box=box,
            task_id=task.id,
        )


def _kept(workdir: Path, owner: AgentUser | None) -> bool:
    """The session's working directory can be used as it is: it exists and belongs to the identity its agent
    runs as (after a change of KANDEV_AGENT_USER or KANDEV_AGENT_UIDS it is prepared again, and taken over)."""
    try:
        info = workdir.lstat()
    except FileNotFoundError:
        return False
    return stat.S_ISDIR(info.st_mode) and (owner is None or info.st_uid == owner.uid)


def _references(*revisions: list[dict[str, Any]] | None) -> set[str]:
    """The secret names the header and env values of these revisions' servers reference."""
    values = [
        v
        for entries in revisions
        for e in entries or []
        for v in [*(e.get("headers") or {}).values(), *(e.get("env") or {}).values()]
    ]
    return {name for value in values for name in SECRET_REFERENCE.findall(value)}


async def _context(db: AsyncSession, task: Task, session: Session, step: WorkflowStep | None, extra: list[str]) -> str:
    return context_block(task, session, step, extra=extra, handoff=await step_handoff(db, task))


async def mark_mcp_applied(ctx: ServiceContext, session_id: str, revision: int, entries: list[dict[str, Any]]) -> None:
    """The agent was launched with this revision: it is the applied one now (a later desired one waits)."""
    async with ctx.unit_of_work() as uow:
        session = await uow.db.get(Session, session_id)
        if session is not None and revision > session.mcp_servers_applied_revision:
            session.mcp_servers_applied = entries
            session.mcp_servers_applied_revision = revision
            session.updated_at = utcnow()


async def remember_acp_session(ctx: ServiceContext, session_id: str, acp_session_id: str) -> None:
    async with ctx.unit_of_work() as uow:
        session = await uow.db.get(Session, session_id)
        if session is not None and session.acp_session_id != acp_session_id:
            session.acp_session_id = acp_session_id
            session.updated_at = utcnow()
