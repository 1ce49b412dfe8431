"""Discarding uncommitted changes in a worktree: whole files back to the branch's last commit (a new file
deleted), or one hunk reverted. git does the writing, confined as for reading (kandev.domain.changes.git_reader):
as the agent's identity when it has one, with nothing configurable run, and git itself refuses any path outside
the working tree or beyond a link. Blocking: run it in a thread."""

from __future__ import annotations

from dataclasses import dataclass

from kandev.domain.changes.diffs import ChangeScope, FileDiff
from kandev.domain.changes.git_reader import GitReadError, run
from kandev.domain.changes.reading import DIFF_OPTIONS, Checkout, find_base, snapshot
from kandev.domain.errors import ConflictError, NotFoundError, ValidationError


@dataclass(frozen=True)
class HunkChoice:
    """The hunk to revert: a file's uncommitted hunk, named by its `@@ -a,b +c,d @@` header."""

    path: str
    header: str


def discard_files(checkout: Checkout, paths: list[str]) -> list[str]:
    """Each path's uncommitted change undone: tracked files as at the last commit (both sides of a rename), new
    files deleted. NotFoundError for a path with no uncommitted change; the paths discarded."""
    # The whole tree: a rename is told only with both of its paths in view.
    changes = {f.path: f for f in snapshot(checkout, ChangeScope.UNCOMMITTED, history=False).files}
    missing = [p for p in paths if p not in changes]
    if missing:
        raise NotFoundError("uncommitted change", missing[0])
    chosen = [changes[p] for p in dict.fromkeys(paths)]
    tracked = [name for f in chosen if not f.untracked for name in (f.path, f.old_path) if name]
    untracked = [f.path for f in chosen if f.untracked]
    try:
        if tracked:
            run(checkout.place, "restore", "--source=HEAD", "--staged", "--worktree", "--", *tracked)
        if untracked:
            run(checkout.place, "clean", "-f", "-q", "--", *untracked)
    except GitReadError as error:
        raise ConflictError(f"git could not discard the changes: {error}") from None
    return [f.path for f in chosen]


def discard_hunk(checkout: Checkout, choice: HunkChoice) -> list[str]:
    """Revert one uncommitted hunk of a tracked file in the working tree (the index is left as it is)."""
    [change] = _uncommitted(checkout, choice.path)
    if change.untracked:
        raise ValidationError("a new file is discarded whole: name it in paths", field="hunk.path")
    head = find_base(checkout).head
    paths = [choice.path] if change.old_path is None else [change.old_path, choice.path]
    output = run(checkout.place, *DIFF_OPTIONS, "-U3", head or "HEAD", "--", *paths)
    patch = _one_hunk(output, choice.header)
    if patch is None:
        raise ConflictError("the file changed since: that hunk is not there any more", reason="stale_hunk")
    try:
        # From inside the tree (apply resolves the patch's paths from where it runs): git enters it itself, as
        # the identity it runs as, never the server by a chdir.
        run(checkout.place, "-C", checkout.place.work_tree, "apply", "-R", "--whitespace=nowarn", "-", stdin=patch)
    except GitReadError as error:
        raise ConflictError(f"git could not revert the hunk: {error}") from None
    return [choice.path]


def _uncommitted(checkout: Checkout, path: str) -> list[FileDiff]:
    found = [f for f in snapshot(checkout, ChangeScope.UNCOMMITTED, history=False).files if f.path == path]
    if not found:
        raise NotFoundError("uncommitted change", path)
    return found


def _one_hunk(output: bytes, header: str) -> bytes | None:
    """The file's patch with only the hunk whose header line starts with `header` (its `@@ … @@` part)."""
    lines = output.split(b"\n")
    starts = [n for n, line in enumerate(lines) if line.startswith(b"@@ ")]
    if not starts:
        return None
    wanted = header.encode("utf-8", "surrogateescape").split(b" @@", 1)[0]
    for index, start in enumerate(starts):
        if lines[start].split(b" @@", 1)[0] == wanted:
            end = starts[index + 1] if index + 1 < len(starts) else len(lines)
            body = lines[start:end]
            while body and body[-1] == b"":
                body.pop()
            return b"\n".join(lines[: starts[0]] + body) + b"\n"
    return None
