"""Public MCP Registry metadata, when KANDEV_MCP_REGISTRY_URL is set: fetched with a bounded timeout and size, at
most once per minimum interval, and cached in the data dir with when it was fetched. An unreachable registry leaves
the last good cache in place, shown as stale. Adding an entry makes a normal definition through McpServerService."""

from __future__ import annotations

import asyncio
import json
import os
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from kandev.domain.context import ServiceContext
from kandev.domain.errors import NotFoundError, ValidationError
from kandev.domain.mcp.definitions import McpServerService
from kandev.domain.mcp.registry_entries import MAX_ENTRIES, RegistryEntry, parse_page
from kandev.domain.mcp.rules import McpServerFields
from kandev.domain.scope import load_workspace
from kandev.models import McpServer
from kandev.models.enums import McpServerKind

CACHE_FILE = "mcp-registry.json"
MAX_PAGE_BYTES = 2 * 1024 * 1024
MAX_PAGES = 10
PAGE_LIMIT = 100
_locks: dict[str, asyncio.Lock] = {}


@dataclass
class RegistryView:
    """What the marketplace shows: entries from the last good fetch and how current they are."""

    status: str  # "DISABLED" | "FRESH" | "STALE" | "UNAVAILABLE"
    fetched_at: datetime | None = None
    checked_at: datetime | None = None
    error: str | None = None
    entries: list[RegistryEntry] = field(default_factory=list)


class RegistryUnreachable(Exception):
    """The registry gave no usable answer; the message is safe to show (no body, no URL credentials)."""


def _stamp(value: float | None) -> datetime | None:
    return datetime.fromtimestamp(value, UTC) if value else None


class McpRegistryService:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx
        self.url = (ctx.settings.mcp_registry_url or "").rstrip("/")
        self.path = ctx.settings.data_path / CACHE_FILE

    async def view(self, workspace_id: str, *, refresh: bool = False) -> RegistryView:
        """The cached registry; fetched first when asked to, when there is no cache or it is past its max age,
        unless the last attempt was within the minimum interval."""
        async with self.ctx.read() as db:
            await load_workspace(db, self.ctx.principal, workspace_id)
        if not self.url:
            return RegistryView(status="DISABLED")
        cache = self._read()
        now = time.time()
        settings = self.ctx.settings
        due = (
            refresh or not cache.get("fetched_at") or now - cache["fetched_at"] > settings.mcp_registry_max_age_seconds
        )
        if due and now - cache.get("attempted_at", 0) >= settings.mcp_registry_min_refresh_seconds:
            lock = _locks.setdefault(str(self.path), asyncio.Lock())
            async with lock:
                cache = self._read()
                if time.time() - cache.get("attempted_at", 0) >= settings.mcp_registry_min_refresh_seconds:
                    cache = await self._refresh(cache)
        return self._to_view(cache)

    async def entry(self, workspace_id: str, key: str) -> RegistryEntry:
        """An active entry of the cache (deprecated and deleted ones are not found)."""
        view = await self.view(workspace_id)
        for entry in view.entries:
            if entry.key == key:
                return entry
        raise NotFoundError("MCP registry entry", key)

    async def add(self, workspace_id: str, key: str, option: int | None, name: str | None) -> McpServer:
        """Add an active entry's remote or exact npm package as a normal definition (with auth on an npm package
        is an admin's server-wide definition); its declared secrets are bound by reference."""
        entry = await self.entry(workspace_id, key)
        if entry.status != "ACTIVE":
            raise ValidationError(
                f"this registry entry is {entry.status.lower()} and can't be added", field="entry_key", reason="status"
            )
        options = entry.options
        index = option if option is not None else next((i for i, o in enumerate(options) if o.installable), -1)
        if not 0 <= index < len(options) or not options[index].installable:
            raise ValidationError("this registry option can't be added", field="option", reason="not_installable")
        chosen = options[index]
        kind = McpServerKind(chosen.kind or "")
        fields = McpServerFields(name=name or entry.suggested_name(), kind=kind)
        if kind == McpServerKind.REMOTE:
            fields.url = chosen.url
            fields.headers = dict(chosen.bindings) or None
        else:
            fields.package = chosen.package
            fields.env = dict(chosen.bindings) or None
        local_server_wide = kind == McpServerKind.NPM and self.ctx.settings.auth == "on"
        return await McpServerService(self.ctx).create(None if local_server_wide else workspace_id, fields)

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) and data.get("url") == self.url else {}

    def _write(self, data: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(f".{CACHE_FILE}.{os.getpid()}")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            json.dump(data, handle)
        Path(temporary).replace(self.path)

    async def _refresh(self, cache: dict[str, Any]) -> dict[str, Any]:
        cache = {**cache, "url": self.url, "attempted_at": time.time()}
        try:
            entries = await self._fetch()
        except RegistryUnreachable as error:
            cache["error"] = str(error)
        else:
            cache.update(fetched_at=cache["attempted_at"], error=None, entries=[e.to_json() for e in entries])
        self._write(cache)
        return cache

    async def _fetch(self) -> list[RegistryEntry]:
        """Every page (bounded in count and size), all within one timeout."""
        seconds = self.ctx.settings.mcp_registry_timeout_seconds
        entries: dict[str, RegistryEntry] = {}
        cursor: str | None = None
        try:
            async with (
                asyncio.timeout(seconds),
                httpx.AsyncClient(timeout=httpx.Timeout(seconds), follow_redirects=False) as client,
            ):
                for _ in range(MAX_PAGES):
                    params = {"limit": str(PAGE_LIMIT), **({"cursor": cursor} if cursor else {})}
                    body = await self._page(client, params)
                    page, cursor = parse_page(body)
                    for entry in page:
                        entries.setdefault(entry.key, entry)
                    if not cursor or len(entries) >= MAX_ENTRIES:
                        break
        except (httpx.HTTPError, TimeoutError):
            raise RegistryUnreachable("the MCP registry could not be reached") from None
        except ValueError:
            raise RegistryUnreachable("the MCP registry answered with something that is not a server list") from None
        return list(entries.values())[:MAX_ENTRIES]

    async def _page(self, client: httpx.AsyncClient, params: dict[str, str]) -> Any:
        async with client.stream("GET", f"{self.url}/v0/servers", params=params) as response:
            if response.status_code != 200:
                raise RegistryUnreachable(f"the MCP registry answered HTTP {response.status_code}")
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > MAX_PAGE_BYTES:
                    raise RegistryUnreachable("the MCP registry's answer is too large")
        return json.loads(bytes(body))

    def _to_view(self, cache: dict[str, Any]) -> RegistryView:
        entries = [RegistryEntry.from_json(e) for e in cache.get("entries", [])]
        fetched, attempted = cache.get("fetched_at"), cache.get("attempted_at")
        if not fetched:
            status = "UNAVAILABLE"
        elif cache.get("error") or time.time() - fetched > self.ctx.settings.mcp_registry_max_age_seconds:
            status = "STALE"
        else:
            status = "FRESH"
        return RegistryView(
            status=status,
            fetched_at=_stamp(fetched),
            checked_at=_stamp(attempted),
            error=cache.get("error"),
            entries=[e for e in entries if e.status == "ACTIVE"],  # deprecated and deleted ones aren't offered
        )
