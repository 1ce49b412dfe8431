"""Fields read straight off the wrapped row or record, declared in one line instead of a method each.

Each such field is a resolver call, which turns off Strawberry's plain-attribute path: types read by the
hundred (tasks, sessions, messages, turns, workflows and their steps) copy their values once in an `of`
constructor instead (kandev.graphql.schema.types, kandev.graphql.schema.session_types)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import strawberry


def column(
    attr: str,
    kind: Any,
    *,
    source: str = "row",
    convert: Callable[[Any], Any] | None = None,
    description: str | None = None,
) -> Any:
    """A field resolving to `self.<source>.<attr>` (optionally converted), typed as `kind`."""

    def resolve(root: Any) -> Any:
        value = getattr(getattr(root, source), attr)
        return convert(value) if convert is not None and value is not None else value

    resolve.__annotations__ = {"root": Any, "return": kind}
    return strawberry.field(resolver=resolve, description=description)
