"""Workspace secrets: encrypted with a key derived from the server key; values never leave the backend
except into an agent's environment, and are redacted from everything the agent prints."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.context import ServiceContext
from kandev.domain.errors import ConflictError, NotFoundError, ValidationError
from kandev.domain.scope import load_workspace
from kandev.domain.sealed_secrets import MAX_VALUE_LENGTH, SECRET_NAME, cipher
from kandev.models import Secret
from kandev.models.base import new_id
from kandev.platform.log_redaction import remember_secrets


def check_value(value: object) -> None:
    """Typed errors that never echo the value: it must reach an agent's environment intact."""
    if not isinstance(value, str) or not value:
        raise ValidationError("the secret value must not be empty", field="value")
    if len(value) > MAX_VALUE_LENGTH:
        raise ValidationError(f"the secret value is longer than {MAX_VALUE_LENGTH} characters", field="value")
    if "\x00" in value or any("\ud800" <= ch <= "\udfff" for ch in value):
        raise ValidationError("the secret value must be text without NUL characters or lone surrogates", field="value")


class SecretService:
    def __init__(self, ctx: ServiceContext, server_key: bytes) -> None:
        self.ctx = ctx
        self.server_key = server_key

    async def list(self, workspace_id: str) -> list[Secret]:
        async with self.ctx.read() as db:
            await load_workspace(db, self.ctx.principal, workspace_id)
            return list(
                await db.scalars(select(Secret).where(Secret.workspace_id == workspace_id).order_by(Secret.name))
            )

    async def create(self, workspace_id: str, name: str, value: str) -> Secret:
        # Remembered before any check, so no log line about a refused attempt can carry it either.
        remember_secrets([value])
        if not isinstance(name, str) or not SECRET_NAME.fullmatch(name):
            raise ValidationError("secret names are letters, digits and _ and start with a letter or _", field="name")
        check_value(value)
        try:
            async with self.ctx.unit_of_work() as uow:
                await load_workspace(uow.db, self.ctx.principal, workspace_id)
                secret = Secret(
                    id=new_id(),
                    workspace_id=workspace_id,
                    name=name,
                    ciphertext=cipher(self.server_key).encrypt(value.encode()),
                )
                uow.db.add(secret)
                await uow.db.flush()
                return secret
        except IntegrityError:
            raise ConflictError("a secret with this name already exists", field="name") from None

    async def replace(self, secret_id: str, value: str) -> Secret:
        """A new value under the same name: profiles referencing it get it at their next agent start (a warm
        agent whose environment changed is relaunched)."""
        remember_secrets([value])
        check_value(value)
        async with self.ctx.unit_of_work() as uow:
            secret = await self._load(uow.db, secret_id)
            secret.ciphertext = cipher(self.server_key).encrypt(value.encode())
            return secret

    async def delete(self, secret_id: str) -> Secret:
        async with self.ctx.unit_of_work() as uow:
            secret = await self._load(uow.db, secret_id)
            await uow.db.delete(secret)
            return secret

    async def _load(self, db: AsyncSession, secret_id: str) -> Secret:
        secret = await db.get(Secret, secret_id)
        if secret is None:
            raise NotFoundError("secret", secret_id)
        try:
            await load_workspace(db, self.ctx.principal, secret.workspace_id)
        except NotFoundError:
            raise NotFoundError("secret", secret_id) from None
        return secret
