"""A workspace's GitHub connection (its token kept as a workspace secret) and the server-wide GitHub App.

The token is verified against GitHub before anything is stored; it never appears in an answer, a log line or
an error (it is remembered for log redaction before any check)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.context import ServiceContext, ensure_admin
from kandev.domain.errors import PermissionDeniedError, UnprocessableError, ValidationError
from kandev.domain.events import CodeHostsChanged
from kandev.domain.github.api import GitHubAuthError, GitHubError, GitHubRateLimitedError, github_api
from kandev.domain.github.remotes import api_host
from kandev.domain.scope import load_workspace
from kandev.domain.sealed_secrets import cipher
from kandev.domain.workspace.code_hosts import forget_connection
from kandev.models import GithubApp, GithubConnection, GithubInstallation, Secret
from kandev.models.base import new_id, utcnow
from kandev.platform.log_redaction import remember_secrets
from kandev.platform.settings import Settings

# The workspace secret that holds the connection's token (profiles may reference it as ${secret:...}).
TOKEN_SECRET = "GITHUB_CONNECTION_TOKEN"
APP_ROW = "server"
MAX_TOKEN_LENGTH = 1_000
MAX_PRIVATE_KEY_LENGTH = 16_384
MAX_WEBHOOK_SECRET_LENGTH = 1_000
_APP_ID = re.compile(r"[0-9]{1,20}")


@dataclass(frozen=True)
class ConnectionRecord:
    workspace_id: str
    login: str
    host: str
    connected_at: datetime

    @classmethod
    def of(cls, row: GithubConnection) -> ConnectionRecord:
        return cls(row.workspace_id, row.login, row.host, row.created_at)


@dataclass(frozen=True)
class AppRecord:
    app_id: str
    updated_at: datetime


def _check_secret_text(value: object, field: str, limit: int) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(f"{field} must not be empty", field=field)
    if len(value) > limit or "\x00" in value:
        raise ValidationError(f"{field} must be text of at most {limit} characters", field=field)
    return value.strip()


async def workspace_token(
    db: AsyncSession, settings: Settings, workspace_id: str
) -> tuple[GithubConnection, str] | None:
    """The workspace's connection and its decrypted token (remembered for redaction), or None."""
    row = (
        await db.execute(
            select(GithubConnection, Secret.ciphertext)
            .join(Secret, Secret.id == GithubConnection.secret_id)
            .where(GithubConnection.workspace_id == workspace_id)
        )
    ).first()
    if row is None:
        return None
    token = cipher(settings.server_key).decrypt(row[1]).decode()
    remember_secrets([token])
    return row[0], token


async def connected_workspace_ids(db: AsyncSession) -> list[str]:
    """The workspaces a poll covers: those with a GitHub connection."""
    return list(await db.scalars(select(GithubConnection.workspace_id).order_by(GithubConnection.workspace_id)))


async def app_webhook_secret(db: AsyncSession, settings: Settings) -> str | None:
    """The GitHub App's webhook secret (remembered for redaction), or None when no App is set."""
    row = await db.get(GithubApp, APP_ROW)
    if row is None:
        return None
    secret = cipher(settings.server_key).decrypt(row.webhook_secret_ciphertext).decode()
    remember_secrets([secret])
    return secret


def _installation_id(value: object) -> int:
    """A GitHub App installation id: a positive integer (or its digits)."""
    if isinstance(value, str) and _APP_ID.fullmatch(value.strip()):
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 2**63:
        raise ValidationError("installationId is the installation's numeric id", field="installationId")
    return value


class GithubService:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    def _in_person(self, what: str) -> None:
        if self.ctx.principal.session_id is not None:
            raise PermissionDeniedError(f"an agent session can not {what}")

    async def connection(self, workspace_id: str) -> ConnectionRecord | None:
        async with self.ctx.read() as db:
            await load_workspace(db, self.ctx.principal, workspace_id)
            row = await db.scalar(select(GithubConnection).where(GithubConnection.workspace_id == workspace_id))
            return ConnectionRecord.of(row) if row else None

    async def connect(self, workspace_id: str, token: str) -> ConnectionRecord:
        """Verify the token (GitHub's authenticated user), then store it as the workspace's connection."""
        remember_secrets([token] if isinstance(token, str) else [])
        self._in_person("connect GitHub")
        token = _check_secret_text(token, "token", MAX_TOKEN_LENGTH)
        if any(c.isspace() for c in token):
            raise ValidationError("token must not contain spaces", field="token")
        async with self.ctx.read() as db:
            await load_workspace(db, self.ctx.principal, workspace_id)
        settings = self.ctx.settings
        try:
            async with github_api(settings.github_api_url, token) as client:
                user = await client.user()
        except GitHubAuthError:
            raise ValidationError("GitHub refused this token", field="token", reason="auth_failed") from None
        except GitHubRateLimitedError as error:
            raise UnprocessableError(
                "GitHub's rate limit for this token is spent; try again later", reset_at=error.reset_at
            ) from None
        except GitHubError as error:
            raise UnprocessableError(f"the token could not be verified: {error.message}") from None
        if not user.login:
            raise UnprocessableError("GitHub did not say whose token this is")
        ciphertext = cipher(settings.server_key).encrypt(token.encode())
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
            row = await uow.db.scalar(select(GithubConnection).where(GithubConnection.workspace_id == workspace_id))
            host = api_host(settings.github_api_url)
            if row is None:
                row = GithubConnection(
                    id=new_id(), workspace_id=workspace_id, secret_id=secret.id, login=user.login, host=host
                )
                uow.db.add(row)
            else:
                row.secret_id, row.login, row.host, row.updated_at = secret.id, user.login, host, utcnow()
            await uow.db.flush()
            # The connection's host (GitHub Enterprise) now counts as GitHub for the live sessions' tools.
            await self.ctx.publish(uow, CodeHostsChanged(workspace_id))
            return ConnectionRecord.of(row)

    async def disconnect(self, workspace_id: str) -> bool:
        """Forget the connection and its token secret; False when there was none."""
        self._in_person("disconnect GitHub")
        async with self.ctx.unit_of_work() as uow:
            await load_workspace(uow.db, self.ctx.principal, workspace_id)
            return await forget_connection(self.ctx, uow, GithubConnection, workspace_id)

    async def set_app(self, app_id: str, private_key: str, webhook_secret: str) -> AppRecord:
        """The server-wide GitHub App (admins only); key and secret encrypted with the server key."""
        remember_secrets([v for v in (private_key, webhook_secret) if isinstance(v, str)])
        ensure_admin(self.ctx.principal, "set the GitHub App")
        if not isinstance(app_id, str) or not _APP_ID.fullmatch(app_id.strip()):
            raise ValidationError("appId is the App's numeric id", field="appId")
        key = _check_secret_text(private_key, "privateKey", MAX_PRIVATE_KEY_LENGTH)
        if not key.startswith("-----BEGIN") or "PRIVATE KEY-----" not in key:
            raise ValidationError("privateKey must be the App's PEM private key", field="privateKey")
        secret = _check_secret_text(webhook_secret, "webhookSecret", MAX_WEBHOOK_SECRET_LENGTH)
        fernet = cipher(self.ctx.settings.server_key)
        async with self.ctx.unit_of_work() as uow:
            row = await uow.db.get(GithubApp, APP_ROW)
            if row is None:
                row = GithubApp(id=APP_ROW)
                uow.db.add(row)
            row.app_id = app_id.strip()
            row.private_key_ciphertext = fernet.encrypt(key.encode())
            row.webhook_secret_ciphertext = fernet.encrypt(secret.encode())
            row.updated_by = self.ctx.principal.actor
            row.updated_at = utcnow()
            await uow.db.flush()
            return AppRecord(row.app_id, row.updated_at)

    async def route_installation(self, workspace_id: str, installation_id: int | str) -> bool:
        """Route the App installation's webhook deliveries to the workspace (admins only); False when it
        already was. An installation may serve several workspaces."""
        ensure_admin(self.ctx.principal, "route a GitHub App installation")
        installation_id = _installation_id(installation_id)
        async with self.ctx.unit_of_work() as uow:
            await load_workspace(uow.db, self.ctx.principal, workspace_id)
            if await uow.db.get(GithubInstallation, (installation_id, workspace_id)) is not None:
                return False
            uow.db.add(
                GithubInstallation(
                    installation_id=installation_id, workspace_id=workspace_id, created_by=self.ctx.principal.actor
                )
            )
            return True

    async def unroute_installation(self, workspace_id: str, installation_id: int | str) -> bool:
        """Stop routing the installation's deliveries to the workspace (admins only); False when it was not."""
        ensure_admin(self.ctx.principal, "route a GitHub App installation")
        installation_id = _installation_id(installation_id)
        async with self.ctx.unit_of_work() as uow:
            await load_workspace(uow.db, self.ctx.principal, workspace_id)
            row = await uow.db.get(GithubInstallation, (installation_id, workspace_id))
            if row is None:
                return False
            await uow.db.delete(row)
            return True
