"""GraphQL error text without submitted values: graphql-core echoes a whole bad input object (a secret's
value with it) in its coercion messages; those messages are cut before they are logged or answered."""

from __future__ import annotations

import re

from graphql import GraphQLError
from strawberry.utils.logging import StrawberryLogger

# "..., found: {'value': ...}." / "... Found: ..." and "String cannot represent a non string value: [...]"
_FOUND = re.compile(r"(?is)[,;]?\s*found\s*:.*$")
_REPRESENT = re.compile(r"(?is)(cannot represent[^:]*?value)\s*:.*$")


def value_free(message: str) -> str:
    """The message with every echoed input value cut off."""
    cut = _REPRESENT.sub(r"\1.", message)
    if cut == message:
        cut = _FOUND.sub(".", message)
    return cut


def log_error(error: GraphQLError) -> None:
    """Log an unexpected GraphQL error by its value-free message and path (never the document excerpt)."""
    original = error.original_error
    # A GraphQLError cause is the same coercion message again; anything else keeps its traceback.
    exc_info = original if original is not None and not isinstance(original, GraphQLError) else None
    StrawberryLogger.logger.error("%s (path %s)", value_free(error.message), error.path, exc_info=exc_info)
