"""Reading one checkout's changes with git (kandev.domain.changes.git_reader) and, for files git does not track
yet, through descriptors that never follow a link out of the working tree. Blocking: run it in a thread."""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from kandev.domain.changes.diffs import (
    SUBMODULE_MODE,
    SYMLINK_MODE,
    TOO_LARGE_BYTES,
    TOO_LARGE_LINES,
    ChangeScope,
    Commit,
    FileDiff,
    FilePatch,
    FileStatus,
    RawEntry,
    Snapshot,
    added_file_patch,
    line_count,
    looks_binary,
    parse_patch,
    parse_raw_numstat,
)
from kandev.domain.changes.git_reader import GitPlace, GitReadError, run
from kandev.domain.workspace.confined import LinkEscape, open_inside, read_at_most

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
MAX_COMMITS = 200
MAX_MESSAGE = 4000
# An untracked file is read up to this much to count its lines; a larger one counts what was read.
MAX_UNTRACKED_READ = 64 * 1024 * 1024
DIFF_OPTIONS = ("diff", "--no-ext-diff", "--no-textconv", "--no-color", "--ignore-submodules=dirty", "-M", "-C")


@dataclass(frozen=True)
class Checkout:
    """One repository of a task as the reader needs it: where git finds it and what its changes are against."""

    place: GitPlace
    base_branch: str


@dataclass(frozen=True)
class Range:
    """The diff arguments of a scope once the base is known; `worktree` when the working tree is one side."""

    args: tuple[str, ...]
    worktree: bool


def _rev(place: GitPlace, name: str) -> str | None:
    found = run(place, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{name}^{{commit}}", check=False)
    text = found.decode().strip()
    return text or None


def _base_ref(checkout: Checkout) -> str | None:
    for ref in (f"refs/heads/{checkout.base_branch}", f"refs/remotes/origin/{checkout.base_branch}"):
        if _rev(checkout.place, ref) is not None:
            return ref
    return None


@dataclass(frozen=True)
class Base:
    head: str | None
    base: str | None  # the merge base
    ref: str | None  # the base branch's ref
    note: str | None


def find_base(checkout: Checkout) -> Base:
    place = checkout.place
    head = _rev(place, "HEAD")
    ref = _base_ref(checkout)
    if ref is None:
        return Base(head, None, None, f"the base branch {checkout.base_branch} does not exist in the repository")
    if head is None:
        return Base(None, _rev(place, ref), ref, None)
    merged = run(place, "merge-base", ref, head, check=False).decode().strip()
    if not merged:
        return Base(head, None, ref, f"the task's branch shares no history with {checkout.base_branch}")
    return Base(head, merged, ref, None)


def scope_range(scope: ChangeScope, base: Base) -> Range:
    since = base.base or EMPTY_TREE
    if scope == ChangeScope.UNCOMMITTED:
        return Range((base.head or EMPTY_TREE,), True)
    if scope == ChangeScope.COMMITTED:
        return Range((since, base.head or EMPTY_TREE), False)
    return Range((since,), True)


def snapshot(
    checkout: Checkout, scope: ChangeScope, paths: list[str] | None = None, *, history: bool = True
) -> Snapshot:
    """The checkout's changes in `scope` (only `paths` when given: a renamed file needs both its paths); without
    `history`, no commits nor ahead and behind counts (measuring stats needs none)."""
    base = find_base(checkout)
    span = scope_range(scope, base)
    files = changed_files(checkout.place, span, paths)
    ahead = behind = 0
    commits: list[Commit] = []
    if history and base.ref is not None and base.head is not None:
        counts = run(checkout.place, "rev-list", "--left-right", "--count", f"{base.ref}...{base.head}", check=False)
        behind, ahead = (int(n) for n in (counts.decode().split() or ["0", "0"]))
        commits = _commits(checkout.place, base)
    return Snapshot(base.base, base.head, ahead, behind, files, commits, base.note)


def changed_files(place: GitPlace, span: Range, paths: list[str] | None) -> list[FileDiff]:
    spec = ["--", *paths] if paths else []
    listed = run(place, *DIFF_OPTIONS, "-z", "--raw", "--numstat", "--no-abbrev", *span.args, *spec)
    entries = [e for e in parse_raw_numstat(listed) if _clean(e.path) and (e.old_path is None or _clean(e.old_path))]
    sizes = _blob_sizes(place, [sha for e in entries for sha in (e.old_sha, e.new_sha) if sha])
    if span.worktree:
        unmerged = _unmerged(place, spec)
        for entry in entries:
            if entry.path in unmerged:
                entry.status = FileStatus.UNMERGED
    files = [_file(place, entry, span, sizes) for entry in entries]
    if span.worktree:
        files += _untracked(place, paths)
    return sorted(files, key=lambda f: f.path)


def _unmerged(place: GitPlace, spec: list[str]) -> set[str]:
    """Paths a merge left in conflict (the index holds their stages): a diff against a commit calls them modified."""
    listed = run(place, "ls-files", "-z", "--unmerged", *spec).decode("utf-8", "surrogateescape")
    return {item.split("\t", 1)[1] for item in listed.split("\0") if "\t" in item}


def _clean(path: str) -> bool:
    """A path git may list from an index the agent wrote: only plain relative ones are shown."""
    parts = path.split("/")
    return bool(path) and not path.startswith("/") and ".." not in parts and ".git" not in parts and "\0" not in path


def _blob_sizes(place: GitPlace, shas: list[str]) -> dict[str, int]:
    if not shas:
        return {}
    listed = run(place, "cat-file", "--batch-check=%(objectname) %(objectsize)", stdin="\n".join(shas).encode() + b"\n")
    sizes = {}
    for line in listed.decode().splitlines():
        name, _, size = line.partition(" ")
        if size.isdigit():
            sizes[name] = int(size)
    return sizes


def _file(place: GitPlace, entry: RawEntry, span: Range, sizes: dict[str, int]) -> FileDiff:
    new_side = ""
    size = max((sizes.get(sha or "", 0) for sha in (entry.old_sha, entry.new_sha)), default=0)
    if span.worktree and entry.new_sha is None and entry.status != FileStatus.DELETED:
        found = _worktree_stat(place, entry.path, entry.new_mode)
        if found is not None:
            size = max(size, found[0])
            new_side = f"{found[0]}:{found[1]}"
    too_large = size > TOO_LARGE_BYTES or entry.additions + entry.deletions > TOO_LARGE_LINES
    key = _key(entry.status, entry.old_path, entry.old_sha, entry.new_sha or new_side, entry.old_mode, entry.new_mode)
    return FileDiff(
        path=entry.path,
        old_path=entry.old_path,
        status=entry.status,
        additions=entry.additions,
        deletions=entry.deletions,
        binary=entry.binary,
        too_large=too_large,
        old_mode=entry.old_mode,
        new_mode=entry.new_mode,
        key=key,
        size=size,
    )


def _key(*parts: object) -> str:
    """Identifies this version of a file's diff: its blobs, or its size and time of change in the working tree."""
    return hashlib.sha256("|".join(str(p) for p in parts).encode("utf-8", "surrogateescape")).hexdigest()[:32]


def _worktree_stat(place: GitPlace, path: str, mode: str | None) -> tuple[int, int] | None:
    """Size and change time of a working-tree file (a link's own, never its target's)."""
    if mode in (SYMLINK_MODE, SUBMODULE_MODE):
        return None
    opened = _open(place, path)
    if opened is None:
        return None
    fd, info = opened
    os.close(fd)
    return info.st_size, info.st_mtime_ns


def _open(place: GitPlace, path: str) -> tuple[int, os.stat_result] | None:
    """A descriptor of a regular file of the working tree, never reached through a link leading out, and (when
    agents run as their own identity) only one of that identity's own: a hard link to anyone else's file is not
    read."""
    try:
        opened = open_inside(Path(place.work_tree), path)
    except LinkEscape:
        return None
    if opened is None:
        return None
    fd, _ = opened
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or (place.run_as is not None and info.st_uid != place.run_as.uid):
        os.close(fd)
        return None
    return fd, info


def _untracked(place: GitPlace, paths: list[str] | None) -> list[FileDiff]:
    spec = ["--", *paths] if paths else []
    listed = run(place, "ls-files", "-z", "--others", "--exclude-standard", *spec)
    names = [n for n in listed.decode("utf-8", "surrogateescape").split("\0") if n and not n.endswith("/")]
    return [found for name in names if _clean(name) and (found := _untracked_file(place, name)) is not None]


def _untracked_file(place: GitPlace, path: str) -> FileDiff | None:
    target = read_link(place, path)
    if target is not None:
        return _added(path, SYMLINK_MODE, target.encode("utf-8", "surrogateescape"), len(target), "link")
    opened = _open(place, path)
    if opened is None:
        return None
    fd, info = opened
    try:
        content = read_at_most(fd, MAX_UNTRACKED_READ)
    finally:
        os.close(fd)
    mode = "100755" if info.st_mode & stat.S_IXUSR else "100644"
    return _added(path, mode, content, info.st_size, f"{info.st_size}:{info.st_mtime_ns}")


def _added(path: str, mode: str, content: bytes, size: int, version: str) -> FileDiff:
    binary = looks_binary(content)
    lines = 0 if binary else line_count(content)
    return FileDiff(
        path=path,
        old_path=None,
        status=FileStatus.ADDED,
        additions=lines,
        deletions=0,
        binary=binary,
        too_large=size > TOO_LARGE_BYTES or lines > TOO_LARGE_LINES,
        old_mode=None,
        new_mode=mode,
        key=_key("untracked", version, mode),
        untracked=True,
        size=size,
    )


def read_link(place: GitPlace, path: str) -> str | None:
    """The target text of a link in the working tree (never what it points at); None when `path` is no link.
    Its folder is opened inside the tree first, so no link on the way is followed out."""
    folder, _, name = path.rpartition("/")
    try:
        opened = open_inside(Path(place.work_tree), folder or ".")
    except LinkEscape:
        return None
    if opened is None:
        return None
    fd, _ = opened
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            return None
        return os.readlink(name, dir_fd=fd)
    except OSError:
        return None
    finally:
        os.close(fd)


def read_file(place: GitPlace, path: str, limit: int = TOO_LARGE_BYTES * 4) -> bytes | None:
    """A working-tree file's bytes (a link's target text), or None when it is not there or not readable."""
    target = read_link(place, path)
    if target is not None:
        return target.encode("utf-8", "surrogateescape")
    opened = _open(place, path)
    if opened is None:
        return None
    fd, _ = opened
    try:
        return read_at_most(fd, limit)
    finally:
        os.close(fd)


def _commits(place: GitPlace, base: Base) -> list[Commit]:
    since = f"{base.base}..{base.head}" if base.base else str(base.head)
    listed = run(
        place, "log", "--no-show-signature", f"-n{MAX_COMMITS}", "--format=%H%x00%an%x00%aI%x00%B%x1e", since, "--"
    )
    commits = []
    for record in listed.decode("utf-8", "replace").split("\x1e"):
        fields = record.strip("\n").split("\0")
        if len(fields) == 4:
            sha, author, at, message = fields
            commits.append(Commit(sha, message.strip()[:MAX_MESSAGE], author, at))
    return commits


def file_patch(checkout: Checkout, scope: ChangeScope, file: FileDiff, context: int, include_large: bool) -> FilePatch:
    """One changed file's hunks with `context` lines around each change; none for a binary file, or for a
    too-large one unless `include_large`."""
    if file.binary or (file.too_large and not include_large):
        return FilePatch([], left_out=file.too_large and not file.binary, binary=file.binary)
    if file.untracked:
        content = read_file(checkout.place, file.path, MAX_UNTRACKED_READ) or b""
        return added_file_patch(content)
    span = scope_range(scope, find_base(checkout))
    paths = [file.path] if file.old_path is None else [file.old_path, file.path]
    output = run(checkout.place, *DIFF_OPTIONS, f"-U{context}", "--submodule=short", *span.args, "--", *paths)
    patch = parse_patch(output)
    return patch


def file_lines(checkout: Checkout, path: str, commit: str | None = None) -> list[str] | None:
    """A file's lines now (the working tree) or at `commit`; None when it is not there or is binary."""
    if commit is None:
        content = read_file(checkout.place, path)
    else:
        try:
            content = run(checkout.place, "cat-file", "blob", f"{commit}:{path}", limit=TOO_LARGE_BYTES * 4)
        except GitReadError:
            content = None
    if content is None or looks_binary(content):
        return None
    text = content.decode("utf-8", "replace")
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return lines


__all__ = ["Checkout", "GitReadError", "file_lines", "file_patch", "read_file", "snapshot"]
