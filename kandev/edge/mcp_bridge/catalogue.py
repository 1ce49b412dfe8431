"""The tool catalogue: one declarative entry per tool; each runs one GraphQL operation in process."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from kandev.edge.mcp_bridge.surface import McpCaller
from kandev.graphql.contract import command


class ToolInputError(Exception):
    """A tool argument problem found after schema validation (e.g. a default that can't be resolved)."""


@dataclass(frozen=True)
class ToolCall:
    """What a variables builder gets: the validated arguments and who is calling."""

    arguments: dict[str, Any]
    caller: McpCaller


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    input_schema: dict[str, Any]
    document: str
    # GraphQL variables from the call (sync, or async when it must look something up).
    variables: Callable[[ToolCall], dict[str, Any] | Awaitable[dict[str, Any]]]
    # Turns the operation's data into the tool's JSON object (snake_case, created things' id on top).
    result: Callable[[dict[str, Any]], dict[str, Any]]
    # Accepted but never advertised argument names -> canonical name.
    aliases: dict[str, str] = field(default_factory=dict)
    # Accepted but never advertised argument names -> their schema; dropped once validated (kept for
    # prompts written against the original system, e.g. an update carrying the create's external_id).
    ignored: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Work after the operation, for tools that wait (a question waiting for its answer).
    follow_up: Callable[[dict[str, Any], ToolCall, Any], Awaitable[dict[str, Any]]] | None = None

    @cached_property
    def validation_schema(self) -> dict[str, Any]:
        """The advertised schema plus the hidden aliases (which accept what their canonical field does)
        and the hidden ignored arguments."""
        if not self.aliases and not self.ignored:
            return self.input_schema
        properties = dict(self.input_schema.get("properties", {}))
        for alias, canonical in self.aliases.items():
            properties[alias] = properties[canonical]
        properties.update(self.ignored)
        schema = {**self.input_schema, "properties": properties}
        # A required field may come under its alias: that requirement is checked once aliases are resolved.
        aliased = set(self.aliases.values())
        required = [name for name in self.input_schema.get("required", []) if name not in aliased]
        if required:
            schema["required"] = required
        else:
            schema.pop("required", None)
        return schema

    @property
    def aliased_required(self) -> list[str]:
        """Required fields that an alias may supply (validated after the alias is resolved)."""
        aliased = set(self.aliases.values())
        return [name for name in self.input_schema.get("required", []) if name in aliased]


CATALOGUE: dict[str, ToolSpec] = {}


def register(*specs: ToolSpec) -> None:
    for spec in specs:
        assert spec.input_schema.get("additionalProperties") is False, f"{spec.name}: schema must be closed"
        assert spec.name not in CATALOGUE, f"{spec.name} registered twice"
        CATALOGUE[spec.name] = spec


def command_tool(
    name: str,
    mutation: str,
    description: str,
    selection: str,
    result: Callable[[dict[str, Any]], dict[str, Any]],
    *,
    without: tuple[str, ...] = (),
    operation: str = "mutation",
    **options: Any,
) -> ToolSpec:
    """A tool that runs one mutation (or a query declared like one, with operation "query"): its schema,
    variables and document come from the declaration (kandev.graphql.contract); `without` leaves out arguments agents
    don't send; `selection` reads the payload."""
    declared = command(mutation, operation=operation)
    return ToolSpec(
        name=name,
        description=description,
        input_schema=declared.json_schema(without=without),
        document=declared.document(selection),
        variables=lambda call: declared.variables(call.arguments),
        result=lambda data: result(data[mutation]),
        aliases=declared.aliases,
        **options,
    )


def without_typename(payload: dict[str, Any]) -> dict[str, Any]:
    """A payload member's fields as the tool answers them (GraphQL's `__typename` is for telling members apart)."""
    return {k: v for k, v in payload.items() if k != "__typename"}


def obj(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    """A closed JSON object schema."""
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = list(required)
    return schema


def string(description: str, **constraints: Any) -> dict[str, Any]:
    return {"type": "string", "description": description, **constraints}
