"""The workspace's GitHub connection as a git credential: its token for its host."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.github.connections import workspace_token
from kandev.domain.workspace.git_credentials import GitCredential
from kandev.platform.settings import Settings

# What GitHub expects as the username beside a token over https.
GITHUB_GIT_USERNAME = "x-access-token"


async def github_credential(db: AsyncSession, settings: Settings, workspace_id: str, host: str) -> GitCredential | None:
    found = await workspace_token(db, settings, workspace_id)
    if found is None or found[0].host.lower() != host.lower():
        return None
    return GitCredential(host=host.lower(), username=GITHUB_GIT_USERNAME, token=found[1])
