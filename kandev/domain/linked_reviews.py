"""Choosing the pull or merge request a task's review tool acts on, the same way for every code host."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kandev.domain.errors import DomainError, ValidationError

# (repository or project, number or iid, state) of one request linked to the task or found on its branches.
Linked = tuple[str, int, str]


@dataclass(frozen=True)
class HostWords:
    """How a code host names its requests, in the errors the tools answer."""

    request: str  # "pull request"
    place: str  # "repository"
    number: str  # "number"
    open_state: str  # "open"
    mark: str  # "#", as in owner/name#12
    missing: Callable[[str], DomainError]


def choose_linked(found: Sequence[Linked], place: str | None, number: int | None, words: HostWords) -> Linked:
    """The one request the call means: those matching the named place and number (all when unnamed), open
    ones first; none is `words.missing`, several distinct ones a ValidationError listing them."""
    chosen = [
        key for key in found if (place is None or key[0].lower() == place) and (number is None or key[1] == number)
    ]
    if not chosen:
        raise words.missing(
            f"no {words.request} is linked to this task"
            + (f" with that {words.place} and {words.number}" if place or number else "")
            + ": open one from the task's branch first, or check the task's repositories"
        )
    open_ones = [key for key in chosen if key[2] == words.open_state] or chosen
    distinct = list(dict.fromkeys((name.lower(), n) for name, n, _ in open_ones))
    if len(distinct) > 1:
        raise ValidationError(
            f"several {words.request}s are linked to this task: name one with {words.place} and {words.number}",
            field=words.number,
            candidates=[f"{name}{words.mark}{n}" for name, n in distinct],
        )
    return open_ones[0]
