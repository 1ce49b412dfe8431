"""What the query selects below the field being resolved, so a page reads only what is asked for."""

from __future__ import annotations

from collections.abc import Iterable

from strawberry.types.nodes import SelectedField, Selection

from kandev.graphql.schema.context import Info


def selects(info: Info, *path: str) -> bool:
    """Whether the query asks for the field at `path` (GraphQL names) below this one, through fragments.
    Directives are not evaluated: `@skip`/`@include` count as selected, so nothing asked for is missed."""
    return any(_selects(field.selections, path) for field in info.selected_fields)


def _selects(selections: Iterable[Selection], path: tuple[str, ...]) -> bool:
    for selection in selections:
        if isinstance(selection, SelectedField):
            if selection.name == path[0] and (len(path) == 1 or _selects(selection.selections, path[1:])):
                return True
        elif _selects(selection.selections, path):  # a fragment: same level
            return True
    return False
