"""A task's changes: per repository against its base, file by file, hunk by hunk (Task.changes)."""

from __future__ import annotations

import asyncio
import base64
from typing import Annotated, cast

import strawberry

from kandev.domain.changes import diffs
from kandev.domain.changes.diffs import FileDiff, FilePatch
from kandev.domain.changes.reading import Base
from kandev.domain.changes.service import RepositoryChanges as RepositoryRecord
from kandev.domain.changes.service import TaskChanges as TaskChangesRecord
from kandev.domain.errors import ValidationError
from kandev.graphql.schema.context import Info
from kandev.graphql.schema.fields import described

# Registered in place (strawberry.enum marks the class and returns it): the names below are the domain's classes.
strawberry.enum(
    diffs.ChangeScope,
    description="Which changes: ALL (the branch's commits plus uncommitted and untracked work, against the merge "
    "base with the base branch), UNCOMMITTED (against the branch's last commit, untracked files included), "
    "COMMITTED (the branch's commits only).",
)
strawberry.enum(
    diffs.FileStatus,
    description="How a file changed: RENAMED and COPIED name the source in oldPath; TYPE_CHANGED is a file that "
    "became a link, a submodule or the reverse; UNMERGED is a file a merge left in conflict.",
)
strawberry.enum(diffs.LineKind, name="DiffLineKind", description="What a line of a hunk is.")
ChangeScope = diffs.ChangeScope
FileStatus = diffs.FileStatus
DiffLineKind = diffs.LineKind

MAX_FILES_PAGE = 500


@strawberry.type(description="How much a task (or a repository of it) changed.")
class ChangeStats:
    files: int = strawberry.field(description="Changed files.")
    additions: int = strawberry.field(description="Added lines (+).")
    deletions: int = strawberry.field(description="Deleted lines (−).")


@strawberry.type(description="One line of a hunk; numbers are 1-based lines of the old and new versions.")
class DiffLine:
    kind: DiffLineKind
    old_number: int | None = strawberry.field(description="Its line in the old version; null for an added line.")
    new_number: int | None = strawberry.field(description="Its line in the new version; null for a deleted line.")
    text: str = strawberry.field(
        description="The line without its newline, as plain text (bytes that are not UTF-8 read U+FFFD)."
    )


@strawberry.type(description="A run of changed lines with their context, as in a unified diff.")
class DiffHunk:
    hunk: strawberry.Private[diffs.Hunk]
    header: str = strawberry.field(description="The hunk's `@@ -a,b +c,d @@` line, with git's section heading.")
    old_start: int
    old_lines: int
    new_start: int
    new_lines: int

    @classmethod
    def of(cls, hunk: diffs.Hunk) -> DiffHunk:
        return cls(
            hunk=hunk,
            header=hunk.header,
            old_start=hunk.old_start,
            old_lines=hunk.old_lines,
            new_start=hunk.new_start,
            new_lines=hunk.new_lines,
        )

    @described("The hunk's lines in order.")
    def lines(self) -> list[DiffLine]:
        # The domain's lines answer as they are (same attribute names): no object made per line of a big diff.
        return cast(list[DiffLine], self.hunk.lines)


@strawberry.type(description="A submodule's recorded commit before and after.")
class SubmoduleChange:
    old_commit: str | None
    new_commit: str | None


@strawberry.type(description="One changed file of a repository.")
class FileChange:
    file: strawberry.Private[FileDiff]
    task_id: strawberry.Private[str]
    repository_id: strawberry.Private[str]
    scope: strawberry.Private[diffs.ChangeScope]
    # What it was listed against: its hunks are read against the same (no second look-up of the base).
    base: strawberry.Private[Base | None]
    patches: strawberry.Private[dict[tuple[int, bool], asyncio.Future[FilePatch]]]

    path: str
    old_path: str | None = strawberry.field(description="Where a RENAMED or COPIED file came from.")
    status: FileStatus
    additions: int
    deletions: int
    binary: bool = strawberry.field(description="git sees binary content: no hunks.")
    too_large: bool = strawberry.field(
        description="Over 1 MiB, or over 20,000 changed lines: hunks are left out unless asked for (includeLarge)."
    )
    reviewed: bool = strawberry.field(
        description="Marked reviewed (setFileReviewed) at this very diff: a later change of the file clears it."
    )
    diff_key: str = strawberry.field(description="Identifies this version of the file's diff (setFileReviewed).")
    old_mode: str | None = strawberry.field(description="git's mode before: 100644, 100755, 120000 (link), 160000.")
    new_mode: str | None = strawberry.field(description="git's mode after; differs from oldMode on a mode change.")
    symlink: bool = strawberry.field(description="A link: its lines are the link's target text, never its content.")
    submodule: bool = strawberry.field(description="A submodule: see submoduleChange for its commits.")
    untracked: bool = strawberry.field(description="A new file git does not track yet.")

    @classmethod
    def of(
        cls,
        file: FileDiff,
        task_id: str,
        repository_id: str,
        scope: diffs.ChangeScope,
        reviewed_key: str | None,
        base: Base | None = None,
    ) -> FileChange:
        return cls(
            file=file,
            task_id=task_id,
            repository_id=repository_id,
            scope=scope,
            base=base,
            patches={},
            path=file.path,
            old_path=file.old_path,
            status=file.status,
            additions=file.additions,
            deletions=file.deletions,
            binary=file.binary,
            too_large=file.too_large,
            reviewed=reviewed_key == file.key,
            diff_key=file.key,
            old_mode=file.old_mode,
            new_mode=file.new_mode,
            symlink=file.is_symlink,
            submodule=file.is_submodule,
            untracked=file.untracked,
        )

    def _patch(self, info: Info, context: int, large: bool) -> asyncio.Future[FilePatch]:
        """Read once per file and arguments, whichever field asks first."""
        key = (context, large)
        if key not in self.patches:
            call = info.context.services.changes.patch(
                self.task_id, self.repository_id, self.scope, self.file, context, large, self.base
            )
            self.patches[key] = asyncio.ensure_future(call)
        return self.patches[key]

    @described(
        "The file's hunks with `context` unchanged lines around each change; none for a binary file, nor "
        "for a too-large one unless includeLarge."
    )
    async def hunks(
        self,
        info: Info,
        context: Annotated[int, strawberry.argument(description="Unchanged lines around each change, 0 to 10000.")] = 3,
        include_large: Annotated[
            bool, strawberry.argument(description="Read a tooLarge file's hunks anyway (slow to show).")
        ] = False,
    ) -> list[DiffHunk]:
        patch = await self._patch(info, context, include_large)
        return [DiffHunk.of(h) for h in patch.hunks]

    @described(
        "The file's text is not all UTF-8: its lines show U+FFFD where the bytes are not (read with the "
        "default hunks; false when they were left out)."
    )
    async def invalid_utf8(self, info: Info) -> bool:
        return (await self._patch(info, 3, False)).invalid_utf8

    @described("A submodule's old and new commits; null for anything else.")
    async def submodule_change(self, info: Info) -> SubmoduleChange | None:
        if not self.file.is_submodule:
            return None
        patch = await self._patch(info, 3, False)
        return SubmoduleChange(old_commit=patch.old_submodule_commit, new_commit=patch.new_submodule_commit)


@strawberry.type
class FileChangeEdge:
    cursor: str
    node: FileChange


@strawberry.type
class FileChangePageInfo:
    has_next_page: bool
    end_cursor: str | None


@strawberry.type(description="A page of changed files, by path.")
class FileChangeConnection:
    edges: list[FileChangeEdge]
    page_info: FileChangePageInfo
    total_count: int

    @strawberry.field
    def nodes(self) -> list[FileChange]:
        return [edge.node for edge in self.edges]


@strawberry.type(description="A commit on the task's branch since its base.")
class Commit:
    sha: str
    message: str
    author: str
    authored_at: str = strawberry.field(description="ISO 8601, with the author's offset.")


def _cursor(path: str) -> str:
    return base64.urlsafe_b64encode(path.encode("utf-8", "surrogateescape")).decode()


def _after(cursor: str | None) -> str | None:
    if cursor is None:
        return None
    try:
        return base64.urlsafe_b64decode(cursor.encode()).decode("utf-8", "surrogateescape")
    except (ValueError, UnicodeDecodeError):
        raise ValidationError("after is not a cursor from this API", field="after") from None


@strawberry.type(description="One repository of a task: its changes against the base branch.")
class RepositoryChanges:
    record: strawberry.Private[RepositoryRecord]
    task_id: strawberry.Private[str]
    scope: strawberry.Private[diffs.ChangeScope]

    repository_id: strawberry.ID
    name: str
    branch: str | None = strawberry.field(description="The task's branch; null until its worktree is made.")
    base_branch: str = strawberry.field(description="What the changes are against (updateRepositoryBaseBranch).")
    base_commit: str | None = strawberry.field(
        description="The merge base of the task's branch and the base branch; null when there is none."
    )
    head_commit: str | None = strawberry.field(description="The branch's last commit.")
    ahead: int = strawberry.field(description="Commits on the task's branch that the base branch lacks.")
    behind: int = strawberry.field(description="Commits on the base branch since the task's branch left it.")
    note: str | None = strawberry.field(
        description="Why nothing (or not everything) is shown: the worktree is not made yet, the base branch is "
        "missing, the worktree's .git was moved."
    )
    stats: ChangeStats
    reviewed_files: int = strawberry.field(
        description='How many of the changed files are marked reviewed at their current diff ("3 of 12 reviewed").'
    )
    commits: list[Commit] = strawberry.field(description="Newest first, at most 200.")

    @classmethod
    def of(cls, record: RepositoryRecord, task_id: str, scope: diffs.ChangeScope) -> RepositoryChanges:
        snapshot = record.snapshot
        files = snapshot.files if snapshot else []
        return cls(
            record=record,
            task_id=task_id,
            scope=scope,
            repository_id=strawberry.ID(record.repository_id),
            name=record.name,
            branch=record.branch,
            base_branch=record.base_branch,
            base_commit=snapshot.base_commit if snapshot else None,
            head_commit=snapshot.head_commit if snapshot else None,
            ahead=snapshot.ahead if snapshot else 0,
            behind=snapshot.behind if snapshot else 0,
            note=record.note,
            reviewed_files=sum(1 for f in files if record.reviewed.get(f.path) == f.key),
            stats=ChangeStats(
                files=len(files),
                additions=sum(f.additions for f in files),
                deletions=sum(f.deletions for f in files),
            ),
            commits=[
                Commit(sha=c.sha, message=c.message, author=c.author, authored_at=c.authored_at)
                for c in (snapshot.commits if snapshot else [])
            ],
        )

    @described("The changed files by path, a page at a time (first: 1 to 500).")
    def files(self, first: int = 200, after: str | None = None) -> FileChangeConnection:
        if not 1 <= first <= MAX_FILES_PAGE:
            raise ValidationError(f"first must be between 1 and {MAX_FILES_PAGE}", field="first")
        snapshot = self.record.snapshot
        files = snapshot.files if snapshot else []
        # The base as listed (its ref is no longer needed): a file's hunks are read against it.
        base = (
            Base(snapshot.head_commit, snapshot.base_commit, None, None) if snapshot and snapshot.head_commit else None
        )
        since = _after(after)
        remaining = [f for f in files if since is None or f.path > since]
        page = remaining[:first]
        edges = [
            FileChangeEdge(
                cursor=_cursor(f.path),
                node=FileChange.of(
                    f, self.task_id, self.record.repository_id, self.scope, self.record.reviewed.get(f.path), base
                ),
            )
            for f in page
        ]
        return FileChangeConnection(
            edges=edges,
            page_info=FileChangePageInfo(
                has_next_page=len(remaining) > first, end_cursor=edges[-1].cursor if edges else None
            ),
            total_count=len(files),
        )


@strawberry.type(description="A task's changes, per repository.")
class TaskChanges:
    scope: ChangeScope
    repositories: list[RepositoryChanges] = strawberry.field(
        description="In the task's order; empty for a task that works in no repository (see reason)."
    )
    reason: str | None = strawberry.field(description="Why the task has no repository to show; null otherwise.")

    @classmethod
    def of(cls, record: TaskChangesRecord) -> TaskChanges:
        return cls(
            scope=record.scope,
            repositories=[RepositoryChanges.of(r, record.task_id, record.scope) for r in record.repositories],
            reason=record.reason,
        )
