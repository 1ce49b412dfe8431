"""Secrets as every aggregate meets them: sealed at rest with a key derived from the server key, referenced as
${secret:NAME} from profile, MCP server and automation settings, and decrypted only to reach an agent's
environment or a code host (and then kept out of this process's logs)."""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Mapping

from cryptography.fernet import Fernet
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.errors import ConflictError
from kandev.models import AgentProfile, Secret, Session, Task
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
