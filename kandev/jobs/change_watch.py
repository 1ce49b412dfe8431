"""A task's changes measured while its agent works: a tool call that ends (or a turn that ends) asks for a
refresh of the stored stats and review threads (kandev.domain.reviews.follow), debounced so a burst of tool calls
costs one measure, and each measure lands within about a second of the change that asked for it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from kandev.domain.context import ServiceContext
from kandev.domain.reviews.follow import refresh_changes

log = logging.getLogger("kandev.jobs.change_watch")

DEBOUNCE_SECONDS = 0.25
# A refresh still running when the turn job ends gets this long to store what it measured.
CLOSE_SECONDS = 30.0
_ENDED = ("completed", "failed")


def ends_a_tool_call(kind: str, data: dict[str, Any]) -> bool:
    """An agent update after which files may have changed: a tool call completed or failed."""
    return kind in ("tool_call", "tool_call_update") and data.get("status") in _ENDED


class ChangeWatch:
    def __init__(self, ctx: ServiceContext, task_id: str) -> None:
        self.ctx = ctx
        self.task_id = task_id
        self._dirty = False
        self._running: asyncio.Task[None] | None = None

    def poke(self, delay: float = DEBOUNCE_SECONDS) -> None:
        """Measure again after `delay` (or right after the measure under way, when one is)."""
        self._dirty = True
        if self._running is None or self._running.done():
            self._running = asyncio.create_task(self._refresh(delay), name=f"changes-{self.task_id}")

    async def _refresh(self, delay: float) -> None:
        await asyncio.sleep(delay)
        while self._dirty:
            self._dirty = False
            try:
                await refresh_changes(self.ctx, self.task_id)
            except Exception:  # a stats refresh must never end a turn
                log.exception("could not measure the changes of task %s", self.task_id)

    async def close(self) -> None:
        """Let the refresh under way (if any) finish, within CLOSE_SECONDS."""
        running = self._running
        if running is None or running.done():
            return
        with contextlib.suppress(BaseException):
            async with asyncio.timeout(CLOSE_SECONDS):
                await asyncio.shield(running)
