"""After the worktree changed (a tool call, a turn end, a discard): measure the task's changes where its worktrees
are, store the stats when they differ, and move every open thread on a changed file to where its lines are now,
or make it OUTDATED when they are gone. Runs where the worktree is (the worker holding it, or a replica that
reaches it)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from sqlalchemy import select

from kandev.domain.changes.places import TaskPlaces, locate
from kandev.domain.changes.reading import file_lines
from kandev.domain.changes.service import prepared_checkout
from kandev.domain.changes.stats import Digest, changed_files, measure, store_measure
from kandev.domain.context import ServiceContext, UnitOfWork
from kandev.domain.reviews.anchors import Anchor, follow
from kandev.domain.reviews.records import Side, ThreadRecord, ThreadState
from kandev.domain.workflow.transitions import emit_task_event
from kandev.models import ReviewComment, ReviewThread, Task, TaskChangeStats
from kandev.models.base import utcnow

REVIEW_THREAD = "REVIEW_THREAD"
REVIEW_THREAD_DELETED = "REVIEW_THREAD_DELETED"


@dataclass(frozen=True)
class Moved:
    """Where an open thread's lines are now (None: gone, the thread is outdated), and its path after a rename."""

    thread_id: str
    path: str
    line: int | None
    end_line: int | None


async def emit_thread(uow: UnitOfWork, task: Task, thread: ReviewThread, kind: str = REVIEW_THREAD) -> ThreadRecord:
    """The thread as it is now, to every tab watching the task's workspace (after commit)."""
    await uow.db.flush()
    comments = list(await uow.db.scalars(select(ReviewComment).where(ReviewComment.thread_id == thread.id)))
    record = ThreadRecord.of(thread, comments)
    emit_task_event(uow, kind, task, review_thread=record.to_json())
    return record


async def refresh_changes(ctx: ServiceContext, task_id: str) -> bool:
    """Measure, store and follow (see the module); False when there was nothing to measure here or nothing
    changed."""
    async with ctx.read() as db:
        task = await db.get(Task, task_id)
        if task is None or task.deleted_at is not None:
            return False
        places = await locate(db, ctx.settings, task)
        if not any(r.checkout is not None for r in places.repositories):
            return False  # nothing to measure here (no repository, or its worktree is on another machine)
        stored = await db.scalar(select(TaskChangeStats.digest).where(TaskChangeStats.task_id == task_id))
        threads = list(
            await db.scalars(
                select(ReviewThread).where(
                    ReviewThread.task_id == task_id,
                    ReviewThread.state == ThreadState.OPEN,
                    ReviewThread.side == Side.NEW,
                    ReviewThread.line.is_not(None),
                )
            )
        )
    measured = await asyncio.to_thread(measure, places)
    if measured is None:
        return False
    changed = changed_files(dict(stored or {}), {**(stored or {}), **measured})
    moves = await asyncio.to_thread(_follow_threads, places, measured, changed, threads)
    async with ctx.unit_of_work() as uow:
        task = await uow.db.get(Task, task_id)
        if task is None or task.deleted_at is not None:
            return False
        stored_changed = await store_measure(uow, task, measured)
        for move in moves:
            await _apply(uow, task, move)
    return stored_changed is not None


def _follow_threads(
    places: TaskPlaces, measured: Digest, changed: list[dict[str, str]], threads: list[ReviewThread]
) -> list[Moved]:
    """Where each open thread on a changed file is now (blocking: reads the files)."""
    touched = {(c["repository_id"], c["path"]) for c in changed}
    checkouts = {r.repository_id: r.checkout for r in places.repositories if r.checkout is not None}
    moves = []
    for thread in threads:
        repository = thread.repository_id or ""
        checkout = checkouts.get(repository)
        if checkout is None or thread.path is None or thread.line is None:
            continue
        renamed = (measured.get(repository) or {}).get("renamed") or {}
        path = renamed.get(thread.path, thread.path)
        if (repository, thread.path) not in touched and path == thread.path:
            continue
        context = thread.anchor_context or {}
        anchor = Anchor(
            thread.anchor_text.split("\n"), list(context.get("before") or []), list(context.get("after") or [])
        )
        lines = file_lines(prepared_checkout(checkout), path)
        found = None if lines is None else follow(anchor, thread.line, lines)
        moves.append(Moved(thread.id, path, *(found or (None, None))))
    return moves


async def _apply(uow: UnitOfWork, task: Task, move: Moved) -> None:
    thread = await uow.db.get(ReviewThread, move.thread_id, with_for_update=True)
    if thread is None or thread.state != ThreadState.OPEN:
        return  # resolved or deleted meanwhile: left as the person left it
    if move.line is None:
        thread.state = ThreadState.OUTDATED  # line and end_line stay where the lines were last seen
    elif (thread.path, thread.line, thread.end_line) == (move.path, move.line, move.end_line):
        return
    else:
        thread.path, thread.line, thread.end_line = move.path, move.line, move.end_line
    thread.updated_at = utcnow()
    await emit_thread(uow, task, thread)
