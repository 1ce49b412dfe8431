"""A task's change stats (files, +, −), measured where its worktrees are and stored on the task's row: at its
agent's tool calls and turn ends, and after a discard. Board cards and taskEvents read them with the task;
nothing recomputes them per read. Each measure that differs from the stored one is one CHANGES event naming the
files whose diff changed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kandev.domain.changes.diffs import ChangeScope
from kandev.domain.changes.git_reader import GitReadError
from kandev.domain.changes.places import TaskPlaces
from kandev.domain.changes.reading import snapshot
from kandev.domain.changes.service import prepared_checkout
from kandev.domain.context import UnitOfWork
from kandev.domain.workflow.transitions import emit_task_event
from kandev.models import Task, TaskChangeStats
from kandev.models.base import utcnow

# Past this many changed files an event says "everything" (no list): a client refetches the whole diff.
MAX_LISTED_FILES = 500
CHANGES = "CHANGES"


@dataclass(frozen=True)
class ChangeStats:
    files: int
    additions: int
    deletions: int


# What is stored per repository: {"files": n, "additions": n, "deletions": n, "keys": {path: diff key},
# "renamed": {old path: new path}}.
Digest = dict[str, dict[str, Any]]


def measure(places: TaskPlaces) -> Digest | None:
    """The stats of the task's repositories readable here (ALL scope), by repository id; None when none is
    (another worker's to measure). Blocking."""
    readable = [r for r in places.repositories if r.checkout is not None]
    if not readable:
        return None
    digest: Digest = {}
    for located in readable:
        assert located.checkout is not None
        try:
            found = snapshot(prepared_checkout(located.checkout), ChangeScope.ALL, history=False)
        except GitReadError:
            continue  # a worktree mid-change (a rebase, a lock): measured again at the next tool call
        digest[located.repository_id] = {
            "files": len(found.files),
            "additions": sum(f.additions for f in found.files),
            "deletions": sum(f.deletions for f in found.files),
            "keys": {f.path: f.key for f in found.files},
            "renamed": {f.old_path: f.path for f in found.files if f.old_path and f.status == "RENAMED"},
        }
    return digest


def changed_files(before: Digest, after: Digest) -> list[dict[str, str]]:
    """The files whose diff key differs between two digests (appeared, went or changed)."""
    changed = []
    for repository in sorted(set(before) | set(after)):
        old = (before.get(repository) or {}).get("keys") or {}
        new = (after.get(repository) or {}).get("keys") or {}
        for path in sorted(set(old) | set(new)):
            if old.get(path) != new.get(path):
                changed.append({"repository_id": repository, "path": path})
    return changed


async def store_measure(uow: UnitOfWork, task: Task, measured: Digest) -> list[dict[str, str]] | None:
    """Store the repositories measured when they differ from what is stored and emit one CHANGES event; the
    files whose diff changed, None when nothing did."""
    row = await uow.db.get(TaskChangeStats, task.id, with_for_update=True)
    before: Digest = dict(row.digest) if row is not None else {}
    digest = {**before, **measured}
    changed = changed_files(before, digest)
    if row is not None and not changed:
        return None
    if row is None:
        row = TaskChangeStats(task_id=task.id)
        uow.db.add(row)
    task.change_files = sum(int(r["files"]) for r in digest.values())
    task.change_additions = sum(int(r["additions"]) for r in digest.values())
    task.change_deletions = sum(int(r["deletions"]) for r in digest.values())
    row.digest = digest
    row.computed_at = utcnow()
    emit_task_event(uow, CHANGES, task, changed_files=changed if len(changed) <= MAX_LISTED_FILES else [])
    return changed


def change_stats_of(files: int | None, additions: int | None, deletions: int | None) -> ChangeStats | None:
    """The stats stored on a task row; None before the first measure."""
    if files is None:
        return None
    return ChangeStats(files, additions or 0, deletions or 0)
