"""The seam between the MCP transport (server.py) and the tool catalogue: who calls, and what they get."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

from mcp import types

from kandev.domain.context import Principal
from kandev.domain.sessions.tool_profiles import McpProfile

Endpoint = Literal["session", "external"]


@dataclass(frozen=True)
class McpCaller:
    """Resolved by the transport from the bearer token; tools never take these from arguments."""

    principal: Principal
    endpoint: Endpoint
    session_id: str | None = None  # set for /mcp/session callers
    task_id: str | None = None
    # The session's tool profile, read with the token check so a call needs no second lookup.
    profile: McpProfile | None = None


class ToolSurface(Protocol):
    """What the transport asks per request; lists may differ per session and change at any time."""

    async def list_tools(self, caller: McpCaller) -> list[types.Tool]: ...

    async def call_tool(
        self, caller: McpCaller, name: str, arguments: dict[str, Any] | None
    ) -> types.CallToolResult: ...
