"""Plain scalar fields read straight off their object.

graphql-core builds a resolve-info object and calls strawberry's resolver wrapper for every field, though a
field without a resolver only reads an attribute: on a 500-task board page that is ~6,500 calls which
cost a sixth of the page. `PlainFieldExecutor` reads such a field's attribute and serializes it itself, as
it does for a resolver marked `held_in(attribute)` when the object already holds its answer there.
A plain field whose attribute is None answers null directly when its type allows null (most of a card's
fields are null before the task first ran). Anything else (a resolver, arguments, an object or list type,
a null where the type forbids it or a held answer that is not there, a value that does not serialize)
takes graphql-core's full path, which also reports the errors.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from graphql import GraphQLField, GraphQLLeafType, GraphQLNonNull, GraphQLObjectType, is_leaf_type
from graphql.pyutils import Undefined
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext
from strawberry.schema.schema_converter import GraphQLCoreConverter
from strawberry.types.field import StrawberryField

F = TypeVar("F", bound=Callable[..., Any])
_HELD_IN = "_kandev_held_in"
_MISSING = object()

# Per schema field: (attribute name, leaf type, whether None is its answer) when it is plain, else None.
_plain: dict[int, tuple[str, GraphQLLeafType, bool] | None] = {}


def held_in(attribute: str) -> Callable[[F], F]:
    """Marks a scalar field's resolver whose object may already hold the answer in `attribute` (None when
    it does not): then the answer is read from there without calling the resolver."""

    def mark(resolver: F) -> F:
        setattr(resolver, _HELD_IN, attribute)
        return resolver

    return mark


def plain_field(field: GraphQLField) -> tuple[str, GraphQLLeafType, bool] | None:
    """The attribute a schema field reads, its leaf type and whether a None there answers null, when the
    field has no resolver of its own."""
    key = id(field)
    if key not in _plain:
        _plain[key] = _inspect(field)
    return _plain[key]


def _inspect(field: GraphQLField) -> tuple[str, GraphQLLeafType, bool] | None:
    definition = (field.extensions or {}).get(GraphQLCoreConverter.DEFINITION_BACKREF)
    if not isinstance(definition, StrawberryField) or field.args:
        return None
    resolver = definition.base_resolver
    held = resolver is not None
    if resolver is not None:
        attribute = getattr(resolver.wrapped_func, _HELD_IN, None)
    elif definition.is_basic_field and definition.default_resolver is getattr:
        attribute = definition.python_name
    else:
        attribute = None
    if attribute is None or definition.extensions:
        return None
    non_null = isinstance(field.type, GraphQLNonNull)
    leaf = field.type.of_type if isinstance(field.type, GraphQLNonNull) else field.type
    if not is_leaf_type(leaf):
        return None
    # A held answer of None means "not held here": its resolver decides.
    return attribute, leaf, not non_null and not held


def _resolving_middleware(executor: StrawberryGraphQLCoreExecutionContext) -> bool:
    """Whether a middleware (an extension's `resolve` hook) wraps every field, so none may be skipped."""
    manager = executor.middleware_manager
    return manager is not None and bool(getattr(manager, "_middleware_resolvers", True))


class PlainFieldExecutor(StrawberryGraphQLCoreExecutionContext):
    _shortcuts: bool | None = None  # decided on the first field: the middleware does not change mid-operation

    def execute_field(
        self,
        parent_type: GraphQLObjectType,
        source: Any,
        field_details_list: Any,
        path: Any,
        position_context: Any,
    ) -> Any:
        if self._shortcuts is None:
            self._shortcuts = not _resolving_middleware(self)
        node = field_details_list[0].node
        field = parent_type.fields.get(node.name.value)
        plain = plain_field(field) if self._shortcuts and field is not None and not node.arguments else None
        if plain is not None:
            name, leaf, none_is_null = plain
            value = getattr(source, name, _MISSING)
            if value is None and none_is_null:
                return None
            if value is not None and value is not _MISSING:
                try:
                    coerced = leaf.coerce_output_value(value)
                except Exception:  # reported, with its path, by the full path below
                    coerced = Undefined
                if coerced is not Undefined and coerced is not None:
                    return coerced
        return super().execute_field(parent_type, source, field_details_list, path, position_context)
