"""Sending review threads to the task's agent: one prompt in its primary session (queued behind a running turn,
delivered once), the threads marked sent with that prompt's id. A repeat while that prompt still waits in the
queue answers it again instead of queueing another (a double click sends one prompt).

The prompt (docs/review.md shows one; REVIEW_INTRO states the contract to the agent):

    Review comments on your changes: 2 threads. For each: make the change (or say why not), answer the thread
    with reply_review_comment_kandev and mark it addressed with resolve_review_comment_kandev, giving its
    thread id.

    ## src/app.py:12-13 (thread 6f1c…)
    ```
    12 | total = 0
    13 | for item in items:
    ```
    - alice: Start from the first item's price instead.

    ## src/util.py (whole file, thread 2b7e…)
    - alice: Split this module.

    ## The whole task (thread 9a0d…)
    - alice: Add a changelog entry.

A line comment gives `path:line` (or `path:line-endLine`; `, old version` when it is about the base's lines), the
lines as they were when it was opened, numbered, and each comment as `- AUTHOR: BODY` (Markdown, as written). An
outdated thread says so and still shows its original lines."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.access.scope import load_task
from kandev.domain.context import ServiceContext
from kandev.domain.errors import ConflictError, NotFoundError, PermissionDeniedError, ValidationError
from kandev.domain.reviews.follow import emit_thread
from kandev.domain.reviews.records import AuthorKind, Side, ThreadRecord, ThreadState
from kandev.domain.sessions.prompts import REVIEW_SOURCE, task_sessions
from kandev.domain.workflow.starts import start_agent
from kandev.models import QueuedPrompt, ReviewComment, ReviewThread, Task
from kandev.models.base import utcnow
from kandev.models.enums import PromptState

MAX_THREADS_SENT = 100
REVIEW_INTRO = (
    "Review comments on your changes: {count} thread{s}. For each: make the change (or say why not), answer the "
    "thread with reply_review_comment_kandev and mark it addressed with resolve_review_comment_kandev, giving its "
    "thread id."
)


@dataclass(frozen=True)
class SentReview:
    prompt_id: str
    threads: list[ThreadRecord]


def _fence(text: str) -> str:
    """A code fence longer than any run of backticks in `text`."""
    longest = max((len(run) for run in text.replace("`", "\0`").split("\0") if run.startswith("`")), default=0)
    return "`" * max(3, longest + 1)


def _heading(thread: ReviewThread) -> str:
    if thread.path is None:
        return f"The whole task (thread {thread.id})"
    if thread.line is None:
        return f"{thread.path} (whole file, thread {thread.id})"
    lines = f"{thread.line}" if thread.end_line in (None, thread.line) else f"{thread.line}-{thread.end_line}"
    old = ", old version" if thread.side == Side.OLD else ""
    outdated = ", outdated: these lines have changed since" if thread.state == ThreadState.OUTDATED else ""
    return f"{thread.path}:{lines} (thread {thread.id}{old}{outdated})"


def _author(comment: ReviewComment) -> str:
    return comment.author_login or ("agent" if comment.author_kind == AuthorKind.AGENT else "someone")


def review_prompt(threads: list[tuple[ReviewThread, list[ReviewComment]]]) -> str:
    """The prompt for these threads, in the format this module documents."""
    parts = [REVIEW_INTRO.format(count=len(threads), s="" if len(threads) == 1 else "s")]
    for thread, comments in threads:
        section = [f"## {_heading(thread)}"]
        if thread.line is not None and thread.anchor_text:
            start = thread.anchor_line or thread.line
            numbered = "\n".join(f"{start + n} | {text}" for n, text in enumerate(thread.anchor_text.split("\n")))
            fence = _fence(numbered)
            section.append(f"{fence}\n{numbered}\n{fence}")
        section += [f"- {_author(c)}: {c.body}" for c in comments]
        parts.append("\n".join(section))
    return "\n\n".join(parts)


def _summary(thread: ReviewThread, comments: list[ReviewComment]) -> dict[str, object]:
    """What the transcript's REVIEW message lists for a thread."""
    return {
        "thread_id": thread.id,
        "path": thread.path,
        "line": thread.line,
        "end_line": thread.end_line,
        "side": thread.side,
        "comments": [{"author": _author(c), "body": c.body} for c in comments],
    }


def _pending(thread: ReviewThread, comments: list[ReviewComment]) -> bool:
    """Not sent yet, or a person commented since it was."""
    if thread.sent_at is None:
        return True
    sent: datetime = thread.sent_at
    return any(c.author_kind == AuthorKind.PERSON and c.created_at > sent for c in comments)


async def send_review(ctx: ServiceContext, task_id: str, thread_ids: list[str] | None) -> SentReview:
    """Queue the threads (all open ones not sent yet when `thread_ids` is None) as one prompt to the task's agent."""
    if thread_ids is not None and not 1 <= len(thread_ids) <= MAX_THREADS_SENT:
        raise ValidationError(
            f"threadIds takes 1 to {MAX_THREADS_SENT} ids (or null for every open one)", field="threadIds"
        )
    async with ctx.unit_of_work() as uow:
        task = await load_task(uow.db, ctx.principal, task_id)
        if ctx.principal.session_id is not None:
            raise PermissionDeniedError("an agent answers review threads; people send them", reason="agent")
        # One sender at a time per task: a double click waits for the first and finds its prompt.
        await uow.db.scalar(select(Task.id).where(Task.id == task.id).with_for_update())
        rows = list(await uow.db.scalars(select(ReviewThread).where(ReviewThread.task_id == task.id)))
        by_id = {t.id: t for t in rows}
        comments: dict[str, list[ReviewComment]] = {t.id: [] for t in rows}
        for comment in await uow.db.scalars(
            select(ReviewComment).where(ReviewComment.thread_id.in_(list(by_id))).order_by(ReviewComment.created_at)
        ):
            comments[comment.thread_id].append(comment)
        if thread_ids is None:
            wanted = [t for t in sorted(rows, key=lambda t: (t.created_at, t.id)) if t.state == ThreadState.OPEN]
        else:
            missing = [i for i in thread_ids if i not in by_id]
            if missing:
                raise NotFoundError("review thread", missing[0])
            wanted = [by_id[i] for i in dict.fromkeys(thread_ids)]
            resolved = [t.id for t in wanted if t.state == ThreadState.RESOLVED]
            if resolved:
                raise ValidationError(
                    "a resolved thread is not sent; reopen it first", field="threadIds", thread_id=resolved[0]
                )
        sending = [t for t in wanted if _pending(t, comments[t.id])]
        if not sending:
            return await _repeat(uow.db, task, wanted, comments, thread_ids is None)
        text = review_prompt([(t, comments[t.id]) for t in sending])
        sender = {"actor": ctx.principal.actor, "review": {"threads": [_summary(t, comments[t.id]) for t in sending]}}
        _, queued = await start_agent(ctx, uow, task, text, source=REVIEW_SOURCE, sender=sender)
        now = utcnow()
        records = []
        for thread in sending:
            thread.sent_in_prompt_id, thread.sent_at, thread.updated_at = queued.id, now, now
            records.append(await emit_thread(uow, task, thread))
        return SentReview(queued.id, records)


async def _repeat(
    db: AsyncSession, task: Task, wanted: list[ReviewThread], comments: dict[str, list[ReviewComment]], every: bool
) -> SentReview:
    """Nothing new to send: the prompt that carried them, when it still waits in the queue (a repeat of that
    send); otherwise there is nothing to send."""
    prompts = {t.sent_in_prompt_id for t in wanted}
    if every:
        sessions = [s.id for s in await task_sessions(db, task.id)]
        waiting = await db.scalar(
            select(QueuedPrompt)
            .where(
                QueuedPrompt.session_id.in_(sessions),
                QueuedPrompt.source == REVIEW_SOURCE,
                QueuedPrompt.state == PromptState.QUEUED,
            )
            .order_by(QueuedPrompt.created_at.desc())
            .limit(1)
        )
        prompts = {waiting.id} if waiting is not None else set()
    if len(prompts) == 1 and None not in prompts:
        prompt_id = next(iter(prompts))
        assert prompt_id is not None
        state = await db.scalar(select(QueuedPrompt.state).where(QueuedPrompt.id == prompt_id))
        if state == PromptState.QUEUED or not every:
            sent = await _threads_of(db, task.id, prompt_id)
            return SentReview(prompt_id, [ThreadRecord.of(t, comments.get(t.id, [])) for t in sent])
    raise ConflictError("there is no open review comment left to send", reason="nothing_to_send")


async def _threads_of(db: AsyncSession, task_id: str, prompt_id: str) -> list[ReviewThread]:
    rows = await db.scalars(
        select(ReviewThread)
        .where(ReviewThread.task_id == task_id, ReviewThread.sent_in_prompt_id == prompt_id)
        .order_by(ReviewThread.created_at, ReviewThread.id)
    )
    return list(rows)
