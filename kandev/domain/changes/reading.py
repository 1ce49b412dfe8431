"""Reading one checkout's changes with git (kandev.domain.changes.git_reader) and, for what git does not read (new
files, sizes), through kandev.domain.changes.tree, which never follows a link. Blocking: run it in a thread."""

from __future__ import annotations

import hashlib
import os
import stat
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

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
from kandev.domain.changes.tree import WorkTree
from kandev.domain.workspace.confined import read_at_most

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
MAX_COMMITS = 200
MAX_MESSAGE = 4000
# A new file is read up to this much to count its lines.
MAX_UNTRACKED_READ = 64 * 1024 * 1024
DIFF_OPTIONS = ("diff", "--no-ext-diff", "--no-textconv", "--no-color", "--ignore-submodules=dirty", "-M", "-C")
# The git calls of one read that do not wait on each other run at once (each is a process: threads only wait).
_POOL = ThreadPoolExecutor(max_workers=8, thread_name_prefix="kandev-git")


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


@dataclass(frozen=True)
class Base:
    head: str | None
    base: str | None  # the merge base
    ref: str | None  # the base branch's ref
    note: str | None


def find_base(checkout: Checkout) -> Base:
    """The branch's head, the base branch's ref (local, else origin's) and their merge base: two git calls."""
    place = checkout.place
    wanted = ["HEAD", f"refs/heads/{checkout.base_branch}", f"refs/remotes/origin/{checkout.base_branch}"]
    asked = "".join(f"{name}^{{commit}}\n" for name in wanted).encode()
    listed = run(place, "cat-file", "--batch-check=%(objectname) %(objecttype)", stdin=asked)
    found = [line.split(" ")[0] if line.endswith(" commit") else None for line in listed.decode().splitlines()]
    head = found[0] if found else None
    tips = dict(zip(wanted[1:], found[1:], strict=False))
    ref = next((name for name, sha in tips.items() if sha), None)
    if ref is None:
        return Base(head, None, None, f"the base branch {checkout.base_branch} does not exist in the repository")
    if head is None:
        return Base(None, tips[ref], ref, None)
    merged = _merge_base(place, tips[ref] or "", head)
    if not merged:
        return Base(head, None, ref, f"the task's branch shares no history with {checkout.base_branch}")
    return Base(head, merged, ref, None)


_MERGE_BASES: dict[tuple[str, str, str], str] = {}


def _merge_base(place: GitPlace, tip: str, head: str) -> str:
    """The merge base of two commits: what it is never changes, so it is asked once per pair (and repository)."""
    key = (place.common_dir, tip, head)
    found = _MERGE_BASES.get(key)
    if found is None:
        found = run(place, "merge-base", tip, head, check=False).decode().strip()
        if found:
            if len(_MERGE_BASES) > 4096:
                _MERGE_BASES.clear()
            _MERGE_BASES[key] = found
    return found


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
    place = checkout.place
    counting = history and base.ref is not None and base.head is not None
    counts = _POOL.submit(_counts, place, base) if counting else None
    commits = _POOL.submit(_commits, place, base) if counting else None
    files = changed_files(place, scope_range(scope, base), paths)
    behind, ahead = counts.result() if counts is not None else (0, 0)
    return Snapshot(base.base, base.head, ahead, behind, files, commits.result() if commits else [], base.note)


def _counts(place: GitPlace, base: Base) -> tuple[int, int]:
    counts = run(place, "rev-list", "--left-right", "--count", f"{base.ref}...{base.head}", check=False).split()
    return (int(counts[0]), int(counts[1])) if len(counts) == 2 else (0, 0)


def changed_files(place: GitPlace, span: Range, paths: list[str] | None) -> list[FileDiff]:
    spec = ["--", *paths] if paths else []
    untracked = _POOL.submit(_untracked_names, place, spec) if span.worktree else None
    unmerged = _POOL.submit(_unmerged, place, spec) if span.worktree else None
    # The sizes of the blobs compared (a file over TOO_LARGE_BYTES on either side is too large to show): for a
    # few paths listed beside the diff, for the whole tree asked after it (only the changed blobs).
    trees = [_POOL.submit(_tree_sizes, place, c, spec) for c in span.args if c != EMPTY_TREE] if paths else []
    listed = run(place, *DIFF_OPTIONS, "-z", "--raw", "--numstat", "--no-abbrev", *span.args, *spec)
    entries = [e for e in parse_raw_numstat(listed) if _clean(e.path) and (e.old_path is None or _clean(e.old_path))]
    if paths:
        sizes = {sha: size for tree in trees for sha, size in tree.result().items()}
    else:
        sizes = _blob_sizes(place, [sha for e in entries for sha in (e.old_sha, e.new_sha) if sha])
    conflicted = unmerged.result() if unmerged is not None else set()
    for entry in entries:
        if entry.path in conflicted:
            entry.status = FileStatus.UNMERGED
    with _tree(place) as tree:
        files = [_file(tree, entry, span, sizes) for entry in entries]
        if untracked is not None:
            files += [found for name in untracked.result() if (found := _untracked_file(tree, name)) is not None]
    return sorted(files, key=lambda f: f.path)


def _tree(place: GitPlace) -> WorkTree:
    return WorkTree(place.work_tree, None if place.run_as is None else place.run_as.uid)


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


def _tree_sizes(place: GitPlace, commit: str, spec: list[str]) -> dict[str, int]:
    """The size of every blob of a commit's tree under `spec`, by object id: one listing, no file read."""
    listed = run(place, "ls-tree", "-r", "-l", "-z", "--full-tree", commit, *spec)
    sizes = {}
    for item in listed.split(b"\0"):
        meta, _, _ = item.partition(b"\t")
        fields = meta.split()
        if len(fields) == 4 and fields[1] == b"blob" and fields[3].isdigit():
            sizes[fields[2].decode()] = int(fields[3])
    return sizes


def _file(tree: WorkTree, entry: RawEntry, span: Range, sizes: dict[str, int]) -> FileDiff:
    new_side = ""
    size = max((sizes.get(sha or "", 0) for sha in (entry.old_sha, entry.new_sha)), default=0)
    if span.worktree and entry.new_sha is None and entry.new_mode not in (None, SYMLINK_MODE, SUBMODULE_MODE):
        found = tree.lstat(entry.path)
        if found is not None and stat.S_ISREG(found.st_mode):
            size = max(size, found.st_size)
            new_side = f"{found.st_size}:{found.st_mtime_ns}"
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


def _untracked_names(place: GitPlace, spec: list[str]) -> list[str]:
    listed = run(place, "ls-files", "-z", "--others", "--exclude-standard", *spec)
    names = listed.decode("utf-8", "surrogateescape").split("\0")
    return [n for n in names if n and not n.endswith("/") and _clean(n)]


def _untracked_file(tree: WorkTree, path: str) -> FileDiff | None:
    target = tree.read_link(path)
    if target is not None:
        return _added(path, SYMLINK_MODE, target.encode("utf-8", "surrogateescape"), len(target), "link")
    opened = tree.open_file(path)
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


def read_file(place: GitPlace, path: str, limit: int = TOO_LARGE_BYTES * 4) -> bytes | None:
    """A working-tree file's bytes (a link's target text), or None when it is not there or not readable."""
    with _tree(place) as tree:
        return tree.read(path, limit)


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


def file_patch(
    checkout: Checkout,
    scope: ChangeScope,
    file: FileDiff,
    context: int,
    include_large: bool,
    base: Base | None = None,
) -> FilePatch:
    """One changed file's hunks with `context` lines around each change; none for a binary file, or for a
    too-large one unless `include_large`. `base`: what the file was listed against (else found again)."""
    if file.binary or (file.too_large and not include_large):
        return FilePatch([], left_out=file.too_large and not file.binary, binary=file.binary)
    if file.untracked:
        return added_file_patch(read_file(checkout.place, file.path, MAX_UNTRACKED_READ) or b"")
    span = scope_range(scope, base or find_base(checkout))
    paths = [file.path] if file.old_path is None else [file.old_path, file.path]
    return parse_patch(
        run(checkout.place, *DIFF_OPTIONS, f"-U{context}", "--submodule=short", *span.args, "--", *paths)
    )


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
