"""The long-lived connections this process holds open for people — GraphQL WebSockets, MCP sessions and streams
on `/mcp` — by the personal access token that opened them, so that a revoked token, a removed user or a withdrawn
admin flag reaches them at once, on every replica.

An announcement (kandev.platform.session_access) closes a revoked credential's connections, or switches their caller to
the one the person is now, before this process acknowledges it, so the change's caller returns only once no
replica serves the old access. Each connection is also checked against the database when it may have missed an
announcement: when it opened while one may have been under way, while this process's watch is not trusted (Redis
lost), and every RECHECK_SECONDS regardless (what bounds a change whose announcement Redis refused)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, replace

from kandev.domain.context import Principal
from kandev.platform.session_access import AccessWatch, PersonChange

log = logging.getLogger(__name__)

# token ids -> the ones that still prove someone, with that user's admin flag now.
Verify = Callable[[Collection[str]], Awaitable[dict[str, bool]]]
Close = Callable[[], Awaitable[None]]


@dataclass(eq=False)
class OpenConnection:
    principal: Principal
    close: Close
    # Switches the connection's caller (a WebSocket's later operations run as the person is now).
    recall: Callable[[Principal], None] | None = None


class OpenConnections:
    RECHECK_SECONDS = 30.0
    UNTRUSTED_POLL_SECONDS = 0.5

    def __init__(self) -> None:
        self._open: set[OpenConnection] = set()
        self._closing: set[asyncio.Task[None]] = set()
        self._watch: AccessWatch | None = None
        self._verify: Verify | None = None
        self._task: asyncio.Task[None] | None = None
        self._suspect: set[OpenConnection] = set()
        self._missed = False

    def start(self, watch: AccessWatch, verify: Verify) -> None:
        self._watch, self._verify = watch, verify
        self._task = asyncio.create_task(self._run(), name="kandev-open-connections")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.wait({self._task}, timeout=3)
            self._task = None
        if self._closing:
            await asyncio.wait(set(self._closing), timeout=3)

    def mark(self) -> int | None:
        """Taken before a credential is checked: `open` rechecks a connection if anything was announced since."""
        watch = self._watch
        return watch.generation if watch is not None and watch.trusted() else None

    def open(
        self,
        principal: Principal,
        close: Close,
        recall: Callable[[Principal], None] | None = None,
        mark: int | None = None,
    ) -> Callable[[], None]:
        """Hold `close` (and `recall`) for as long as the connection is open; call the answer when it ends."""
        if principal.credential is None:  # auth off's local user, or no token: nothing that can be revoked
            return lambda: None
        connection = OpenConnection(principal, close, recall)
        self._open.add(connection)
        if mark is None or mark != self.mark():  # its check may have raced an announcement
            self._suspect.add(connection)
        return lambda: self._release(connection)

    def apply(self, changes: list[PersonChange] | None) -> None:
        """The watch's word (synchronous, before it acknowledges): these changes, or None when some may have
        been missed."""
        if changes is None:
            self._missed = True
            return
        for change in changes:
            for connection in list(self._open):
                self._apply(connection, change)

    def _apply(self, connection: OpenConnection, change: PersonChange) -> None:
        principal = connection.principal
        token, user = change.get("token"), change.get("user")
        if (token is not None and principal.credential == token) or (
            change.get("removed") and principal.user_id == user
        ):
            self._close(connection)
        elif "admin" in change and principal.user_id == user and principal.admin != change["admin"]:
            self._recall(connection, change["admin"])

    def _close(self, connection: OpenConnection) -> None:
        if connection not in self._open:
            return
        self._release(connection)
        task = asyncio.create_task(self._closed(connection), name="kandev-close-revoked")
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def _closed(self, connection: OpenConnection) -> None:
        try:
            await connection.close()
        except Exception:  # the connection may already be going; it is no longer held either way
            log.debug("closing a revoked connection failed", exc_info=True)

    def _recall(self, connection: OpenConnection, admin: bool) -> None:
        connection.principal = replace(connection.principal, admin=admin)
        if connection.recall is not None:
            connection.recall(connection.principal)

    def _release(self, connection: OpenConnection) -> None:
        self._open.discard(connection)
        self._suspect.discard(connection)

    async def _run(self) -> None:
        checked = time.monotonic()
        while True:
            await asyncio.sleep(self.UNTRUSTED_POLL_SECONDS)
            watch = self._watch
            every = (
                self._missed
                or watch is None
                or not watch.trusted()
                or time.monotonic() - checked > self.RECHECK_SECONDS
            )
            if every:
                self._missed, checked = False, time.monotonic()
            chosen, self._suspect = (set(self._open) if every else self._suspect), set()
            if chosen:
                try:
                    await self._recheck(chosen)
                except Exception:  # the database may be down too: try again at the next turn
                    log.warning("open connections could not be checked against the database", exc_info=True)
                    self._missed = True

    async def _recheck(self, connections: Collection[OpenConnection]) -> None:
        assert self._verify is not None
        live = await self._verify({c.principal.credential for c in connections if c.principal.credential})
        for connection in connections:
            admin = live.get(connection.principal.credential or "")
            if admin is None:
                self._close(connection)
            elif connection in self._open and connection.principal.admin != admin:
                self._recall(connection, admin)
