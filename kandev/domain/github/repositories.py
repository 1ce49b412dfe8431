"""Which GitHub repositories a workspace has: its repositories whose `origin` is on the connected host."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.github.remotes import parse_remote
from kandev.models import Repository


async def connected_repositories(db: AsyncSession, workspace_id: str, host: str) -> dict[str, str]:
    """Workspace repository id -> `owner/name`, for every repository whose origin is on `host`."""
    rows = await db.execute(select(Repository.id, Repository.remote_url).where(Repository.workspace_id == workspace_id))
    found = {}
    for repository_id, remote in rows:
        parsed = parse_remote(remote)
        if parsed is not None and parsed[0] == host.lower():
            found[repository_id] = parsed[1]
    return found
