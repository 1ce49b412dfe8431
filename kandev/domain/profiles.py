"""Agent and executor profiles: the built-in ones every workspace gets."""

from __future__ import annotations

import sys

from sqlalchemy.ext.asyncio import AsyncSession

from kandev.models import AgentProfile, ExecutorProfile
from kandev.models.base import new_id
from kandev.models.enums import AgentKind, ExecutorKind, PermissionPolicy

SCRIPTED_PROFILE_NAME = "Scripted"


def scripted_agent_command() -> list[str]:
    return [sys.executable, "-m", "kandev.runtime.scripted"]


def add_builtin_profiles(session: AsyncSession, workspace_id: str) -> tuple[AgentProfile, ExecutorProfile]:
    """Stage the Scripted agent and the scratch, worktree and local executors; returns the defaults."""
    agent = AgentProfile(
        id=new_id(),
        workspace_id=workspace_id,
        name=SCRIPTED_PROFILE_NAME,
        kind=AgentKind.SCRIPTED,
        # The command is resolved at launch (the interpreter path differs between machines).
        command=[],
        env={},
        supports_mcp=True,
        permission_policy=PermissionPolicy.ALLOW,
        builtin=True,
    )
    session.add(agent)
    executors = [
        ExecutorProfile(id=new_id(), workspace_id=workspace_id, name=kind.value, kind=kind, builtin=True)
        for kind in (ExecutorKind.WORKTREE, ExecutorKind.LOCAL, ExecutorKind.SCRATCH)
    ]
    session.add_all(executors)
    return agent, executors[0]
