"""Plain scalar fields read straight off their object.

graphql-core builds a resolve-info object and calls strawberry's resolver wrapper for every field, though a
field without a resolver only reads an attribute: on a 500-task board page that is ~6,500 calls which
cost a sixth of the page. `PlainFieldExecutor` reads such a field's attribute and serializes it itself, as
it does for a resolver marked `held_in(attribute)` when the object already holds its answer there.
A plain field whose attribute is None answers null directly when its type allows null (most of a card's
fields are null before the task first ran). An object whose selected fields are all plain (a diff's 2,000
lines, a card's stats) is answered as a whole, without graphql-core's per-field machinery. Anything else (a
resolver, arguments, an object or list type, a null where the type forbids it or a held answer that is not
there, a value that does not serialize) takes graphql-core's full path, which also reports the errors.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from graphql import GraphQLEnumType, GraphQLField, GraphQLLeafType, GraphQLNonNull, GraphQLObjectType, is_leaf_type
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
    # Per collected selection: how to answer an object whose selected fields are all plain (None: not all are).
    _flat: dict[int, list[tuple[str, str, GraphQLLeafType, bool]] | None] | None = None

    def collect_and_execute_subfields(
        self,
        return_type: GraphQLObjectType,
        field_details_list: Any,
        path: Any,
        result: Any,
        position_context: Any,
    ) -> Any:
        if self._shortcuts is None:
            self._shortcuts = not _resolving_middleware(self)
        if self._shortcuts:
            grouped, deferred, _ = self.collect_subfields(return_type, field_details_list)
            plan = None if deferred else self._flat_plan(return_type, grouped)
            if plan is not None:
                answer = _flat_answer(plan, result)
                if answer is not None:
                    return answer
        return super().collect_and_execute_subfields(return_type, field_details_list, path, result, position_context)

    def complete_iterable_value(
        self,
        item_type: Any,
        field_details_list: Any,
        info: Any,
        path: Any,
        items: Any,
        position_context: Any,
    ) -> Any:
        """A list of objects whose selected fields are all plain, answered item by item without graphql-core's
        per-item completion (a big diff's lines)."""
        inner = item_type.of_type if isinstance(item_type, GraphQLNonNull) else item_type
        if self._shortcuts is not False and isinstance(inner, GraphQLObjectType) and not inner.is_type_of:
            if self._shortcuts is None:
                self._shortcuts = not _resolving_middleware(self)
            grouped, deferred, _ = self.collect_subfields(inner, field_details_list) if self._shortcuts else ({}, 1, 0)
            plan = None if deferred else self._flat_plan(inner, grouped)
            if plan is not None:
                items = list(items)  # read twice when an item needs the full path
                answers = [None if item is None else _flat_answer(plan, item) for item in items]
                nullable = inner is item_type
                if all(a is not None or (i is None and nullable) for a, i in zip(answers, items, strict=True)):
                    return answers
        return super().complete_iterable_value(item_type, field_details_list, info, path, items, position_context)

    def _flat_plan(
        self, return_type: GraphQLObjectType, grouped: Any
    ) -> list[tuple[str, str, GraphQLLeafType, bool]] | None:
        if self._flat is None:
            self._flat = {}
        key = id(grouped)
        if key not in self._flat:
            plan: list[tuple[str, str, GraphQLLeafType, bool]] | None = []
            for response_key, details in grouped.items():
                node = details[0].node
                field = return_type.fields.get(node.name.value)
                plain = plain_field(field) if field is not None and not node.arguments else None
                if plain is None or plan is None:
                    plan = None
                    break
                plan.append((response_key, *plain))
            self._flat[key] = plan
        return self._flat[key]

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


# An enum's few values, as answered: serializing one through strawberry costs more than the rest of a diff line.
_ENUM_ANSWERS: dict[tuple[int, Any], Any] = {}


def _flat_answer(plan: list[tuple[str, str, GraphQLLeafType, bool]], source: Any) -> dict[str, Any] | None:
    """The object's answer from its plain fields; None when one needs the full path (an error to report)."""
    answer: dict[str, Any] = {}
    for response_key, name, leaf, none_is_null in plan:
        value = getattr(source, name, _MISSING)
        if value is None and none_is_null:
            answer[response_key] = None
            continue
        if value is None or value is _MISSING:
            return None
        enum = isinstance(leaf, GraphQLEnumType)
        coerced = _ENUM_ANSWERS.get((id(leaf), value), _MISSING) if enum else _MISSING
        if coerced is _MISSING:
            try:
                coerced = leaf.coerce_output_value(value)
            except Exception:
                return None
            if enum and coerced is not None and coerced is not Undefined:
                _ENUM_ANSWERS[(id(leaf), value)] = coerced
        if coerced is Undefined or coerced is None:
            return None
        answer[response_key] = coerced
    return answer
