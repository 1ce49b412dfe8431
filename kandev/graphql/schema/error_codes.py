"""Every GraphQL error leaves with `extensions.code` (and a domain error with its `extensions.fields`);
unexpected failures are masked."""

from __future__ import annotations

from graphql import GraphQLError, GraphQLSyntaxError
from strawberry.extensions import MaskErrors

from kandev.domain.errors import DomainError, ValidationError
from kandev.graphql.schema.error_text import value_free


def is_client_error(error: GraphQLError) -> bool:
    """The caller's mistake (document, variables, a domain rule), not an incident: shown as is, not logged."""
    original = error.original_error
    return original is None or isinstance(original, DomainError | GraphQLError)


def error_code(error: GraphQLError) -> str:
    original = error.original_error
    if isinstance(original, DomainError):
        return original.code
    if isinstance(error, GraphQLSyntaxError) or isinstance(original, GraphQLSyntaxError):
        return "GRAPHQL_PARSE_FAILED"
    if isinstance(original, GraphQLError):
        return "BAD_USER_INPUT"  # graphql-core could not coerce a variable (e.g. an Int beyond 32 bits)
    if error.path is not None:
        return "INTERNAL"  # raised while completing a result: ours, not the caller's
    return "GRAPHQL_VALIDATION_FAILED"


class CodedMaskErrors(MaskErrors):
    """Masks what the caller can't have caused, cuts echoed input values from the rest (a secret may be one),
    then gives every error its code."""

    def __init__(self) -> None:
        super().__init__(should_mask_error=lambda error: not is_client_error(error))

    def _process_result(self, result: object) -> None:
        # As strawberry's, without its isinstance check against a runtime Protocol: that check cost more than
        # the rest of a live event's delivery to each subscriber.
        errors = getattr(result, "errors", None)
        if errors:
            result.errors = self._process_errors(errors)  # type: ignore[attr-defined]

    def _process_errors(self, errors: list[GraphQLError]) -> list[GraphQLError]:
        processed = []
        for error in errors:
            if self.should_mask_error(error):
                error = self.anonymise_error(error)
                error.extensions = {"code": "INTERNAL"}
                processed.append(error)
                continue
            error.message = value_free(error.message)
            extensions = dict(error.extensions or {})
            if not extensions.get("code"):
                extensions["code"] = error_code(error)
                if isinstance(error.original_error, ValidationError) and error.original_error.field:
                    extensions["field"] = error.original_error.field
            if isinstance(error.original_error, DomainError):
                extensions.setdefault("fields", error.original_error.wire_fields())
            error.extensions = extensions
            processed.append(error)
        return processed
