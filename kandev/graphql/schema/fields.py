"""Resolver fields with a description, typed so mypy keeps the method's signature."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import strawberry

F = TypeVar("F", bound=Callable[..., Any])


def described(description: str, *, graphql_type: Any = None) -> Callable[[F], F]:
    """`@strawberry.field(description=...)`, whose keyword-only form strawberry types as Any; `graphql_type`
    when the method's annotation is not the field's type (e.g. a value or an awaitable of it)."""
    decorate: Callable[[F], F] = strawberry.field(description=description, graphql_type=graphql_type)
    return decorate
