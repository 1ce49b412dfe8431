"""Review threads on a task's changes, kept on the server: people (and the task's own agent) comment on lines,
files or the whole task, reply, resolve and reopen; threads follow their lines as files change
(kandev.domain.reviews.follow). Only those who can read the task see or touch its threads; an agent session only
its own task's."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.access.scope import load_task
from kandev.domain.changes.diffs import ChangeScope, worktree_path
from kandev.domain.changes.discard import HunkChoice, discard_files, discard_hunk
from kandev.domain.changes.places import Located, locate
from kandev.domain.changes.service import (
    ChangesService,
    ask_holder,
    error_answer,
    here,
    prepared_checkout,
    read_lines,
    read_snapshot,
)
from kandev.domain.context import ServiceContext, UnitOfWork
from kandev.domain.errors import ConflictError, DomainError, NotFoundError, PermissionDeniedError, ValidationError
from kandev.domain.reviews.anchors import anchor_at
from kandev.domain.reviews.follow import REVIEW_THREAD_DELETED, emit_thread, refresh_changes
from kandev.domain.reviews.records import Author, AuthorKind, Side, ThreadRecord, ThreadState
from kandev.domain.reviews.sending import SentReview, send_review
from kandev.models import ReviewComment, ReviewedFile, ReviewThread, Session, Task, Turn
from kandev.models.base import new_id, utcnow
from kandev.models.enums import TurnState

MAX_BODY = 10_000
MAX_RANGE = 500
MAX_THREADS_PER_TASK = 2000
MAX_DISCARD_PATHS = 500


@dataclass(frozen=True)
class NewComment:
    """addReviewComment: a comment on lines `line`..`end_line` of `side` of a file (no line: the whole file; no
    path: the whole task)."""

    task_id: str
    body: str
    repository_id: str | None = None
    path: str | None = None
    line: int | None = None
    end_line: int | None = None
    side: Side = Side.NEW


def clean_body(body: str | None) -> str:
    """Markdown, stored as written (clients render it safely); neither empty nor longer than MAX_BODY."""
    text = (body or "").strip()
    if not text:
        raise ValidationError("body must not be empty", field="body")
    if len(text) > MAX_BODY:
        raise ValidationError(f"body must be at most {MAX_BODY} characters", field="body", limit=MAX_BODY)
    return text


def _comment(thread_id: str, author: Author, body: str, user_id: str | None) -> ReviewComment:
    return ReviewComment(
        id=new_id(),
        thread_id=thread_id,
        author_kind=author.kind,
        author_user_id=user_id if author.kind == AuthorKind.PERSON else None,
        author_login=author.login,
        author_session_id=author.session_id,
        body=body,
        created_at=utcnow(),
    )


class ReviewService:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    @property
    def _author(self) -> Author:
        return Author.of(self.ctx.principal)

    async def _task(self, db: AsyncSession, task_id: str) -> Task:
        """A task the caller may read; an agent session's own task only."""
        task = await load_task(db, self.ctx.principal, task_id)
        own = self.ctx.principal.task_id
        if self.ctx.principal.session_id is not None and task.id != own:
            raise NotFoundError("task", task_id)
        return task

    async def _thread(self, uow: UnitOfWork, thread_id: str) -> tuple[Task, ReviewThread]:
        thread = await uow.db.get(ReviewThread, thread_id, with_for_update=True)
        if thread is None:
            raise NotFoundError("review thread", thread_id)
        try:
            task = await self._task(uow.db, thread.task_id)
        except NotFoundError:
            raise NotFoundError("review thread", thread_id) from None
        return task, thread

    async def _repository(self, task_id: str, repository_id: str | None) -> Located:
        async with self.ctx.read() as db:
            task = await self._task(db, task_id)
            places = await locate(db, self.ctx.settings, task)
        if repository_id is None:
            if len(places.repositories) != 1:
                raise ValidationError(
                    "repositoryId is needed: the task has several repositories (or none)", field="repositoryId"
                )
            return places.repositories[0]
        found = next((r for r in places.repositories if r.repository_id == repository_id), None)
        if found is None:
            raise NotFoundError("task repository", repository_id)
        return found

    async def add_comment(self, new: NewComment) -> ThreadRecord:
        """A new thread with its first comment; a line comment captures the lines it is about (its anchor)."""
        body = clean_body(new.body)
        located: Located | None = None
        anchor_fields: dict[str, object] = {}
        line, end_line = new.line, new.end_line
        if new.path is None:
            if new.line is not None or new.repository_id is not None:
                raise ValidationError("a comment on lines or a repository needs a path", field="path")
            async with self.ctx.read() as db:
                await self._task(db, new.task_id)
        else:
            path = worktree_path(new.path, "path")
            located = await self._repository(new.task_id, new.repository_id)
            found = await read_lines(self.ctx, new.task_id, located, path, new.side == Side.OLD)
            if found.lines is None:
                raise NotFoundError("file", path)
            if line is not None:
                end_line = line if end_line is None else end_line
                self._check_range(line, end_line, len(found.lines))
                anchor = anchor_at(found.lines, line, end_line)
                anchor_fields = {
                    "anchor_commit": found.commit,
                    "anchor_line": line,
                    "anchor_text": anchor.text,
                    "anchor_context": {"before": anchor.before, "after": anchor.after},
                }
            elif end_line is not None:
                raise ValidationError("endLine needs a line", field="endLine")
        async with self.ctx.unit_of_work() as uow:
            task = await self._task(uow.db, new.task_id)
            await self._check_room(uow, task.id)
            now = utcnow()
            thread = ReviewThread(
                id=new_id(),
                task_id=task.id,
                repository_id=located.repository_id if located else None,
                path=new.path,
                line=line,
                end_line=end_line if line is not None else None,
                side=new.side,
                state=ThreadState.OPEN,
                origin=self._author.kind,
                created_by=self.ctx.principal.actor,
                created_at=now,
                updated_at=now,
                **anchor_fields,
            )
            uow.db.add(thread)
            await uow.db.flush()  # the comment's row refers to it
            uow.db.add(_comment(thread.id, self._author, body, self.ctx.principal.user_id))
            return await emit_thread(uow, task, thread)

    @staticmethod
    def _check_range(line: int, end_line: int, length: int) -> None:
        if line < 1:
            raise ValidationError("line must be at least 1", field="line")
        if end_line < line:
            raise ValidationError("endLine must not come before line", field="endLine")
        if end_line - line + 1 > MAX_RANGE:
            raise ValidationError(f"a comment covers at most {MAX_RANGE} lines", field="endLine", limit=MAX_RANGE)
        if end_line > length:
            field = "line" if line > length else "endLine"
            raise ValidationError(f"{field} is outside the file (it has {length} lines)", field=field, lines=length)

    async def _check_room(self, uow: UnitOfWork, task_id: str) -> None:
        count = await uow.db.scalar(select(func.count()).where(ReviewThread.task_id == task_id))
        if (count or 0) >= MAX_THREADS_PER_TASK:
            raise ValidationError(
                f"a task holds at most {MAX_THREADS_PER_TASK} review threads",
                field="taskId",
                limit=MAX_THREADS_PER_TASK,
            )

    async def reply(self, thread_id: str, body: str) -> ThreadRecord:
        text = clean_body(body)
        async with self.ctx.unit_of_work() as uow:
            task, thread = await self._thread(uow, thread_id)
            uow.db.add(_comment(thread.id, self._author, text, self.ctx.principal.user_id))
            thread.updated_at = utcnow()
            return await emit_thread(uow, task, thread)

    async def resolve(self, thread_id: str, note: str | None = None) -> ThreadRecord:
        """RESOLVED, saying who did (a note is added as a comment first); resolving a resolved thread changes
        nothing."""
        text = None if note is None or not note.strip() else clean_body(note)
        async with self.ctx.unit_of_work() as uow:
            task, thread = await self._thread(uow, thread_id)
            if text is not None:
                uow.db.add(_comment(thread.id, self._author, text, self.ctx.principal.user_id))
            if thread.state == ThreadState.RESOLVED and text is None:
                return await self._record(uow, thread)
            thread.state = ThreadState.RESOLVED
            thread.resolved_by = self.ctx.principal.actor
            thread.resolved_at = thread.updated_at = utcnow()
            return await emit_thread(uow, task, thread)

    async def reopen(self, thread_id: str) -> ThreadRecord:
        """OPEN again (a resolved or outdated thread); reopening an open thread changes nothing."""
        async with self.ctx.unit_of_work() as uow:
            task, thread = await self._thread(uow, thread_id)
            if thread.state == ThreadState.OPEN:
                return await self._record(uow, thread)
            thread.state = ThreadState.OPEN
            thread.resolved_by = thread.resolved_at = None
            thread.updated_at = utcnow()
            return await emit_thread(uow, task, thread)

    async def delete_comment(self, comment_id: str) -> ThreadRecord:
        """Delete one of the caller's own comments; the thread goes with its last comment (the answer is then
        the thread as it was, with no comment)."""
        async with self.ctx.unit_of_work() as uow:
            comment = await uow.db.get(ReviewComment, comment_id)
            if comment is None:
                raise NotFoundError("review comment", comment_id)
            try:
                task, thread = await self._thread(uow, comment.thread_id)
            except NotFoundError:
                raise NotFoundError("review comment", comment_id) from None
            if not self._wrote(comment):
                raise PermissionDeniedError("only its author may delete a comment", reason="not_author")
            await uow.db.delete(comment)
            await uow.db.flush()
            left = list(await uow.db.scalars(select(ReviewComment.id).where(ReviewComment.thread_id == thread.id)))
            if left:
                thread.updated_at = utcnow()
                return await emit_thread(uow, task, thread)
            record = await emit_thread(uow, task, thread, REVIEW_THREAD_DELETED)
            await uow.db.delete(thread)
            return record

    def _wrote(self, comment: ReviewComment) -> bool:
        caller = self.ctx.principal
        if comment.author_kind == AuthorKind.AGENT:
            return caller.session_id is not None and comment.author_session_id == caller.session_id
        return caller.session_id is None and comment.author_user_id == caller.user_id

    async def _record(self, uow: UnitOfWork, thread: ReviewThread) -> ThreadRecord:
        comments = list(await uow.db.scalars(select(ReviewComment).where(ReviewComment.thread_id == thread.id)))
        return ThreadRecord.of(thread, comments)

    async def threads(self, task_id: str, state: ThreadState | None = None) -> list[ThreadRecord]:
        """The task's threads, oldest first, with their comments."""
        async with self.ctx.read() as db:
            task = await self._task(db, task_id)
            query = select(ReviewThread).where(ReviewThread.task_id == task.id)
            if state is not None:
                query = query.where(ReviewThread.state == state)
            rows = list(await db.scalars(query.order_by(ReviewThread.created_at, ReviewThread.id)))
            comments = list(
                await db.scalars(select(ReviewComment).where(ReviewComment.thread_id.in_([t.id for t in rows])))
            )
        by_thread: dict[str, list[ReviewComment]] = {}
        for comment in comments:
            by_thread.setdefault(comment.thread_id, []).append(comment)
        return [ThreadRecord.of(t, by_thread.get(t.id, [])) for t in rows]

    async def send_to_agent(self, task_id: str, thread_ids: list[str] | None) -> SentReview:
        """Queue the threads as one prompt to the task's agent (kandev.domain.reviews.sending)."""
        return await send_review(self.ctx, task_id, thread_ids)

    async def set_file_reviewed(
        self, task_id: str, repository_id: str, path: str, reviewed: bool, diff_key: str | None = None
    ) -> ReviewedMark:
        """Mark a changed file reviewed at the diff the person saw (`diff_key`, else the file's current one), or
        unmark it; a later change of the file gives it another key, so it reads unreviewed again."""
        wanted = worktree_path(path, "path")
        located = await self._repository(task_id, repository_id)
        key = diff_key
        if reviewed and key is None:
            found = await read_snapshot(self.ctx, task_id, located, ChangeScope.ALL, None)
            key = next((f.key for f in (found.files if found else []) if f.path == wanted), None)
            if key is None:
                raise NotFoundError("changed file", wanted)
        async with self.ctx.unit_of_work() as uow:
            task = await self._task(uow.db, task_id)
            mark = await uow.db.get(ReviewedFile, (task.id, located.repository_id, wanted))
            if not reviewed:
                if mark is not None:
                    await uow.db.delete(mark)
                return ReviewedMark(located.repository_id, wanted, False, None)
            assert key is not None
            if mark is None:
                mark = ReviewedFile(task_id=task.id, repository_id=located.repository_id, path=wanted)
                uow.db.add(mark)
            mark.diff_key, mark.reviewed_by, mark.reviewed_at = key, self.ctx.principal.actor, utcnow()
            return ReviewedMark(located.repository_id, wanted, True, key)

    async def discard(
        self, task_id: str, repository_id: str, paths: list[str] | None, hunk: HunkChoice | None
    ) -> list[str]:
        """Undo uncommitted changes in the worktree (whole files, or one hunk); refused while a turn runs."""
        if self.ctx.principal.session_id is not None:
            raise PermissionDeniedError("an agent changes its files itself", reason="agent")
        if (paths is None) == (hunk is None):
            raise ValidationError("give either paths or a hunk", field="paths")
        if paths is not None and not 1 <= len(paths) <= MAX_DISCARD_PATHS:
            raise ValidationError(f"paths takes 1 to {MAX_DISCARD_PATHS} paths", field="paths")
        chosen = [worktree_path(p, f"paths[{n}]") for n, p in enumerate(paths or [])]
        if hunk is not None:
            hunk = HunkChoice(worktree_path(hunk.path, "hunk.path"), hunk.header)
        located = await self._repository(task_id, repository_id)
        async with self.ctx.read() as db:
            if await running_turn(db, task_id):
                raise ConflictError("the agent is working: discard once its turn has ended", reason="turn_running")
        request = {"op": "discard", "paths": chosen or None, "hunk": None if hunk is None else hunk.__dict__}
        if located.checkout is not None:
            return await discard_here(self.ctx, task_id, located, request)
        answer = await ask_holder(self.ctx, located, {**request, "task_id": task_id})
        if answer is None:
            raise ConflictError("the task's worktree is not created yet", reason="no_worktree")
        discarded: list[str] = answer["paths"]
        return discarded

    async def answer_worker_request(self, request: dict[str, Any]) -> dict[str, Any]:
        """A replica's request on the worker holding the worktree: a discard here, or a read."""
        if request["op"] != "discard":
            return await ChangesService(self.ctx).answer_worker_request(request)
        found = await here(self.ctx, request)
        if isinstance(found, str):
            return {"error": found}
        _, located = found
        try:
            return {"result": {"paths": await discard_here(self.ctx, request["task_id"], located, request)}}
        except DomainError as error:
            return error_answer(error)


@dataclass(frozen=True)
class ReviewedMark:
    repository_id: str
    path: str
    reviewed: bool
    diff_key: str | None


async def running_turn(db: AsyncSession, task_id: str) -> bool:
    found = await db.scalar(
        select(Turn.id)
        .join(Session, Session.id == Turn.session_id)
        .where(Session.task_id == task_id, Turn.state == TurnState.RUNNING)
        .limit(1)
    )
    return found is not None


async def discard_here(ctx: ServiceContext, task_id: str, located: Located, request: dict[str, Any]) -> list[str]:
    """The discard on this process's view of the worktree, then the stats and threads brought up to date."""
    assert located.checkout is not None
    checkout = prepared_checkout(located.checkout)
    hunk = request.get("hunk")
    if hunk is not None:
        done = await asyncio.to_thread(discard_hunk, checkout, HunkChoice(**hunk))
    else:
        done = await asyncio.to_thread(discard_files, checkout, request["paths"])
    await refresh_changes(ctx, task_id)
    return done
