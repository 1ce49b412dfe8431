"""What a task's changes are made of, as plain values (they travel as JSON when a worker reads them for a
replica), and the parsing of git's output into them. Pure: no git, no files."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from kandev.domain.errors import ValidationError

# Over either limit a file's hunks are left out unless asked for (its stats are still counted).
TOO_LARGE_BYTES = 1024 * 1024
TOO_LARGE_LINES = 20_000
ZERO_SHA = "0" * 40
SYMLINK_MODE, SUBMODULE_MODE = "120000", "160000"


MAX_PATH_LENGTH = 1000


def worktree_path(value: str, field: str) -> str:
    """A path of the working tree as git names files: relative, '/'-separated, no empty, '.', '..' or '.git'
    part, no control character; anything else is refused (never normalized into another file)."""
    if not value or len(value) > MAX_PATH_LENGTH:
        raise ValidationError(f"{field} must be a path of 1 to {MAX_PATH_LENGTH} characters", field=field)
    if any(ord(c) < 32 or c == "\x7f" for c in value):
        raise ValidationError(f"{field} must not contain control characters", field=field)
    parts = value.split("/")
    if value.startswith("/") or any(part in ("", ".", "..", ".git") for part in parts):
        raise ValidationError(
            f"{field} must be a path inside the worktree (relative, no '..', '.' or '.git' part)", field=field
        )
    return value


class ChangeScope(StrEnum):
    ALL = "ALL"  # committed on the task's branch, plus uncommitted and untracked
    UNCOMMITTED = "UNCOMMITTED"  # against the branch's last commit, untracked included
    COMMITTED = "COMMITTED"  # the branch's commits only


class FileStatus(StrEnum):
    ADDED = "ADDED"
    MODIFIED = "MODIFIED"
    DELETED = "DELETED"
    RENAMED = "RENAMED"
    COPIED = "COPIED"
    TYPE_CHANGED = "TYPE_CHANGED"
    UNMERGED = "UNMERGED"


class LineKind(StrEnum):
    CONTEXT = "CONTEXT"
    ADD = "ADD"
    DELETE = "DELETE"


_STATUS = {
    "A": FileStatus.ADDED,
    "M": FileStatus.MODIFIED,
    "D": FileStatus.DELETED,
    "R": FileStatus.RENAMED,
    "C": FileStatus.COPIED,
    "T": FileStatus.TYPE_CHANGED,
    "U": FileStatus.UNMERGED,
}


@dataclass(frozen=True)
class FileDiff:
    """One changed file: what changed and how much; `key` identifies this version of its diff (reviewed marks
    hold it), `size` is its larger side in bytes when known."""

    path: str
    old_path: str | None
    status: FileStatus
    additions: int
    deletions: int
    binary: bool
    too_large: bool
    old_mode: str | None
    new_mode: str | None
    key: str
    untracked: bool = False
    size: int | None = None

    @property
    def is_symlink(self) -> bool:
        return SYMLINK_MODE in (self.old_mode, self.new_mode)

    @property
    def is_submodule(self) -> bool:
        return SUBMODULE_MODE in (self.old_mode, self.new_mode)


@dataclass(frozen=True)
class Commit:
    sha: str
    message: str
    author: str
    authored_at: str  # ISO 8601


@dataclass(frozen=True)
class Snapshot:
    """A repository's changes in one scope: its base (the merge base of the task's branch and the base branch),
    head, how far the branch is ahead and behind, its commits and changed files (sorted by path). `note` says
    why there is nothing to show when something is missing (a base branch that does not exist)."""

    base_commit: str | None
    head_commit: str | None
    ahead: int
    behind: int
    files: list[FileDiff]
    commits: list[Commit]
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Snapshot:
        files = [FileDiff(**{**f, "status": FileStatus(f["status"])}) for f in data["files"]]
        commits = [Commit(**c) for c in data["commits"]]
        return cls(**{**data, "files": files, "commits": commits})


@dataclass(frozen=True)
class DiffLine:
    kind: LineKind
    old_number: int | None
    new_number: int | None
    text: str


@dataclass(frozen=True)
class Hunk:
    header: str
    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    lines: list[DiffLine]


@dataclass(frozen=True)
class FilePatch:
    """One file's hunks, and what the text could not say: bytes that are not UTF-8 (shown as U+FFFD), a
    submodule's old and new commits, hunks left out for size."""

    hunks: list[Hunk]
    invalid_utf8: bool = False
    old_submodule_commit: str | None = None
    new_submodule_commit: str | None = None
    left_out: bool = False
    binary: bool = False

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FilePatch:
        hunks = [
            Hunk(**{**h, "lines": [DiffLine(**{**ln, "kind": LineKind(ln["kind"])}) for ln in h["lines"]]})
            for h in data["hunks"]
        ]
        return cls(**{**data, "hunks": hunks})


@dataclass
class RawEntry:
    """One entry of `git diff --raw -z --numstat`, joined across the two listings."""

    status: FileStatus
    path: str
    old_path: str | None
    old_mode: str | None
    new_mode: str | None
    old_sha: str | None
    new_sha: str | None
    additions: int = 0
    deletions: int = 0
    binary: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


def _mode(value: str) -> str | None:
    return None if value == "000000" else value


def _sha(value: str) -> str | None:
    return None if set(value) == {"0"} else value


def parse_raw_numstat(output: bytes) -> list[RawEntry]:
    """`git diff -z --raw --numstat -M -C --no-abbrev`: the raw entries first, then one numstat per entry in
    the same order (a rename's numstat carries both paths)."""
    parts = output.decode("utf-8", "surrogateescape").split("\0")
    entries: list[RawEntry] = []
    index = 0
    while index < len(parts) and parts[index].startswith(":"):
        old_mode, new_mode, old_sha, new_sha, code = parts[index][1:].split(" ")
        letter = code[0]
        if letter in "RC":
            old_path, path = parts[index + 1], parts[index + 2]
            index += 3
        else:
            old_path, path = None, parts[index + 1]
            index += 2
        if letter not in _STATUS:  # X (unknown) or a status git adds later: not ours to show
            continue
        entries.append(
            RawEntry(_STATUS[letter], path, old_path, _mode(old_mode), _mode(new_mode), _sha(old_sha), _sha(new_sha))
        )
    counts: list[tuple[str, str]] = []
    while index < len(parts):
        head = parts[index]
        if not head:
            index += 1
            continue
        added, deleted, named = head.split("\t", 2)
        index += 3 if not named else 1  # a rename's numstat names its two paths after an empty third field
        counts.append((added, deleted))
    # An unmerged path has a raw entry per stage but one numstat; the counts apply in order to what has them.
    for entry, (added, deleted) in zip(entries, counts, strict=False):
        entry.binary = added == "-"
        entry.additions = 0 if entry.binary else int(added)
        entry.deletions = 0 if entry.binary else int(deleted)
    return _merged_unmerged(entries)


def _merged_unmerged(entries: list[RawEntry]) -> list[RawEntry]:
    """An unmerged path is listed once."""
    seen: set[str] = set()
    kept = []
    for entry in entries:
        if entry.status == FileStatus.UNMERGED:
            if entry.path in seen:
                continue
            seen.add(entry.path)
        kept.append(entry)
    return kept


_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")
_SUBMODULE = re.compile(rb"^([-+])Subproject commit ([0-9a-f]{40})")


def parse_patch(output: bytes) -> FilePatch:
    """One file's unified diff (git diff -U<n> for a single file): its hunks, lines decoded as UTF-8 with
    replacement characters where the bytes are not, a submodule's commits, and whether git called it binary."""
    hunks: list[Hunk] = []
    invalid = binary = False
    submodule: dict[str, str] = {}
    current: tuple[bytes, list[int], list[DiffLine]] | None = None
    old_number = new_number = 0

    def close() -> None:
        if current is not None:
            header, numbers, lines = current
            hunks.append(Hunk(_text(header), numbers[0], numbers[1], numbers[2], numbers[3], lines))

    for raw in output.split(b"\n"):
        match = _HUNK.match(raw)
        if match:
            close()
            old_start, old_count, new_start, new_count = (
                int(match.group(1)),
                int(match.group(2) or b"1"),
                int(match.group(3)),
                int(match.group(4) or b"1"),
            )
            current = (raw, [old_start, old_count, new_start, new_count], [])
            old_number, new_number = old_start, new_start
            continue
        if current is None:
            if raw.startswith(b"Binary files ") or raw == b"GIT binary patch":
                binary = True
            continue
        sub = _SUBMODULE.match(raw)
        if sub:
            submodule["old" if sub.group(1) == b"-" else "new"] = sub.group(2).decode()
        marker, body = raw[:1], raw[1:]
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            text, invalid = body.decode("utf-8", "replace"), True
        lines = current[2]
        if marker == b" ":
            lines.append(DiffLine(LineKind.CONTEXT, old_number, new_number, text))
            old_number, new_number = old_number + 1, new_number + 1
        elif marker == b"-":
            lines.append(DiffLine(LineKind.DELETE, old_number, None, text))
            old_number += 1
        elif marker == b"+":
            lines.append(DiffLine(LineKind.ADD, None, new_number, text))
            new_number += 1
        # "\ No newline at end of file" and the empty last line carry nothing to show
    close()
    return FilePatch(
        hunks,
        invalid_utf8=invalid,
        old_submodule_commit=submodule.get("old"),
        new_submodule_commit=submodule.get("new"),
        binary=binary,
    )


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def added_file_patch(content: bytes) -> FilePatch:
    """The patch of a new file that git does not track yet: every line added."""
    if not content:
        return FilePatch([])
    invalid = False
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        text, invalid = content.decode("utf-8", "replace"), True
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    header = f"@@ -0,0 +1,{len(lines)} @@"
    diff_lines = [DiffLine(LineKind.ADD, None, number, line) for number, line in enumerate(lines, 1)]
    return FilePatch([Hunk(header, 0, 0, 1, len(lines), diff_lines)], invalid_utf8=invalid)


def line_count(content: bytes) -> int:
    """Lines as git counts them: a last line without a newline counts."""
    if not content:
        return 0
    return content.count(b"\n") + (0 if content.endswith(b"\n") else 1)


def looks_binary(content: bytes) -> bool:
    """git's rule: a NUL byte in the first 8000 bytes."""
    return b"\0" in content[:8000]
