"""Expected failures as schema types; every mutation returns its payload or one of these."""

from __future__ import annotations

from typing import TypeAlias, cast

import strawberry
from strawberry.scalars import JSON

from kandev.domain import errors as domain


@strawberry.interface(description="An expected failure; `code` is stable, `message` is for people.")
class Error:
    message: str
    code: str
    fields: JSON = strawberry.field(
        description="The failure's structured details (ids, limits, `reason`, the input at fault), by name; "
        "never a submitted value."
    )


@strawberry.type(description="The id is unknown, or not visible to the caller (the two look the same).")
class NotFoundError(Error):
    entity: str
    id: strawberry.ID | None


@strawberry.type(description="The input breaks a rule; `field` names the input at fault.")
class ValidationError(Error):
    field: str | None


@strawberry.type(description="The request is valid but the current state does not allow it.")
class ConflictError(Error):
    pass


@strawberry.type(description="The caller may not do this.")
class PermissionDeniedError(Error):
    pass


ERROR_TYPES = (NotFoundError, ValidationError, ConflictError, PermissionDeniedError)
# The error members of every mutation's result union (see payloads.py).
ExpectedError: TypeAlias = NotFoundError | ValidationError | ConflictError | PermissionDeniedError


def to_graphql_error(error: domain.DomainError) -> ExpectedError:
    """The single translation of domain errors into schema types."""
    message, code, fields = error.message, error.code, cast(JSON, error.wire_fields())
    if isinstance(error, domain.NotFoundError):
        return NotFoundError(message=message, code=code, fields=fields, entity=error.entity, id=_id(error.entity_id))
    if isinstance(error, domain.ValidationError):
        return ValidationError(message=message, code=code, fields=fields, field=error.field)
    if isinstance(error, domain.ConflictError):
        return ConflictError(message=message, code=code, fields=fields)
    if isinstance(error, domain.PermissionDeniedError):
        return PermissionDeniedError(message=message, code=code, fields=fields)
    raise TypeError(f"unmapped domain error {type(error).__name__}")


def _id(value: str | None) -> strawberry.ID | None:
    return strawberry.ID(value) if value is not None else None
