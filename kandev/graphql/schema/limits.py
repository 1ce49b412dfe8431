"""What an operation may cost, checked before any resolver (and so any SQL) runs.

Parsing stops at MAX_TOKENS; then `OperationLimits` estimates the operation's cost, caps page sizes and
refuses unstorable strings in arguments (inline or in variables); only then do graphql-core's
validation and strawberry's depth and alias limiters run. The estimate comes first because it is
linear in the document (fragments are costed once), while those rules expand every fragment spread: a
document whose expansion is huge is refused before they could spend time on it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import partial
from typing import Any

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    GraphQLNamedType,
    GraphQLSchema,
    InlineFragmentNode,
    IntValueNode,
    ListValueNode,
    ObjectValueNode,
    OperationDefinitionNode,
    OperationType,
    SelectionSetNode,
    StringValueNode,
    ValueNode,
    VariableNode,
    get_named_type,
)
from strawberry.extensions import (
    AddValidationRules,
    MaxTokensLimiter,
    SchemaExtension,
    max_aliases,
    query_depth_limiter,
)

from kandev.domain.errors import ValidationError
from kandev.domain.validation import PAGE_SIZE_LIMIT, text_problem, tree_problems

# Defaults, measured against the web client (frontend/src/api/ops.ts), the MCP tool documents and bench/:
# - depth: their deepest operation nests 4 fields (get_task_conversation_kandev's session > messages >
#   nodes > field); 10 leaves room for richer screens but stops `parent { parent { ... } }` chains.
MAX_DEPTH = 10
# - aliases: the MCP tools rename fields with up to 12; each alias of a root field runs it once more.
MAX_ALIASES = 30
# - tokens: the largest legitimate documents (GraphiQL's introspection query, the MCP tools') have under
#   200; 5,000 bounds parsing while leaving hand-written queries plenty of room.
MAX_TOKENS = 5000
# - cost: every selected field counts 1, multiplied by the page size (`first`/`last`) of each enclosing
#   paginated field. The board's 500-task page costs about 8,500 and a session's 500-message transcript
#   about 4,500; 50,000 admits a page asking for every Task field but refuses a page nested in a page
#   (500 tasks x their 100 `children` each), which would run a query per row.
MAX_COST = 50_000
PAGE_ARGUMENTS = ("first", "last")


def limit_extensions() -> list[Any]:
    """The schema's cost extensions (factories: strawberry makes fresh ones per request), in running order."""
    return [
        partial(MaxTokensLimiter, max_token_count=MAX_TOKENS),
        OperationLimits,
        DepthLimit,
        AliasLimit,
    ]


# Strawberry's QueryDepthLimiter and MaxAliasesLimiter build a new validation-rule class in every
# instance, and an extension is instantiated per operation: two classes per request, each a reference
# cycle left for a full garbage collection (with 500 subscribers, ~100 ms pauses). The rules hold no
# state of their own (graphql-core instantiates them per validation), so they are built once here.
_DEPTH_RULE = query_depth_limiter.create_validator(MAX_DEPTH, None, None)
_ALIAS_RULE = max_aliases.create_validator(MAX_ALIASES)
# What validation adds to graphql-core's own rules (for callers that validate a document themselves).
LIMIT_RULES = (_DEPTH_RULE, _ALIAS_RULE)


class DepthLimit(AddValidationRules):
    """Operations nest at most MAX_DEPTH fields."""

    def __init__(self) -> None:
        super().__init__([_DEPTH_RULE])


class AliasLimit(AddValidationRules):
    """Operations use at most MAX_ALIASES aliases."""

    def __init__(self) -> None:
        super().__init__([_ALIAS_RULE])


def input_error(field: str, message: str) -> GraphQLError:
    """The domain's ValidationError, as a GraphQL error carrying its code and field."""
    error = ValidationError(message, field=field)
    return GraphQLError(message, original_error=error, extensions={"code": error.code, "field": field})


class OperationLimits(SchemaExtension):
    """Cost, page-size and text checks over the parsed document and its variables, before validation."""

    def on_validate(self) -> Iterator[None]:
        context = self.execution_context
        if context.graphql_document is not None and context.pre_execution_errors is None:
            errors = operation_problems(context.schema._schema, context.graphql_document, context.variables or {})
            if errors:
                # Set before validation runs, so strawberry skips it (and its fragment-expanding rules).
                context.pre_execution_errors = errors
        yield


def operation_problems(
    schema: GraphQLSchema, document: DocumentNode, variables: Mapping[str, Any]
) -> list[GraphQLError]:
    """The cost, page-size and text problems of running `document` with `variables` (none: it may run)."""
    return _Checker(schema, document, variables).errors()


class _Checker:
    def __init__(self, schema: GraphQLSchema, document: DocumentNode, variables: Mapping[str, Any]) -> None:
        self.schema = schema
        self.variables = variables
        self.fragments = {d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)}
        self.operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
        self.defaults: dict[str, ValueNode] = {}
        for operation in self.operations:
            for definition in operation.variable_definitions or ():
                if definition.default_value is not None:
                    self.defaults[definition.variable.name.value] = definition.default_value
        self.problems: list[GraphQLError] = []
        self._fragment_costs: dict[str, int] = {}
        self._in_progress: set[str] = set()

    def errors(self) -> list[GraphQLError]:
        roots = {
            OperationType.QUERY: self.schema.query_type,
            OperationType.MUTATION: self.schema.mutation_type,
            OperationType.SUBSCRIPTION: self.schema.subscription_type,
        }
        cost = 0
        for operation in self.operations:
            cost += self._cost(operation.selection_set, roots.get(operation.operation))
        for name, fragment in self.fragments.items():  # unused fragments are still checked for bad input
            if name not in self._fragment_costs:
                self._fragment(name, fragment)
        if cost > MAX_COST:
            return [
                GraphQLError(
                    f"the operation is too expensive: its estimated cost exceeds {MAX_COST} "
                    f"(each field counts once per row of every enclosing page); ask for fewer fields or smaller pages",
                    extensions={"code": "QUERY_TOO_COMPLEX", "limit": MAX_COST},
                )
            ]
        return self.problems

    def _fragment(self, name: str, fragment: FragmentDefinitionNode) -> int:
        if name in self._fragment_costs:
            return self._fragment_costs[name]
        if name in self._in_progress:  # a cycle: graphql-core's NoFragmentCycles rule reports it
            return 0
        self._in_progress.add(name)
        cost = self._cost(fragment.selection_set, self.schema.get_type(fragment.type_condition.name.value))
        self._in_progress.discard(name)
        self._fragment_costs[name] = cost
        return cost

    def _cost(self, selection_set: SelectionSetNode | None, parent: GraphQLNamedType | None) -> int:
        """The estimated cost of a selection set on `parent` (None when the type is unknown)."""
        if selection_set is None:
            return 0
        if not selection_set.selections:
            # graphql-core parses `{}`, which the released GraphQL spec does not allow and strawberry's depth
            # rule fails on (as an unexpected error): refused here, before validation runs.
            self.problems.append(GraphQLError("a selection set must select at least one field", selection_set))
            return 0
        total = 0
        for selection in selection_set.selections:
            if isinstance(selection, FieldNode):
                total += self._field(selection, parent)
            elif isinstance(selection, InlineFragmentNode):
                condition = selection.type_condition
                inner = self.schema.get_type(condition.name.value) if condition else parent
                total += self._cost(selection.selection_set, inner)
            elif isinstance(selection, FragmentSpreadNode):
                fragment = self.fragments.get(selection.name.value)
                if fragment is not None:
                    total += self._fragment(selection.name.value, fragment)
            total = min(total, MAX_COST + 1)  # past the limit the exact figure no longer matters
        return total

    def _field(self, node: FieldNode, parent: GraphQLNamedType | None) -> int:
        fields = getattr(parent, "fields", None) or {}
        definition = fields.get(node.name.value)
        multiplier = 1
        for argument in node.arguments or ():
            name = argument.name.value
            self._check_text(argument.value, name)
            if name in PAGE_ARGUMENTS and definition is not None and name in definition.args:
                size = self._int(argument.value)
                if size is not None and size > PAGE_SIZE_LIMIT:
                    self.problems.append(input_error(name, f"{name} must be between 0 and {PAGE_SIZE_LIMIT}"))
                multiplier = max(multiplier, min(size or 0, PAGE_SIZE_LIMIT))
        if definition is not None:
            for name in PAGE_ARGUMENTS:
                given = any(a.name.value == name for a in node.arguments or ())
                default = definition.args[name].default_value if name in definition.args else None
                if not given and isinstance(default, int):
                    multiplier = max(multiplier, default)
        child_type = get_named_type(definition.type) if definition is not None else None
        return 1 + multiplier * self._cost(node.selection_set, child_type)

    def _int(self, value: ValueNode) -> int | None:
        if isinstance(value, VariableNode):
            name = value.name.value
            if name in self.variables:
                raw = self.variables[name]
                return raw if isinstance(raw, int) and not isinstance(raw, bool) else None
            default = self.defaults.get(name)
            if default is None:
                return None
            value = default
        if isinstance(value, IntValueNode):
            return int(value.value)
        return None

    def _check_text(self, value: ValueNode, path: str) -> None:
        """NUL and lone surrogates are refused wherever a string arrives: PostgreSQL can't store the first,
        UTF-8 can't encode the second, and either would surface as an unexpected error."""
        if isinstance(value, StringValueNode):
            problem = text_problem(value.value)
            if problem:
                self.problems.append(input_error(path, f"{path} {problem}"))
        elif isinstance(value, ListValueNode):
            for index, item in enumerate(value.values):
                self._check_text(item, f"{path}[{index}]")
        elif isinstance(value, ObjectValueNode):  # keys are GraphQL names: always plain ASCII
            for entry in value.fields:
                self._check_text(entry.value, f"{path}.{entry.name.value}")
        elif isinstance(value, VariableNode):
            name = value.name.value
            if name in self.variables:
                for field, problem in tree_problems(self.variables[name], path):
                    self.problems.append(input_error(field, f"{field} {problem}"))
            elif name in self.defaults:
                self._check_text(self.defaults[name], path)
