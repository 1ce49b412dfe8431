"""Workspace secrets: encrypted with a key derived from the server key; values never leave the backend
except into an agent's environment, and are redacted from everything the agent prints."""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Mapping

from cryptography.fernet import Fernet
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.access.scope import load_workspace
from kandev.domain.context import ServiceContext
from kandev.domain.errors import ConflictError, NotFoundError, ValidationError
from kandev.models import AgentProfile, Secret, Session, Task
from kandev.models.base import new_id
from kandev.platform.log_redaction import remember_secrets

SECRET_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,99}")
MAX_VALUE_LENGTH = 65_536
# Profile env values reference secrets as ${secret:NAME}.
SECRET_REFERENCE = re.compile(r"\$\{secret:([A-Za-z_][A-Za-z0-9_]*)\}")


def cipher(server_key: bytes) -> Fernet:
    digest = hashlib.sha256(b"kandev-secrets:" + server_key).digest()
    return Fernet(base64.urlsafe_b64encode(digest))


def referenced_names(env: Mapping[str, str]) -> set[str]:
    return {m for value in env.values() if isinstance(value, str) for m in SECRET_REFERENCE.findall(value)}


async def _decrypt(db: AsyncSession, server_key: bytes, workspace_id: str, names: set[str]) -> dict[str, str]:
    """The named secrets of a workspace that exist, decrypted (and kept out of this process's logs)."""
    if not names:
        return {}
    rows = await db.scalars(select(Secret).where(Secret.workspace_id == workspace_id, Secret.name.in_(names)))
    fernet = cipher(server_key)
    values = {row.name: fernet.decrypt(row.ciphertext).decode() for row in rows}
    remember_secrets(values.values())
    return values


async def named_secret_values(
    db: AsyncSession, server_key: bytes, workspace_id: str, names: set[str]
) -> dict[str, str]:
    """The named secrets of a workspace that exist, decrypted; missing names are simply absent."""
    return await _decrypt(db, server_key, workspace_id, names)


async def session_secret_values(db: AsyncSession, server_key: bytes, session_id: str) -> list[str]:
    """The secret values a session's agent is given: its profile env's references, in its task's workspace."""
    row = (
        await db.execute(
            select(AgentProfile.env, Task.workspace_id)
            .select_from(Session)
            .join(Task, Task.id == Session.task_id)
            .join(AgentProfile, AgentProfile.id == Session.agent_profile_id)
            .where(Session.id == session_id)
        )
    ).first()
    if row is None:
        return []
    env, workspace_id = row
    return list((await _decrypt(db, server_key, workspace_id, referenced_names(env or {}))).values())


async def resolve_env(
    db: AsyncSession, server_key: bytes, workspace_id: str, env: Mapping[str, str]
) -> tuple[dict[str, str], list[str]]:
    """Substitute ${secret:NAME} references; returns the env and the secret values used (for redaction)."""
    names = referenced_names(env)
    values = await _decrypt(db, server_key, workspace_id, names)
    missing = names - values.keys()
    if missing:
        raise ConflictError(f"the agent profile references unknown secrets: {', '.join(sorted(missing))}")
    resolved = {key: SECRET_REFERENCE.sub(lambda m: values[m.group(1)], value) for key, value in env.items()}
    return resolved, list(values.values())


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
