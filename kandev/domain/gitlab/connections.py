"""A workspace's GitLab connection: the instance's base URL and a token kept as a workspace secret.

The token is verified against the instance (`GET /api/v4/user`) before anything is stored; it never appears in
an answer, a log line or an error (it is remembered for log redaction before any check). The base URL is an
http(s) URL without credentials, query or fragment; the settings' `gitlab_url` is the default."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.context import ServiceContext, ensure_admin
from kandev.domain.errors import PermissionDeniedError, UnprocessableError, ValidationError
from kandev.domain.events import CodeHostsChanged
from kandev.domain.gitlab.api import GitLabAuthError, GitLabError, gitlab_api
from kandev.domain.scope import load_workspace
from kandev.domain.sealed_secrets import cipher
from kandev.domain.workspace.code_hosts import forget_connection
from kandev.models import GitlabConnection, Secret
from kandev.models.base import new_id, utcnow
from kandev.platform.log_redaction import remember_secrets
from kandev.platform.settings import Settings

# The workspace secret that holds the connection's token (profiles may reference it as ${secret:...}).
TOKEN_SECRET = "GITLAB_CONNECTION_TOKEN"
MAX_TOKEN_LENGTH = 1_000
MAX_BASE_URL_LENGTH = 500


@dataclass(frozen=True)
class GitlabConnectionRecord:
    workspace_id: str
    username: str
    base_url: str
    host: str
    connected_at: datetime

    @classmethod
    def of(cls, row: GitlabConnection) -> GitlabConnectionRecord:
        return cls(row.workspace_id, row.username, row.base_url, row.host, row.created_at)


@dataclass(frozen=True)
class GitlabCredentials:
    """What a caller needs to talk to (or git-fetch from) a workspace's GitLab: never log or show `token`."""

    base_url: str
    host: str
    username: str
    token: str


def clean_base_url(value: object) -> str:
    """An http(s) URL without credentials, query or fragment, without a trailing slash (or /api/v4)."""
    field = "baseUrl"
    if not isinstance(value, str) or not value.strip():
        raise ValidationError("baseUrl must not be empty", field=field)
    value = value.strip()
    if len(value) > MAX_BASE_URL_LENGTH or any(c.isspace() or ord(c) < 32 for c in value):
        raise ValidationError(f"baseUrl must be a URL of at most {MAX_BASE_URL_LENGTH} characters", field=field)
    try:
        split = urlsplit(value)
        port = split.port  # ValueError on a bad port
    except ValueError:
        raise ValidationError("baseUrl must be an http(s) URL", field=field) from None
    del port
    # The value is never echoed: a URL with credentials would leak them into the error.
    if split.scheme not in ("http", "https") or not split.hostname:
        raise ValidationError("baseUrl must be an http(s) URL, e.g. https://gitlab.com", field=field)
    if split.username or split.password or "@" in split.netloc:
        raise ValidationError("baseUrl must not carry credentials: give the token separately", field=field)
    if split.query or split.fragment:
        raise ValidationError("baseUrl must not have a query or fragment", field=field)
    path = split.path.rstrip("/").removesuffix("/api/v4")
    return f"{split.scheme}://{split.netloc.lower()}{path}"


def host_of(base_url: str) -> str:
    return (urlsplit(base_url).hostname or "").lower()


async def workspace_gitlab_credentials(
    db: AsyncSession, settings: Settings, workspace_id: str
) -> GitlabCredentials | None:
    """The workspace's GitLab instance and decrypted token (remembered for redaction), or None when the
    workspace has no GitLab connection. For API calls and git credential helpers; never put the token in a
    remote URL, a log or an answer."""
    row = (
        await db.execute(
            select(GitlabConnection, Secret.ciphertext)
            .join(Secret, Secret.id == GitlabConnection.secret_id)
            .where(GitlabConnection.workspace_id == workspace_id)
        )
    ).first()
    if row is None:
        return None
    token = cipher(settings.server_key).decrypt(row[1]).decode()
    remember_secrets([token])
    connection: GitlabConnection = row[0]
    return GitlabCredentials(connection.base_url, connection.host, connection.username, token)


async def workspace_gitlab_host(db: AsyncSession, workspace_id: str) -> str | None:
    """The host of the workspace's GitLab connection, or None."""
    return await db.scalar(select(GitlabConnection.host).where(GitlabConnection.workspace_id == workspace_id))


class GitlabService:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    def _in_person(self, what: str) -> None:
        if self.ctx.principal.session_id is not None:
            raise PermissionDeniedError(f"an agent session can not {what}")

    async def connection(self, workspace_id: str) -> GitlabConnectionRecord | None:
        async with self.ctx.read() as db:
            await load_workspace(db, self.ctx.principal, workspace_id)
            row = await db.scalar(select(GitlabConnection).where(GitlabConnection.workspace_id == workspace_id))
            return GitlabConnectionRecord.of(row) if row else None

    async def connect(self, workspace_id: str, token: str, base_url: str | None = None) -> GitlabConnectionRecord:
        """Verify the token (GitLab's authenticated user) on the instance, then store it as the workspace's
        connection (replacing an earlier one)."""
        remember_secrets([token] if isinstance(token, str) else [])
        self._in_person("connect GitLab")
        if not isinstance(token, str) or not token.strip():
            raise ValidationError("token must not be empty", field="token")
        token = token.strip()
        if len(token) > MAX_TOKEN_LENGTH or any(c.isspace() or ord(c) < 32 for c in token):
            raise ValidationError(f"token must be at most {MAX_TOKEN_LENGTH} characters without spaces", field="token")
        default = clean_base_url(self.ctx.settings.gitlab_url)
        base = clean_base_url(base_url) if base_url is not None and base_url.strip() else default
        if base != default:
            # The server calls this URL with the token: another instance than the configured one is an
            # admin's choice (with auth off, the local user is the admin), never any workspace member's.
            ensure_admin(self.ctx.principal, "connect a GitLab instance other than the server's", field="baseUrl")
        async with self.ctx.read() as db:
            await load_workspace(db, self.ctx.principal, workspace_id)
        try:
            async with gitlab_api(base, token) as client:
                user = await client.user()
        except GitLabAuthError:
            raise ValidationError("GitLab refused this token", field="token", reason="auth_failed") from None
        except GitLabError as error:
            raise UnprocessableError(f"the token could not be verified: {error.message}") from None
        if not user.username:
            raise UnprocessableError("GitLab did not say whose token this is")
        ciphertext = cipher(self.ctx.settings.server_key).encrypt(token.encode())
        async with self.ctx.unit_of_work() as uow:
            await load_workspace(uow.db, self.ctx.principal, workspace_id)
            secret = await uow.db.scalar(
                select(Secret).where(Secret.workspace_id == workspace_id, Secret.name == TOKEN_SECRET)
            )
            if secret is None:
                secret = Secret(id=new_id(), workspace_id=workspace_id, name=TOKEN_SECRET, ciphertext=ciphertext)
                uow.db.add(secret)
                await uow.db.flush()
            else:
                secret.ciphertext = ciphertext
            row = await uow.db.scalar(select(GitlabConnection).where(GitlabConnection.workspace_id == workspace_id))
            if row is None:
                row = GitlabConnection(
                    id=new_id(),
                    workspace_id=workspace_id,
                    secret_id=secret.id,
                    base_url=base,
                    host=host_of(base),
                    username=user.username,
                )
                uow.db.add(row)
            else:
                row.secret_id, row.base_url, row.host = secret.id, base, host_of(base)
                row.username, row.updated_at = user.username, utcnow()
            await uow.db.flush()
            # The instance's host now counts as GitLab: live sessions with repositories on it get the tools.
            await self.ctx.publish(uow, CodeHostsChanged(workspace_id))
            return GitlabConnectionRecord.of(row)

    async def disconnect(self, workspace_id: str) -> bool:
        """Forget the connection and its token secret; False when there was none."""
        self._in_person("disconnect GitLab")
        async with self.ctx.unit_of_work() as uow:
            await load_workspace(uow.db, self.ctx.principal, workspace_id)
            return await forget_connection(self.ctx, uow, GitlabConnection, workspace_id)
