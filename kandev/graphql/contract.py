"""The public command contract, derived from the GraphQL schema: for each mutation, the snake_case JSON
schema of its arguments (MCP tool schemas and REST bodies), the mapping of snake_case arguments to its
GraphQL variables, and the operation document that runs it. Nothing here is written per command: the
declaration is the mutation's input type (kandev.graphql.schema.declare)."""

from __future__ import annotations

import copy
import re
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any, NoReturn

from graphql import (
    DocumentNode,
    GraphQLArgument,
    GraphQLEnumType,
    GraphQLError,
    GraphQLInputField,
    GraphQLInputObjectType,
    GraphQLInputType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLScalarType,
    execute,
    parse,
    specified_rules,
    validate,
)
from graphql.pyutils import Undefined
from strawberry.execution import optimized_is_awaitable

from kandev.domain.errors import DomainError
from kandev.graphql.root import schema
from kandev.graphql.schema.caching import CACHED_DOCUMENTS
from kandev.graphql.schema.declare import Declared, declared
from kandev.graphql.schema.error_text import value_free
from kandev.graphql.schema.limits import LIMIT_RULES, operation_problems

# The one JSON shape of a task on the snake_case surfaces (MCP tool results and REST bodies).
TASK_FIELDS = (
    "id",
    "title",
    "state",
    "autopilot",
    "origin",
    "parent_id",
    "workspace_id",
    "workflow_id",
    "workflow_step_id",
    "external_id",
    "prompt",
    "agent_profile_id",
    "executor_profile_id",
    "pending_action",
    "block_reason",
    "created_at",
    "updated_at",
    "archived_at",
)
BACKREF = "strawberry-definition"
# What a mutation's error members answer with.
ERROR_SELECTION = "__typename ... on Error { message code fields } ... on ValidationError { field }"
_SCALARS = {"String": "string", "ID": "string", "Boolean": "boolean", "Int": "integer", "Float": "number"}


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def snake_selection(fields: tuple[str, ...]) -> str:
    """A GraphQL selection answering with snake_case names (aliases where GraphQL says camelCase)."""
    return " ".join(f"{name}: {camel(name)}" if "_" in name else name for name in fields)


TASK = snake_selection(TASK_FIELDS)


@dataclass(frozen=True)
class Parameter:
    """One snake_case argument of a command and where it goes in the GraphQL variables."""

    name: str
    graphql_name: str
    type: GraphQLInputType
    schema: dict[str, Any]
    required: bool
    limits: Declared = Declared()


def _json(kind: GraphQLInputType) -> dict[str, Any]:
    if isinstance(kind, GraphQLNonNull):
        return _json(kind.of_type)
    if isinstance(kind, GraphQLList):
        return {"type": "array", "items": _json(kind.of_type)}
    if isinstance(kind, GraphQLEnumType):
        return {"type": "string", "enum": list(kind.values)}
    if isinstance(kind, GraphQLInputObjectType):
        return object_schema(_parameters(kind.fields))
    if isinstance(kind, GraphQLScalarType) and kind.name in _SCALARS:
        return {"type": _SCALARS[kind.name]}
    return {"type": "object"}  # JSON


def _declared(field: GraphQLArgument | GraphQLInputField) -> Declared:
    strawberry_field = (field.extensions or {}).get(BACKREF)
    return declared(getattr(strawberry_field, "metadata", None))


def _shaped(kind: GraphQLInputType, limits: Declared) -> dict[str, Any]:
    """A field's JSON schema with what its declaration adds: limits (a string list's length limits go to
    its items), a JSON scalar's shape, lowercase enum spellings and null as a value."""
    schema_ = copy.deepcopy(dict(limits.json_schema)) if limits.json_schema is not None else _json(kind)
    constraints = limits.json_limits()
    target = schema_["items"] if schema_.get("type") == "array" else schema_
    if limits.lowercase and "enum" in target:
        target["enum"] = [value.lower() for value in target["enum"]]
    if schema_.get("type") == "array" and schema_["items"].get("type") == "string":
        for key in ("minLength", "maxLength"):
            if key in constraints:
                schema_["items"][key] = constraints.pop(key)
    schema_.update(constraints)
    if limits.nullable:
        schema_["type"] = [schema_["type"], "null"]
    return schema_


def _parameter(graphql_name: str, field: GraphQLArgument | GraphQLInputField) -> Parameter:
    limits = _declared(field)
    description = limits.agent or field.description
    schema_ = _shaped(field.type, limits)
    if description:
        schema_["description"] = description
    required = isinstance(field.type, GraphQLNonNull) and field.default_value is Undefined
    return Parameter(snake(graphql_name), graphql_name, field.type, schema_, required, limits)


def _parameters(fields: dict[str, Any]) -> tuple[Parameter, ...]:
    return tuple(_parameter(name, field) for name, field in fields.items())


def object_schema(parameters: tuple[Parameter, ...]) -> dict[str, Any]:
    """A closed JSON object schema of the parameters."""
    result: dict[str, Any] = {
        "type": "object",
        "properties": {p.name: p.schema for p in parameters},
        "additionalProperties": False,
    }
    required = [p.name for p in parameters if p.required]
    if required:
        result["required"] = required
    return result


@dataclass(frozen=True)
class Command:
    """One mutation, seen from the snake_case surfaces (MCP tools, REST bodies)."""

    mutation: str
    parameters: tuple[Parameter, ...]
    # The mutation takes one `input` object whose fields are the parameters.
    wrapped: bool
    # "query" for the few checks agents run like commands (an answer, nothing written): dryRunPreflight.
    operation: str = "mutation"

    @property
    def aliases(self) -> dict[str, str]:
        """Accepted but never advertised argument names -> the declared name they stand for."""
        return {alias: p.name for p in self.parameters for alias in p.limits.aliases}

    def json_schema(self, *, without: tuple[str, ...] = (), optional: tuple[str, ...] = ()) -> dict[str, Any]:
        """The arguments' schema; `without` drops some (a URL supplies them), `optional` relaxes some (the
        domain defaults them from the caller)."""
        kept = tuple(p for p in self.parameters if p.name not in without)
        result = object_schema(kept)
        required = [name for name in result.get("required", []) if name not in optional]
        if required:
            result["required"] = required
        else:
            result.pop("required", None)
        return result

    def variables(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """The GraphQL variables for snake_case arguments already valid against json_schema()."""
        values = {
            p.graphql_name: _to_graphql(p.type, arguments[p.name], p.limits)
            for p in self.parameters
            if p.name in arguments
        }
        return {"input": values} if self.wrapped else values

    def document(self, selection: str) -> str:
        """The operation running this mutation; `selection` is read from its payload (error types answer
        with their typename, message, code and fields)."""
        field = _root(self.operation).fields[self.mutation]
        declared_vars = ", ".join(f"${name}: {arg.type}" for name, arg in field.args.items())
        passed = ", ".join(f"{name}: ${name}" for name in field.args)
        call = f"{self.mutation}({passed})" if passed else self.mutation
        head = f"{self.operation}({declared_vars})" if declared_vars else self.operation
        return f"{head} {{ {call} {{ {ERROR_SELECTION} {selection} }} }}"


def _to_graphql(kind: GraphQLInputType, value: Any, limits: Declared) -> Any:
    if value is None:
        return None
    if isinstance(kind, GraphQLNonNull):
        return _to_graphql(kind.of_type, value, limits)
    if isinstance(kind, GraphQLList):
        return [_to_graphql(kind.of_type, item, limits) for item in value]
    if isinstance(kind, GraphQLInputObjectType):
        return {
            name: _to_graphql(field.type, value[snake(name)], _declared(field))
            for name, field in kind.fields.items()
            if snake(name) in value
        }
    if isinstance(kind, GraphQLEnumType) and limits.lowercase:
        return value.upper()
    return value


def input_limits() -> dict[str, dict[str, dict[str, int]]]:
    """Every declared limit of every input type, by GraphQL type and field name (for the web client)."""
    found: dict[str, dict[str, dict[str, int]]] = {}
    for name, kind in sorted(schema._schema.type_map.items()):
        if not isinstance(kind, GraphQLInputObjectType):
            continue
        for field_name, field in kind.fields.items():
            limits = declared(getattr((field.extensions or {}).get(BACKREF), "metadata", None)).json_limits()
            if limits:
                found.setdefault(name, {})[field_name] = limits
    return found


def _root(operation: str) -> GraphQLObjectType:
    root = schema._schema.query_type if operation == "query" else schema._schema.mutation_type
    assert root is not None
    return root


@cache
def command(mutation: str, *, operation: str = "mutation") -> Command:
    """The command a mutation declares (or, with operation "query", a query taking one input the same way)."""
    field = _root(operation).fields[mutation]
    args = field.args
    only = next(iter(args.values())) if len(args) == 1 else None
    inner = only.type.of_type if only is not None and isinstance(only.type, GraphQLNonNull) else None
    if "input" in args and len(args) == 1 and isinstance(inner, GraphQLInputObjectType):
        return Command(mutation, _parameters(inner.fields), wrapped=True, operation=operation)
    return Command(mutation, _parameters(args), wrapped=False, operation=operation)


class Refused(Exception):
    """A mutation answered with one of its error members: the type's name, code, message and fields."""

    def __init__(self, payload: dict[str, Any]) -> None:
        super().__init__(payload["message"])
        self.typename: str = payload["__typename"]
        self.code: str = payload["code"]
        self.message: str = payload["message"]
        self.field: str | None = payload.get("field")
        self.fields: dict[str, Any] = payload.get("fields") or {}


class OperationFailed(Exception):
    """An operation failed unexpectedly (a bug, or a document the schema refused); the text is value-free."""


async def run(context: Any, document: str, variables: dict[str, Any]) -> dict[str, Any]:
    """Runs an operation in process as the context's caller: its data, Refused for a mutation's error member,
    the domain error a query raised, or OperationFailed (masked by the caller's edge).

    The schema, its resolvers and the cost checks on the variables are the HTTP endpoint's; strawberry's
    per-request machinery around them is not: its extensions parse, validate and mask for callers whose
    documents we have never seen, while these documents are our own (parsed and validated once each) and
    the callers translate errors themselves. That machinery costs about 0.2 ms a call, a tenth of a simple MCP
    tool's.
    """
    prepared = _prepared(document)
    problems = operation_problems(schema._schema, prepared, variables)
    if problems:
        _fail(problems)
    result = execute(
        schema._schema,
        prepared,
        context_value=context,
        variable_values=variables,
        executor_class=schema.execution_context_class,
        is_awaitable=optimized_is_awaitable,  # type: ignore[arg-type]  # strawberry's quicker check, typed bool
    )
    if isinstance(result, Awaitable):
        result = await result
    if result.errors:
        _fail(result.errors)
    data = result.data or {}
    for payload in data.values():
        if isinstance(payload, dict) and str(payload.get("__typename", "")).endswith("Error") and "code" in payload:
            raise Refused(payload)
    return data


@lru_cache(maxsize=CACHED_DOCUMENTS)  # the tools' and REST handlers' documents: a few dozen texts
def _prepared(document: str) -> DocumentNode:
    parsed = parse(document)
    errors = validate(schema._schema, parsed, [*specified_rules, *LIMIT_RULES])
    if errors:
        _fail(errors)
    return parsed


def _fail(errors: Sequence[GraphQLError]) -> NoReturn:
    schema.process_errors(list(errors))  # logs what is not the caller's mistake, as for HTTP
    error = errors[0]
    if isinstance(error.original_error, DomainError):
        raise error.original_error
    raise OperationFailed(value_free(error.message)) from error.original_error


TASK_QUERY = f"query($id: ID!) {{ task(id: $id) {{ {TASK} }} }}"
