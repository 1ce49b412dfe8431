"""The workspace's GitLab connection as a git credential: its token for its instance's host."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.gitlab.connections import workspace_gitlab_credentials
from kandev.domain.workspace.git_credentials import GitCredential
from kandev.platform.settings import Settings

# What GitLab accepts as the username beside a (personal, project or OAuth) access token over https.
GITLAB_GIT_USERNAME = "oauth2"


async def gitlab_credential(db: AsyncSession, settings: Settings, workspace_id: str, host: str) -> GitCredential | None:
    found = await workspace_gitlab_credentials(db, settings, workspace_id)
    if found is None or found.host.lower() != host.lower():
        return None
    return GitCredential(host=host.lower(), username=GITLAB_GIT_USERNAME, token=found.token)
