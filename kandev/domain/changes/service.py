"""A task's changes for the people who can read the task: read here when this process can reach the worktree,
else asked of the worker holding it (at most WORKER_WAIT_SECONDS, then UNAVAILABLE naming that worker)."""

from __future__ import annotations

import asyncio
from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy import select

from kandev.domain.access.scope import load_task
from kandev.domain.changes.diffs import ChangeScope, FileDiff, FilePatch, FileStatus, Snapshot, worktree_path
from kandev.domain.changes.git_reader import GitReadError, with_filters_emptied
from kandev.domain.changes.places import Located, TaskPlaces, locate
from kandev.domain.changes.reading import Base, Checkout, file_lines, file_patch, find_base, snapshot
from kandev.domain.context import ServiceContext
from kandev.domain.errors import (
    ConflictError,
    DomainError,
    NotFoundError,
    UnavailableError,
    UnprocessableError,
    ValidationError,
)
from kandev.models import ReviewedFile, Task

WORKER_WAIT_SECONDS = 5.0
MAX_PATHS = 100
MAX_CONTEXT = 10_000


@dataclass(frozen=True)
class RepositoryChanges:
    """One repository of the task: its names and branches, and its changes when they could be read (`note`
    says why not otherwise)."""

    repository_id: str
    name: str
    branch: str | None
    base_branch: str
    snapshot: Snapshot | None
    note: str | None
    # Diff keys the files were marked reviewed at, by path.
    reviewed: dict[str, str]

    @property
    def is_readable(self) -> bool:
        return self.snapshot is not None


@dataclass(frozen=True)
class FileLines:
    """A file's lines in one version (None: not there, or binary) and the commit that version is of: the
    branch's last commit for the working tree (which may hold uncommitted lines), the merge base for the base."""

    lines: list[str] | None
    commit: str | None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class TaskChanges:
    task_id: str
    scope: ChangeScope
    repositories: list[RepositoryChanges]
    reason: str | None


def checked_paths(paths: list[str] | None) -> list[str] | None:
    if paths is None:
        return None
    if len(paths) > MAX_PATHS:
        raise ValidationError(f"paths takes at most {MAX_PATHS} items", field="paths")
    return [worktree_path(path, f"paths[{n}]") for n, path in enumerate(paths)]


async def read_snapshot(
    ctx: ServiceContext,
    task_id: str,
    located: Located,
    scope: ChangeScope,
    paths: list[str] | None,
    history: bool = True,
) -> Snapshot | None:
    """The repository's changes (with its commits and ahead/behind counts when `history`), read here or by the
    worker holding them; None when nobody has them yet."""
    if located.checkout is not None:
        return await asyncio.to_thread(_local_snapshot, located.checkout, scope, paths, history)
    request = {"op": "snapshot", "task_id": task_id, "scope": scope.value, "paths": paths, "history": history}
    answer = await ask_holder(ctx, located, request)
    return None if answer is None else Snapshot.from_json(answer)


async def read_patch(
    ctx: ServiceContext,
    task_id: str,
    located: Located,
    scope: ChangeScope,
    file: FileDiff,
    context: int,
    large: bool,
    base: Base | None = None,
) -> FilePatch:
    """One listed file's hunks (`base`: the one it was listed against, when known), here or by the worker."""
    if located.checkout is not None:
        return await asyncio.to_thread(_local_patch, located.checkout, scope, file, context, large, base)
    request = {
        "op": "patch",
        "task_id": task_id,
        "scope": scope.value,
        "file": asdict(file),
        "context": context,
        "include_large": large,
        "base": None if base is None else asdict(base),
    }
    answer = await ask_holder(ctx, located, request)
    return FilePatch([]) if answer is None else FilePatch.from_json(answer)


async def read_lines(ctx: ServiceContext, task_id: str, located: Located, path: str, base: bool) -> FileLines:
    """A file's lines in the working tree, or (`base`) at the merge base; read here or by the worker holding it."""
    if located.checkout is not None:
        return await asyncio.to_thread(_local_lines, located.checkout, path, base)
    answer = await ask_holder(ctx, located, {"op": "lines", "task_id": task_id, "path": path, "base": base})
    return FileLines(None, None) if answer is None else FileLines(**answer)


def _local_lines(checkout: Checkout, path: str, base: bool) -> FileLines:
    prepared = prepared_checkout(checkout)
    try:
        found = find_base(prepared)
        if base:
            lines = file_lines(prepared, path, found.base) if found.base else None
            return FileLines(lines, found.base)
        return FileLines(file_lines(prepared, path), found.head)
    except GitReadError as error:
        raise UnprocessableError(f"the file could not be read: {error}") from None


def prepared_checkout(checkout: Checkout) -> Checkout:
    """The checkout with every filter driver its config names emptied (looked up once per read)."""
    return Checkout(with_filters_emptied(checkout.place), checkout.base_branch)


def _local_snapshot(checkout: Checkout, scope: ChangeScope, paths: list[str] | None, history: bool = True) -> Snapshot:
    try:
        return snapshot(prepared_checkout(checkout), scope, paths, history=history)
    except GitReadError as error:
        raise UnprocessableError(f"the changes could not be read: {error}") from None


def _local_patch(
    checkout: Checkout, scope: ChangeScope, file: FileDiff, context: int, large: bool, base: Base | None = None
) -> FilePatch:
    try:
        return file_patch(prepared_checkout(checkout), scope, file, context, large, base)
    except GitReadError as error:
        raise UnprocessableError(f"the file's changes could not be read: {error}") from None


async def ask_holder(ctx: ServiceContext, located: Located, request: dict[str, Any]) -> dict[str, Any] | None:
    """The worker holding the worktree answers, or UNAVAILABLE naming it after WORKER_WAIT_SECONDS."""
    if located.worker is None:
        return None
    request["repository_id"] = located.repository_id
    answer = await ctx.jobs.ask_worker(located.worker, request, WORKER_WAIT_SECONDS)
    if answer is None:
        raise UnavailableError(
            f"worker {located.worker}, which holds the task's worktree, did not answer within "
            f"{WORKER_WAIT_SECONDS:g} s",
            worker=located.worker,
        )
    if "error" in answer:
        raise _answered_error(answer, located.worker)
    result: dict[str, Any] = answer["result"]
    return result


def error_answer(error: DomainError) -> dict[str, Any]:
    """A worker's refusal as the replica re-raises it (_answered_error)."""
    return {
        "error": error.message,
        "code": error.code,
        "entity": getattr(error, "entity", None),
        "field": getattr(error, "field", None),
    }


def _answered_error(answer: dict[str, Any], worker: str) -> DomainError:
    message, code = str(answer["error"]), answer.get("code")
    if code == NotFoundError.code:
        return NotFoundError(str(answer.get("entity") or "file"))
    if code == ValidationError.code:
        return ValidationError(message, field=answer.get("field"))
    if code == ConflictError.code:
        return ConflictError(message, worker=worker)
    return UnprocessableError(message, worker=worker)


class ChangesService:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    async def _places(self, task_id: str) -> tuple[Task, TaskPlaces, dict[tuple[str, str], str]]:
        async with self.ctx.read() as db:
            task = await load_task(db, self.ctx.principal, task_id)
            places = await locate(db, self.ctx.settings, task)
            marks = await db.execute(
                select(ReviewedFile.repository_id, ReviewedFile.path, ReviewedFile.diff_key).where(
                    ReviewedFile.task_id == task.id
                )
            )
            reviewed = {(repository, path): key for repository, path, key in marks}
        return task, places, reviewed

    async def changes(
        self,
        task_id: str,
        scope: ChangeScope = ChangeScope.ALL,
        paths: list[str] | None = None,
        *,
        history: bool = True,
    ) -> TaskChanges:
        """The task's changes in `scope`, per repository (only `paths` when given; without `history`, no commits
        nor ahead and behind counts)."""
        wanted = checked_paths(paths)
        task, places, reviewed = await self._places(task_id)
        snapshots = await asyncio.gather(
            *(read_snapshot(self.ctx, task.id, located, scope, wanted, history) for located in places.repositories)
        )
        repositories = [
            RepositoryChanges(
                located.repository_id,
                located.name,
                located.branch,
                located.base_branch,
                found,
                (found.note if found is not None else located.note),
                {path: key for (repository, path), key in reviewed.items() if repository == located.repository_id},
            )
            for located, found in zip(places.repositories, snapshots, strict=True)
        ]
        return TaskChanges(task.id, scope, repositories, places.reason)

    async def patch(
        self,
        task_id: str,
        repository_id: str,
        scope: ChangeScope,
        file: FileDiff,
        context: int,
        include_large: bool,
        base: Base | None = None,
    ) -> FilePatch:
        """One changed file's hunks (the file as a changes read listed it, against `base` when given)."""
        if not 0 <= context <= MAX_CONTEXT:
            raise ValidationError(f"context must be between 0 and {MAX_CONTEXT}", field="context")
        task, places, _ = await self._places(task_id)
        located = next((r for r in places.repositories if r.repository_id == repository_id), None)
        if located is None:
            raise NotFoundError("task repository", repository_id)
        return await read_patch(self.ctx, task.id, located, scope, file, context, include_large, base)

    async def answer_worker_request(self, request: dict[str, Any]) -> dict[str, Any]:
        """A replica's read, on the worker holding the worktree: answered from here only (never passed on)."""
        found = await here(self.ctx, request)
        if isinstance(found, str):
            return {"error": found}
        _, located = found
        assert located.checkout is not None
        try:
            if request["op"] == "lines":
                lines = await asyncio.to_thread(_local_lines, located.checkout, request["path"], request["base"])
                return {"result": lines.to_json()}
            scope = ChangeScope(request["scope"])
            if request["op"] == "snapshot":
                snapshot_ = await asyncio.to_thread(
                    _local_snapshot, located.checkout, scope, request.get("paths"), request.get("history", True)
                )
                return {"result": snapshot_.to_json()}
            file = FileDiff(**{**request["file"], "status": FileStatus(request["file"]["status"])})
            base = Base(**request["base"]) if request.get("base") else None
            patch = await asyncio.to_thread(
                _local_patch, located.checkout, scope, file, request["context"], request["include_large"], base
            )
            return {"result": patch.to_json()}
        except DomainError as error:
            return error_answer(error)


async def here(ctx: ServiceContext, request: dict[str, Any]) -> tuple[Task, Located] | str:
    """The task and repository a worker request names, readable on this worker; else why not."""
    async with ctx.read() as db:
        task = await db.get(Task, request["task_id"])
        if task is None or task.deleted_at is not None:
            return "the task is gone"
        places = await locate(db, ctx.settings, task)
    located = next((r for r in places.repositories if r.repository_id == request["repository_id"]), None)
    if located is None or located.checkout is None:
        return (located.note if located else None) or "the worktree is not on this worker"
    return task, located
