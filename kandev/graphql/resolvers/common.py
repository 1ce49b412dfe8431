"""The one place where domain errors become GraphQL error results."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from kandev.domain.errors import DomainError
from kandev.graphql.schema.errors import ExpectedError, to_graphql_error

T = TypeVar("T")
V = TypeVar("V")


async def attempt(call: Awaitable[V], wrap: Callable[[V], T]) -> T | ExpectedError:
    """Await a service call and wrap its result, or answer with the typed error it raised."""
    try:
        value = await call
    except DomainError as error:
        return to_graphql_error(error)
    return wrap(value)


def optional_id(value: object) -> str | None:
    return str(value) if value is not None else None
