"""The backend-owned tool surface: the caller's profile picks the tools; a call is validated against
the advertised schema, then runs its GraphQL operation in process as the caller."""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import Callable
from typing import Any

from mcp import types
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from kandev.domain.access.session_grants import SessionPrincipal
from kandev.domain.context import Principal
from kandev.domain.errors import DomainError, NotFoundError
from kandev.domain.sealed_secrets import session_secret_values
from kandev.domain.sessions.tool_profiles import EXTERNAL_PROFILE, McpProfile
from kandev.edge.arguments import ArgumentClash, argument_errors, resolve_aliases
from kandev.edge.mcp_bridge import tools  # noqa: F401 - registers every tool in the catalogue
from kandev.edge.mcp_bridge.catalogue import CATALOGUE, ToolCall, ToolInputError, ToolSpec
from kandev.edge.mcp_bridge.surface import McpCaller
from kandev.graphql.contract import OperationFailed, Refused, run
from kandev.graphql.schema.context import Context
from kandev.runtime.base import Redactor
from kandev.wiring import AppState

log = logging.getLogger("kandev.mcp")


def tool_result(payload: dict[str, Any], *, error: bool = False) -> types.CallToolResult:
    """One JSON object, as structured content and as one text block (DESIGN.md section 4)."""
    text = json.dumps(payload, default=str)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=payload, is_error=error
    )


def tool_error(
    message: str, code: str = "INVALID_ARGUMENTS", fields: dict[str, Any] | None = None
) -> types.CallToolResult:
    """An is_error result; a domain error's `fields` (ids, limits, reason: never a submitted value) go with it."""
    payload: dict[str, Any] = {"error": message, "code": code}
    if fields:
        payload["fields"] = fields
    return tool_result(payload, error=True)


def to_mcp_tool(spec: ToolSpec) -> types.Tool:
    return types.Tool(name=spec.name, description=spec.description, input_schema=spec.input_schema)


class KandevToolSurface:
    def __init__(self, state: Callable[[], AppState]) -> None:
        self._state = state

    async def profile(self, caller: McpCaller) -> McpProfile:
        if caller.endpoint == "external" or caller.session_id is None:
            return EXTERNAL_PROFILE
        if caller.profile is not None:
            return caller.profile
        try:
            return await self._state().services(caller.principal).sessions.mcp_profile(caller.session_id)
        except NotFoundError:  # ended between the token check and now: no tools
            return McpProfile(EXTERNAL_PROFILE.surface, frozenset())

    async def list_tools(self, caller: McpCaller) -> list[types.Tool]:
        names = (await self.profile(caller)).tool_names()
        return [to_mcp_tool(CATALOGUE[n]) for n in names if n in CATALOGUE]

    async def call_tool(self, caller: McpCaller, name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
        if name not in (await self.profile(caller)).tool_names() or name not in CATALOGUE:
            # The spec's tool error handling names an unknown tool a protocol error, not a tool result.
            message = f"unknown tool '{name}' for this session" if _plain(name) else "unknown tool"
            raise MCPError(INVALID_PARAMS, message, data={"code": "UNKNOWN_TOOL"})
        spec = CATALOGUE[name]
        args = dict(arguments or {})
        if caller.principal.session_id is not None:
            # Before anything else sees them: nothing an agent writes may store or log its secrets.
            args = await self._without_secrets(caller.principal, args)
        problems = argument_errors(spec.validation_schema, args)
        if problems:
            return tool_error("; ".join(problems))
        for ignored in spec.ignored:
            args.pop(ignored, None)
        try:
            args = resolve_aliases(args, spec.aliases)
        except ArgumentClash as clash:
            return tool_error(str(clash))
        missing = [name for name in spec.aliased_required if name not in args]
        if missing:
            return tool_error(f"missing required field{'s' if len(missing) > 1 else ''}: {', '.join(missing)}")
        try:
            return await self._run(spec, caller, args)
        except ToolInputError as error:
            return tool_error(str(error))
        except DomainError as error:
            return tool_error(error.message, error.code, error.wire_fields())
        except Refused as error:
            return tool_error(error.message, error.code, error.fields)
        except OperationFailed as error:
            log.error("tool %s: operation failed: %s", name, error, exc_info=error.__cause__)
            return tool_error("the tool failed unexpectedly; the error was logged", "INTERNAL")
        except Exception:
            log.exception("tool %s failed", name)
            return tool_error("the tool failed unexpectedly; the error was logged", "INTERNAL")

    async def _without_secrets(self, principal: Principal, args: dict[str, Any]) -> dict[str, Any]:
        """The arguments with every secret value the session's agent was given replaced by REDACTED (read with
        the token check; looked up only for a principal built another way)."""
        values = principal.secret_values if isinstance(principal, SessionPrincipal) else None
        if values is None:
            state = self._state()
            async with state.db.read() as db:
                values = tuple(await session_secret_values(db, state.settings.server_key, str(principal.session_id)))
        return Redactor(list(values)).data(args) if values else args

    async def _run(self, spec: ToolSpec, caller: McpCaller, args: dict[str, Any]) -> types.CallToolResult:
        services = self._state().services(caller.principal)
        call = ToolCall(args, caller)
        variables = spec.variables(call)
        if inspect.isawaitable(variables):
            variables = await variables
        data = await run(Context.for_services(services), spec.document, variables)
        shaped = spec.result(data)
        if spec.follow_up is not None:
            shaped = await spec.follow_up(shaped, call, services)
        return tool_result(shaped)


def _plain(name: str) -> bool:
    return name.replace("_", "").isalnum() and len(name) <= 64
