"""Anchoring a review thread to lines of a file, and following those lines as the file changes: the anchored
lines are looked for in the new version, the candidates ranked by how much of their old surroundings still
surround them, then by how near they are to where they were. Lines that are gone, or edited, or that can no
longer be told apart from others like them, make the thread outdated. Pure."""

from __future__ import annotations

from dataclasses import dataclass

CONTEXT_LINES = 3


@dataclass(frozen=True)
class Anchor:
    """The lines a thread is about, as they were, and what surrounded them."""

    lines: list[str]
    before: list[str]
    after: list[str]

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def anchor_at(content: list[str], line: int, end_line: int) -> Anchor:
    """The anchor of lines `line`..`end_line` (1-based, inclusive) of `content` (already checked to exist)."""
    start, end = line - 1, end_line
    return Anchor(
        lines=content[start:end],
        before=content[max(0, start - CONTEXT_LINES) : start],
        after=content[end : end + CONTEXT_LINES],
    )


def follow(anchor: Anchor, line: int, content: list[str]) -> tuple[int, int] | None:
    """Where the anchored lines (last seen at `line`) are in `content` now; None when they are gone."""
    size = len(anchor.lines)
    if size == 0:
        return None
    first = anchor.lines[0]
    candidates = [
        start
        for start in range(len(content) - size + 1)
        if content[start] == first and content[start : start + size] == anchor.lines
    ]
    if not candidates:
        return None

    def support(start: int) -> int:
        """How many of the old surrounding lines still surround the lines at `start`."""
        above = sum(
            1
            for distance, text in enumerate(reversed(anchor.before), 1)
            if start - distance >= 0 and content[start - distance] == text
        )
        below = sum(
            1
            for distance, text in enumerate(anchor.after)
            if start + size + distance < len(content) and content[start + size + distance] == text
        )
        return above + below

    ranked = sorted(candidates, key=lambda start: (-support(start), abs(start + 1 - line)))
    best = ranked[0]
    blank = not "".join(anchor.lines).strip()
    # Several copies and nothing around them to tell which: following one would be a guess.
    if support(best) == 0 and (len(candidates) > 1 or blank) and (anchor.before or anchor.after):
        return None
    return best + 1, best + size
