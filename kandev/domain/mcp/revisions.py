"""A session's effective MCP servers (the union over its task's repositories, its agent profile, its task and
itself, one entry per definition with every origin) and the desired revision it is saved as. The worker applies a
desired revision when it next launches the agent (an active turn keeps the list it was launched with)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.models import McpServer, McpServerSelection, Session, Task, TaskRepository
from kandev.models.enums import TERMINAL_SESSION_STATES, McpScope

SCOPE_ORDER = {scope: index for index, scope in enumerate(McpScope)}


async def session_targets(db: AsyncSession, session: Session, task: Task) -> list[tuple[McpScope, str]]:
    """Every (scope, id) a session inherits from, widest first."""
    targets: list[tuple[McpScope, str]] = []
    if session.agent_profile_id:
        targets.append((McpScope.PROFILE, session.agent_profile_id))
    repositories = await db.scalars(
        select(TaskRepository.repository_id)
        .where(TaskRepository.task_id == task.id)
        .order_by(TaskRepository.position, TaskRepository.repository_id)
    )
    targets += [(McpScope.REPOSITORY, repository_id) for repository_id in repositories]
    targets += [(McpScope.TASK, task.id), (McpScope.SESSION, session.id)]
    return targets


async def selected_at(
    db: AsyncSession, targets: list[tuple[McpScope, str]], workspace_id: str
) -> list[tuple[McpServer, McpScope, str]]:
    """The definitions selected at any of `targets` that the workspace may use (its own and server-wide)."""
    if not targets:
        return []
    where = or_(
        *(and_(McpServerSelection.scope == scope, McpServerSelection.target_id == tid) for scope, tid in targets)
    )
    rows = await db.execute(
        select(McpServer, McpServerSelection.scope, McpServerSelection.target_id)
        .join(McpServerSelection, McpServerSelection.mcp_server_id == McpServer.id)
        .where(where, or_(McpServer.workspace_id == workspace_id, McpServer.workspace_id.is_(None)))
    )
    return [(server, McpScope(scope), target) for server, scope, target in rows.tuples()]


async def effective_servers(db: AsyncSession, session: Session, task: Task) -> list[dict[str, Any]]:
    """The session's effective set: one snapshot per definition, with `origins` [{scope, id}] widest first."""
    entries: dict[str, dict[str, Any]] = {}
    for server, scope, target in await selected_at(db, await session_targets(db, session, task), task.workspace_id):
        entry = entries.setdefault(server.id, {**server.snapshot(), "origins": []})
        entry["origins"].append({"scope": scope.value, "id": target})
    for entry in entries.values():
        entry["origins"].sort(key=lambda o: (SCOPE_ORDER[McpScope(o["scope"])], o["id"]))
    return sorted(entries.values(), key=lambda e: (e["name"], e["id"]))


async def refresh_desired(db: AsyncSession, session: Session, task: Task) -> bool:
    """Save the effective set as a new desired revision when it changed; True when it did."""
    entries = await effective_servers(db, session, task)
    if entries == list(session.mcp_servers_desired or []):
        return False
    session.mcp_servers_desired = entries
    session.mcp_servers_desired_revision = (session.mcp_servers_desired_revision or 0) + 1
    return True


async def refresh_live_sessions(db: AsyncSession, workspace_id: str | None) -> int:
    """Recompute the desired revision of every live session of the workspace (every workspace for a server-wide
    change) after a definition or a selection changed; returns how many changed."""
    query = (
        select(Session, Task)
        .join(Task, Task.id == Session.task_id)
        .where(Task.deleted_at.is_(None), Session.state.not_in([s.value for s in TERMINAL_SESSION_STATES]))
    )
    if workspace_id is not None:
        query = query.where(Task.workspace_id == workspace_id)
    changed = 0
    for session, task in (await db.execute(query)).tuples():
        changed += await refresh_desired(db, session, task)
    return changed
