"""Each command is declared once, as its GraphQL input (or its mutation's arguments): a field's type,
default and description for people come from Strawberry, and `arg`/`argument` add the limits and the
description for agents. The MCP tool schemas and REST bodies are derived from it (kandev.graphql.contract), and
`check_declared` enforces the limits for GraphQL callers, so a limit changed here changes every surface."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import strawberry
from strawberry.extensions import FieldExtension
from strawberry.types.base import has_object_definition
from strawberry.types.field import StrawberryField
from strawberry.utils.str_converters import to_camel_case

from kandev.domain.errors import ValidationError
from kandev.graphql.schema.errors import Error, to_graphql_error

METADATA_KEY = "kandev"
_REQUIRED: Any = dataclasses.MISSING


@dataclass(frozen=True)
class Declared:
    """What a field adds to its GraphQL type: an agent-facing description and JSON-schema-style limits.
    On a list of strings the length limits apply to each item."""

    agent: str | None = None
    min_length: int | None = None
    max_length: int | None = None
    min_items: int | None = None
    max_items: int | None = None
    minimum: int | None = None
    maximum: int | None = None
    # null is a value the snake_case surfaces may send (it clears), not only an omission.
    nullable: bool = False
    # An enum the snake_case surfaces spell in lowercase (GraphQL keeps its uppercase names).
    lowercase: bool = False
    # The shape agents are shown for a JSON scalar (the domain checks it and names what is wrong).
    json_schema: Mapping[str, Any] | None = None
    # Other snake_case names accepted for this field but never advertised (prompts written for the original
    # system); a caller sending both is refused.
    aliases: tuple[str, ...] = ()

    def json_limits(self) -> dict[str, int]:
        names = {
            "min_length": "minLength",
            "max_length": "maxLength",
            "min_items": "minItems",
            "max_items": "maxItems",
            "minimum": "minimum",
            "maximum": "maximum",
        }
        return {names[k]: getattr(self, k) for k in names if getattr(self, k) is not None}


def _metadata(agent: str | None, limits: Mapping[str, Any]) -> dict[str, Declared]:
    return {METADATA_KEY: Declared(agent=agent, **limits)}


def arg(
    description: str | None = None,
    *,
    default: Any = _REQUIRED,
    agent: str | None = None,
    nullable: bool = False,
    lowercase: bool = False,
    json_schema: Mapping[str, Any] | None = None,
    aliases: tuple[str, ...] = (),
    **limits: int,
) -> Any:
    """An input field with its limits and its agent-facing description."""
    shape = {"nullable": nullable, "lowercase": lowercase, "json_schema": json_schema, "aliases": aliases}
    return strawberry.field(default=default, description=description, metadata=_metadata(agent, limits | shape))


def argument(
    description: str | None = None,
    *,
    agent: str | None = None,
    json_schema: Mapping[str, Any] | None = None,
    **limits: int,
) -> Any:
    """A mutation argument with its limits and its agent-facing description (use inside `Annotated`)."""
    return strawberry.argument(
        description=description, metadata=_metadata(agent, limits | {"json_schema": json_schema})
    )


def declared(metadata: Mapping[Any, Any] | None) -> Declared:
    found = (metadata or {}).get(METADATA_KEY)
    return found if isinstance(found, Declared) else Declared()


def check_declared(value: object, path: str = "") -> None:
    """Refuse an input object that breaks one of its declared limits, naming the field (never its value)."""
    if not has_object_definition(value):
        return
    for field in type(value).__strawberry_definition__.fields:  # type: ignore[attr-defined]
        name = f"{path}{field.graphql_name or to_camel_case(field.python_name)}"
        item = getattr(value, field.python_name, None)
        limits = declared(field.metadata)
        if item is None or item is strawberry.UNSET:
            continue
        _check(limits, name, item)
        for index, element in enumerate(item if isinstance(item, list) else [item]):
            check_declared(element, f"{name}[{index}]." if isinstance(item, list) else f"{name}.")


def check_value(limits: Declared, name: str, value: object) -> None:
    """A mutation argument's declared limits."""
    if value is not None and value is not strawberry.UNSET:
        _check(limits, name, value)


def _check(limits: Declared, name: str, value: object) -> None:
    if isinstance(value, str):
        if limits.min_length is not None and len(value) < limits.min_length:
            raise ValidationError(f"{name} must have at least {limits.min_length} characters", field=name)
        if limits.max_length is not None and len(value) > limits.max_length:
            raise ValidationError(f"{name} must be at most {limits.max_length} characters", field=name)
    elif isinstance(value, list):
        if limits.min_items is not None and len(value) < limits.min_items:
            raise ValidationError(f"{name} takes at least {limits.min_items} items", field=name)
        if limits.max_items is not None and len(value) > limits.max_items:
            raise ValidationError(f"{name} takes at most {limits.max_items} items", field=name)
        for index, item in enumerate(value):
            if isinstance(item, str):
                _check(limits, f"{name}[{index}]", item)
    elif isinstance(value, int) and not isinstance(value, bool):
        if limits.minimum is not None and value < limits.minimum:
            raise ValidationError(f"{name} must be at least {limits.minimum}", field=name)
        if limits.maximum is not None and value > limits.maximum:
            raise ValidationError(f"{name} must be at most {limits.maximum}", field=name)


class DeclaredLimits(FieldExtension):
    """Checks a mutation's arguments against their declared limits before its resolver runs; a broken limit
    is answered with the mutation's ValidationError member, as the domain's own checks are."""

    def apply(self, field: StrawberryField) -> None:
        self.arguments = {a.python_name: a for a in field.arguments}

    def _check_arguments(self, kwargs: dict[str, Any]) -> None:
        for name, value in kwargs.items():
            found = self.arguments.get(name)
            # Named as the GraphQL caller wrote it.
            shown = (found.graphql_name if found else None) or to_camel_case(name)
            check_value(declared(found.metadata if found else None), shown, value)
            check_declared(value, f"{shown}." if name != "input" else "")

    def _refusal(self, kwargs: dict[str, Any]) -> Error | None:
        try:
            self._check_arguments(kwargs)
        except ValidationError as error:
            return to_graphql_error(error)
        return None

    def resolve(self, next_: Callable[..., Any], source: Any, info: Any, **kwargs: Any) -> Any:
        return self._refusal(kwargs) or next_(source, info, **kwargs)

    async def resolve_async(self, next_: Callable[..., Any], source: Any, info: Any, **kwargs: Any) -> Any:
        refusal = self._refusal(kwargs)
        if refusal is not None:
            return refusal
        result = next_(source, info, **kwargs)
        return await result if inspect.isawaitable(result) else result


class DeclaredQueryLimits(DeclaredLimits):
    """DeclaredLimits for a query field, which has no error members: a broken limit is a query error with
    code VALIDATION, raised before its resolver runs."""

    def resolve(self, next_: Callable[..., Any], source: Any, info: Any, **kwargs: Any) -> Any:
        self._check_arguments(kwargs)
        return next_(source, info, **kwargs)

    async def resolve_async(self, next_: Callable[..., Any], source: Any, info: Any, **kwargs: Any) -> Any:
        self._check_arguments(kwargs)
        result = next_(source, info, **kwargs)
        return await result if inspect.isawaitable(result) else result


def enforce_declared_limits(mutation: type) -> type:
    """Adds DeclaredLimits to every field of the root Mutation type."""
    for field in mutation.__strawberry_definition__.fields:  # type: ignore[attr-defined]
        field.extensions.append(DeclaredLimits())
    return mutation
