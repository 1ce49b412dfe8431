"""Resolver fields with a description, typed so mypy keeps the method's signature."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import strawberry

F = TypeVar("F", bound=Callable[..., Any])


def described(description: str) -> Callable[[F], F]:
    """`@strawberry.field(description=...)`, whose keyword-only form strawberry types as Any."""
    decorate: Callable[[F], F] = strawberry.field(description=description)
    return decorate
