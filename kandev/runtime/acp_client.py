"""The client half of ACP: delivers an agent's session updates in order and answers its permission asks."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallUpdate,
)

from kandev.runtime.acp_updates import translate
from kandev.runtime.base import (
    AgentUpdate,
    PermissionHandler,
    PermissionOptionInfo,
    PermissionPolicy,
    PermissionRequest,
    Redactor,
    UpdateHandler,
)

log = logging.getLogger(__name__)

ALLOW_KINDS = ("allow_once", "allow_always")
REJECT_KINDS = ("reject_once", "reject_always")


def pick_option(options: list[PermissionOptionInfo], kinds: tuple[str, ...]) -> str | None:
    """The first option whose kind comes first in `kinds`."""
    for kind in kinds:
        for option in options:
            if option.kind == kind:
                return option.option_id
    return None


class AcpClient:
    """What the agent calls back into; one pump task hands updates to `on_update` one at a time."""

    def __init__(
        self,
        policy: PermissionPolicy,
        redactor: Redactor,
        on_update: UpdateHandler,
        on_permission: PermissionHandler | None,
    ) -> None:
        # Updates before the session id is known replay history the caller already has: dropped.
        self.session_id: str | None = None
        self.stopping = False
        self._policy = policy
        self._redactor = redactor
        self._on_update = on_update
        self._on_permission = on_permission
        self._queue: asyncio.Queue[AgentUpdate] = asyncio.Queue()
        # The session's cost as the agent last told it, and where the running turn's began; the context now.
        self._cost_total = self._cost_base = 0.0
        self.context: tuple[Any, Any] = (None, None)
        self._pump = asyncio.create_task(self._deliver(), name="agent-updates")

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        # No await before the enqueue: notifications start in arrival order, so order is kept.
        if self.session_id is None or session_id != self.session_id:
            return
        if getattr(update, "session_update", None) == "usage_update":
            return  # read raw by `observe`: the acp package refuses some agents' usage updates
        try:
            self._queue.put_nowait(translate(update, self._redactor))
        except Exception:
            log.exception("could not translate a session update")

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **kwargs: Any
    ) -> RequestPermissionResponse:
        chosen = await self._decide(tool_call, options)
        if chosen is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=chosen))

    def observe(self, event: Any) -> None:
        """A raw incoming message (a connection observer): this session's `usage_update` becomes a `usage`
        update, read leniently, since the acp package refuses one whose `used` is null (Claude Code sends that)."""
        message = getattr(event, "message", None)
        if not isinstance(message, dict) or message.get("method") != "session/update":
            return
        params = message.get("params")
        if not isinstance(params, dict):
            return
        update = params.get("update")
        if not isinstance(update, dict) or update.get("sessionUpdate") != "usage_update":
            return
        if self.session_id is None or params.get("sessionId") != self.session_id:
            return
        cost = update.get("cost")
        self.context = (update.get("used"), update.get("size"))
        data: dict[str, Any] = {"context_used": self.context[0], "context_size": self.context[1]}
        amount = cost.get("amount") if isinstance(cost, dict) and cost.get("currency", "USD") == "USD" else None
        if isinstance(amount, int | float) and not isinstance(amount, bool):
            # ACP's cost is the session's so far: the turn's is what it grew by since the turn began.
            if amount < self._cost_base:
                self._cost_base = 0.0  # the agent started counting again (a new process)
            self._cost_total = float(amount)
            data["cost_usd"] = self._cost_total - self._cost_base
        self._queue.put_nowait(AgentUpdate("usage", "", data))

    def begin_turn(self) -> None:
        """A prompt is sent: the turn's cost counts from the session's cost so far."""
        self._cost_base = self._cost_total
        self.context = (None, None)

    def turn_cost(self) -> float | None:
        """What this turn cost so far, when the agent told."""
        return self._cost_total - self._cost_base if self._cost_total != self._cost_base else None

    async def delivered(self) -> None:
        """Returns once every update received so far has been handed to `on_update`."""
        await self._queue.join()

    def in_pump(self) -> bool:
        """True when called from inside `on_update` (which must not wait for its own delivery)."""
        return asyncio.current_task() is self._pump

    async def stop(self, drain_timeout: float) -> None:
        """Deliver what is queued (for up to `drain_timeout`), then stop the pump."""
        if drain_timeout > 0:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(drain_timeout):
                    await self._queue.join()
        self._pump.cancel()
        while not self._queue.empty():
            self._queue.get_nowait()
            self._queue.task_done()

    async def _deliver(self) -> None:
        while True:
            update = await self._queue.get()
            try:
                await self._on_update(update)
            except Exception:
                log.exception("on_update failed")
            finally:
                self._queue.task_done()

    async def _decide(self, tool_call: ToolCallUpdate, options: list[PermissionOption]) -> str | None:
        infos = [PermissionOptionInfo(o.option_id, o.name, str(o.kind)) for o in options]
        if self._policy == "ALLOW":
            return pick_option(infos, ALLOW_KINDS)
        if self._policy == "ASK" and self._on_permission is not None and not self.stopping:
            request = PermissionRequest(
                tool_call_id=tool_call.tool_call_id,
                title=self._redactor.text(tool_call.title or ""),
                options=infos,
                raw_input=self._redactor.data(tool_call.raw_input),
            )
            try:
                chosen = await self._on_permission(request)
            except Exception:
                log.exception("on_permission failed; rejecting")
                chosen = None
            if chosen is not None and chosen in {o.option_id for o in infos}:
                return chosen
        return pick_option(infos, REJECT_KINDS)
