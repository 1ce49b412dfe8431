"""Parsing and validation are pure functions of the operation's text: the same documents (the web
client's, the MCP tools') come again and again, so each is parsed and validated once.

The cost checks (`limits.OperationLimits`) depend on the variables and still run on every request, before
validation; only a document that validated clean is remembered, so an error is never answered from a cache.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from graphql import GraphQLError, parse
from strawberry.extensions import SchemaExtension
from strawberry.schema.schema import validate_document

# Distinct operation texts remembered (least recently used go first): bounds what a client sending
# ever-new documents can make the server keep.
CACHED_DOCUMENTS = 256


class _CleanDocuments:
    """(schema, operation text) pairs that passed validation, most recently used last."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._texts: OrderedDict[tuple[int, str], None] = OrderedDict()

    def __contains__(self, key: tuple[int, str]) -> bool:
        if key in self._texts:
            self._texts.move_to_end(key)
            return True
        return False

    def add(self, key: tuple[int, str]) -> None:
        self._texts[key] = None
        if len(self._texts) > self._size:
            self._texts.popitem(last=False)


_clean = _CleanDocuments(CACHED_DOCUMENTS)
_parse = lru_cache(maxsize=CACHED_DOCUMENTS)(parse)


class ParsedOnce(SchemaExtension):
    """Parsing (bounded by MaxTokensLimiter's token limit, part of the key) runs once per operation text."""

    def on_parse(self) -> Iterator[None]:
        context = self.execution_context
        if context.query:
            try:
                context.graphql_document = _parse(context.query, **context.parse_options)
            except GraphQLError:
                pass  # strawberry parses it again and answers the syntax error as its own, with its code
        yield


class ValidatedOnce(SchemaExtension):
    """Validation (graphql-core's rules plus the depth and alias limits, all fixed per schema) runs once per
    operation text. Placed after OperationLimits, whose refusals skip validation altogether."""

    def on_validate(self) -> Iterator[None]:
        context = self.execution_context
        if context.graphql_document is not None and context.pre_execution_errors is None and context.query:
            key = (id(context.schema), context.query)
            if key in _clean:
                context.pre_execution_errors = []
            else:
                errors = validate_document(context.schema._schema, context.graphql_document, context.validation_rules)
                context.pre_execution_errors = errors
                if not errors:
                    _clean.add(key)
        yield


def cache_extensions() -> list[Any]:
    """The schema's caching extensions, to follow limits.limit_extensions()."""
    return [ParsedOnce, ValidatedOnce]
