"""Process-tree helpers for tests that check nothing is left behind."""

from __future__ import annotations

import os
import time
from pathlib import Path


def _parent_of(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name may contain spaces and parentheses: fields start after the last ')'.
    return int(stat.rsplit(")", 1)[1].split()[1])


def descendants(root: int) -> set[int]:
    """Every living process below `root` (children that moved to their own group included)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            parent = _parent_of(int(entry))
            if parent is not None:
                parents[int(entry)] = parent
    found: set[int] = set()
    frontier = {root}
    while frontier:
        children = {pid for pid, parent in parents.items() if parent in frontier and pid not in found}
        found |= children
        frontier = children
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_gone(pids: set[int], timeout: float = 15) -> set[int]:
    """Wait (bounded) for the processes to end; returns those still alive."""
    deadline = time.monotonic() + timeout
    remaining = {p for p in pids if alive(p)}
    while remaining and time.monotonic() < deadline:
        time.sleep(0.05)
        remaining = {p for p in remaining if alive(p)}
    return remaining
