"""Inputs and payloads of the review mutations: comment on a task's changes, discuss, resolve, send to the agent,
mark files reviewed, discard changes."""

from __future__ import annotations

from typing import Annotated, TypeAlias

import strawberry

from kandev.domain.changes.diffs import MAX_PATH_LENGTH
from kandev.domain.reviews.sending import MAX_THREADS_SENT
from kandev.domain.reviews.service import MAX_BODY, MAX_DISCARD_PATHS, NewComment
from kandev.graphql.schema.declare import arg, argument
from kandev.graphql.schema.errors import ExpectedError
from kandev.graphql.schema.review_thread_types import ReviewSide, ReviewThread

THREAD_ID_FOR_AGENTS = "The review thread's id (from list_review_comments_kandev)."

ThreadIdArgument = Annotated[
    strawberry.ID, argument("The review thread's id.", agent=THREAD_ID_FOR_AGENTS, min_length=1, max_length=36)
]
CommentIdArgument = Annotated[strawberry.ID, argument("One of your own comments.", min_length=1, max_length=36)]


def _id(value: object) -> str | None:
    return None if value is None else str(value)


@strawberry.input(
    description="A comment opening a thread: on lines line..endLine of `side` of a file, on a whole file (no "
    "line), or on the whole task (no path)."
)
class AddReviewCommentInput:
    task_id: strawberry.ID = arg("The task.", min_length=1)
    body: str = arg(f"Markdown, 1 to {MAX_BODY} characters.", min_length=1, max_length=MAX_BODY)
    repository_id: strawberry.ID | None = arg(
        "The file's repository; may be left out when the task has exactly one.", default=None
    )
    path: str | None = arg(
        "The file, relative to the repository (for side OLD its path in the base: a renamed file's oldPath); null: "
        "a comment on the whole task.",
        default=None,
        max_length=MAX_PATH_LENGTH,
    )
    line: int | None = arg("First line (1-based, of side); null: a comment on the whole file.", default=None, minimum=1)
    end_line: int | None = arg("Last line (default: line); at most 500 lines in all.", default=None, minimum=1)
    side: ReviewSide = arg(
        "Which version the lines count in: NEW (default), or OLD (the base).", default=ReviewSide.NEW
    )

    def to_command(self) -> NewComment:
        return NewComment(
            task_id=str(self.task_id),
            body=self.body,
            repository_id=_id(self.repository_id),
            path=self.path,
            line=self.line,
            end_line=self.end_line,
            side=self.side,
        )


@strawberry.input(description="A reply at the end of a thread.")
class ReplyToReviewThreadInput:
    thread_id: strawberry.ID = arg("The thread.", agent=THREAD_ID_FOR_AGENTS, min_length=1, max_length=36)
    body: str = arg(
        f"Markdown, 1 to {MAX_BODY} characters.",
        agent="Your answer (Markdown): what you changed, or why you did not.",
        min_length=1,
        max_length=MAX_BODY,
    )


@strawberry.input(description="Send review threads to the task's agent as one prompt.")
class SendReviewToAgentInput:
    task_id: strawberry.ID = arg("The task.", min_length=1)
    thread_ids: list[strawberry.ID] | None = arg(
        f"The threads (1 to {MAX_THREADS_SENT}); null: every OPEN thread not sent yet (or commented on since).",
        default=None,
        min_items=1,
        max_items=MAX_THREADS_SENT,
    )


@strawberry.input(description="Mark a changed file reviewed, or not.")
class SetFileReviewedInput:
    task_id: strawberry.ID = arg("The task.", min_length=1)
    repository_id: strawberry.ID = arg("The file's repository.", min_length=1)
    path: str = arg("The changed file.", min_length=1, max_length=MAX_PATH_LENGTH)
    reviewed: bool = arg("true: reviewed at this diff; false: not reviewed.")
    diff_key: str | None = arg(
        "The FileChange.diffKey the person saw (recommended: a change made meanwhile then reads unreviewed); "
        "default: the file's current diff.",
        default=None,
        max_length=64,
    )


@strawberry.input(description="One hunk of a file's uncommitted changes, by its header.")
class DiscardHunkInput:
    path: str = arg("The file.", min_length=1, max_length=MAX_PATH_LENGTH)
    header: str = arg(
        "The hunk's header (DiffHunk.header, its `@@ -a,b +c,d @@` part counts) as read with scope UNCOMMITTED.",
        min_length=5,
        max_length=2000,
    )


@strawberry.input(description="Undo uncommitted changes in the task's worktree: whole files, or one hunk.")
class DiscardChangesInput:
    task_id: strawberry.ID = arg("The task.", min_length=1)
    repository_id: strawberry.ID = arg("The repository.", min_length=1)
    paths: list[str] | None = arg(
        f"Files (1 to {MAX_DISCARD_PATHS}) back to the branch's last commit (a new file is deleted, a rename "
        "undone); committed changes stay.",
        default=None,
        min_items=1,
        max_items=MAX_DISCARD_PATHS,
        max_length=MAX_PATH_LENGTH,
    )
    hunk: DiscardHunkInput | None = arg("Instead of paths: one hunk of a tracked file.", default=None)


@strawberry.type
class ReviewThreadPayload:
    thread: ReviewThread
    thread_deleted: bool = strawberry.field(
        default=False, description="deleteReviewComment removed the thread's last comment, and so the thread."
    )


@strawberry.type
class SendReviewPayload:
    prompt_id: strawberry.ID = strawberry.field(description="The queued prompt carrying the threads.")
    threads: list[ReviewThread] = strawberry.field(description="The threads it carries (marked sent).")


@strawberry.type
class FileReviewedPayload:
    repository_id: strawberry.ID
    path: str
    reviewed: bool
    diff_key: str | None = strawberry.field(description="The diff it is marked reviewed at; null when unmarked.")


@strawberry.type
class DiscardChangesPayload:
    repository_id: strawberry.ID
    paths: list[str] = strawberry.field(description="The files whose changes were discarded.")


ReviewThreadResult: TypeAlias = Annotated[ReviewThreadPayload | ExpectedError, strawberry.union("ReviewThreadResult")]
SendReviewResult: TypeAlias = Annotated[SendReviewPayload | ExpectedError, strawberry.union("SendReviewResult")]
FileReviewedResult: TypeAlias = Annotated[FileReviewedPayload | ExpectedError, strawberry.union("FileReviewedResult")]
DiscardChangesResult: TypeAlias = Annotated[
    DiscardChangesPayload | ExpectedError, strawberry.union("DiscardChangesResult")
]
