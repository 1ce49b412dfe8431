"""The backend-owned tool surface: the caller's profile picks the tools; a call is validated against
the advertised schema, then runs its GraphQL operation in process as the caller."""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import Callable
from typing import Any

from graphql import GraphQLError
from mcp import types

from kandev.api import schema
from kandev.domain.errors import DomainError
from kandev.domain.profiles import EXTERNAL_PROFILE, McpProfile, session_profile
from kandev.domain.secrets import session_secret_values
from kandev.mcp_bridge import tools  # noqa: F401 - registers every tool in the catalogue
from kandev.mcp_bridge.catalogue import CATALOGUE, ToolCall, ToolInputError, ToolSpec
from kandev.mcp_bridge.surface import McpCaller
from kandev.mcp_bridge.validation import argument_errors
from kandev.models import Session, Task
from kandev.runtime.base import Redactor
from kandev.schema.context import Context
from kandev.schema.error_text import value_free
from kandev.state import AppState

log = logging.getLogger("kandev.mcp")


def tool_result(payload: dict[str, Any], *, error: bool = False) -> types.CallToolResult:
    """One JSON object, as structured content and as one text block (DESIGN.md section 4)."""
    text = json.dumps(payload, default=str)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=payload, is_error=error
    )


def tool_error(message: str, code: str = "INVALID_ARGUMENTS") -> types.CallToolResult:
    return tool_result({"error": message, "code": code}, error=True)


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
        async with self._state().db.read() as db:
            session = await db.get(Session, caller.session_id)
            task = await db.get(Task, session.task_id) if session else None
            if session is None or task is None:
                return McpProfile(EXTERNAL_PROFILE.surface, frozenset())  # never reached: auth checked it
            return session_profile(session, task)

    async def list_tools(self, caller: McpCaller) -> list[types.Tool]:
        names = (await self.profile(caller)).tool_names()
        return [to_mcp_tool(CATALOGUE[n]) for n in names if n in CATALOGUE]

    async def call_tool(self, caller: McpCaller, name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
        if name not in (await self.profile(caller)).tool_names() or name not in CATALOGUE:
            return tool_error(
                f"unknown tool '{name}' for this session" if _plain(name) else "unknown tool", "UNKNOWN_TOOL"
            )
        spec = CATALOGUE[name]
        args = dict(arguments or {})
        if caller.principal.session_id is not None:
            # Before anything else sees them: nothing an agent writes may store or log its secrets.
            args = await self._without_secrets(caller.principal.session_id, args)
        problems = argument_errors(spec.validation_schema, args)
        if problems:
            return tool_error("; ".join(problems))
        for ignored in spec.ignored:
            args.pop(ignored, None)
        for alias, canonical in spec.aliases.items():
            if alias in args:
                if canonical in args:
                    return tool_error(f"send either {canonical} or {alias}, not both")
                args[canonical] = args.pop(alias)
        missing = [name for name in spec.aliased_required if name not in args]
        if missing:
            return tool_error(f"missing required field{'s' if len(missing) > 1 else ''}: {', '.join(missing)}")
        try:
            return await self._run(spec, caller, args)
        except ToolInputError as error:
            return tool_error(str(error))
        except DomainError as error:
            return tool_error(error.message, error.code)
        except Exception:
            log.exception("tool %s failed", name)
            return tool_error("the tool failed unexpectedly; the error was logged", "INTERNAL")

    async def _without_secrets(self, session_id: str, args: dict[str, Any]) -> dict[str, Any]:
        """The arguments with every secret value the session's agent was given replaced by REDACTED."""
        state = self._state()
        async with state.db.read() as db:
            values = await session_secret_values(db, state.settings.server_key, session_id)
        return Redactor(values).data(args) if values else args

    async def _run(self, spec: ToolSpec, caller: McpCaller, args: dict[str, Any]) -> types.CallToolResult:
        state = self._state()
        services = state.services(caller.principal)

        async def caller_workspace() -> str | None:
            if caller.task_id is None:
                return None
            return (await services.tasks.get(caller.task_id)).workspace_id

        call = ToolCall(args, caller, caller_workspace)
        variables = spec.variables(call)
        if inspect.isawaitable(variables):
            variables = await variables
        result = await schema.execute(
            spec.document, variable_values=variables, context_value=Context.for_services(services)
        )
        if result.errors:
            return _graphql_error(result.errors[0])
        data = result.data or {}
        for payload in data.values():
            # A mutation answered with one of its union's error types.
            if isinstance(payload, dict) and payload.get("__typename", "").endswith("Error") and "code" in payload:
                return tool_error(payload["message"], payload["code"])
        shaped = spec.result(data)
        if spec.follow_up is not None:
            shaped = await spec.follow_up(shaped, call, services)
        return tool_result(shaped)


def _graphql_error(error: GraphQLError) -> types.CallToolResult:
    original = error.original_error
    if isinstance(original, DomainError):
        return tool_error(original.message, original.code)
    if original is None:  # a document or variable problem: ours, not the caller's
        log.error("tool operation rejected by the schema: %s", value_free(error.message))
    else:
        log.error("tool operation failed", exc_info=original)
    return tool_error("the tool failed unexpectedly; the error was logged", "INTERNAL")


def _plain(name: str) -> bool:
    return name.replace("_", "").isalnum() and len(name) <= 64
