"""Remote MCP servers at launch: a non-admin's URL passes the outbound rule again (kandev.domain.outbound) before
the agent receives it, since DNS may answer differently now than when it was saved; a server that fails is not
delivered, and the transcript says so."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.errors import ValidationError
from kandev.domain.outbound import SETTING, OutboundPolicy
from kandev.models import McpServer, User, Workspace


async def checked_definitions(db: AsyncSession, workspace_id: str, entries: list[dict[str, Any]]) -> frozenset[str]:
    """The remote definitions among `entries` whose URL must pass the rule at launch: all but server-wide ones
    (an admin's), unless the workspace's owner is an admin (then they are the owner's own choice)."""
    remote = {entry["id"] for entry in entries if entry.get("kind") == "REMOTE"}
    if not remote:
        return frozenset()
    owner_is_admin = await db.scalar(
        select(User.admin).join(Workspace, Workspace.owner_id == User.id).where(Workspace.id == workspace_id)
    )
    if owner_is_admin:
        return frozenset()
    server_wide = set(
        await db.scalars(select(McpServer.id).where(McpServer.id.in_(remote), McpServer.workspace_id.is_(None)))
    )
    return frozenset(remote - server_wide)


def outward_entries(
    entries: list[dict[str, Any]], checked: Collection[str], policy: OutboundPolicy
) -> tuple[list[dict[str, Any]], list[str]]:
    """`entries` without the checked ones whose URL now points inward (blocking: resolves their hosts), and the
    names of the servers left out."""
    kept, refused = [], []
    for entry in entries:
        if entry["id"] in checked:
            try:
                policy.check_url(str(entry.get("url") or ""), "url")
            except ValidationError:
                refused.append(str(entry["name"]))
                continue
        kept.append(entry)
    return kept, refused


def refusal_note(names: list[str]) -> str:
    """The transcript's word on servers left out (their names only: never a URL, which may carry a secret)."""
    listed = ", ".join(f"'{name}'" for name in names)
    noun = "MCP server" if len(names) == 1 else "MCP servers"
    return (
        f"Not given to the agent: {noun} {listed}, whose URL now points to this machine or a private network (or "
        f"no longer resolves). Only an admin's definitions may; an admin can allow a host with {SETTING}."
    )
