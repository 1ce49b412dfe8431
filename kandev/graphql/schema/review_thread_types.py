"""Review threads on a task's changes (Task.reviewThreads, the review mutations, taskEvents)."""

from __future__ import annotations

from datetime import datetime

import strawberry

from kandev.domain.reviews import records
from kandev.domain.reviews.records import ThreadRecord

# Registered in place (strawberry.enum marks the class and returns it): the names below are the domain's classes.
strawberry.enum(
    records.ThreadState,
    name="ReviewThreadState",
    description="OPEN: waiting to be addressed; RESOLVED: someone (a person or the agent) marked it addressed; "
    "OUTDATED: its lines changed or went since it was opened (it keeps showing them as they were).",
)
strawberry.enum(
    records.Side,
    name="ReviewSide",
    description="Which version of a file a comment's lines count in: OLD, the base (the merge base with the base "
    "branch); NEW, the working tree now.",
)
strawberry.enum(records.AuthorKind, name="ReviewAuthorKind", description="A person, or the task's agent.")
ReviewThreadState = records.ThreadState
ReviewSide = records.Side
ReviewAuthorKind = records.AuthorKind


@strawberry.type(description="Who wrote a comment or resolved a thread.")
class ReviewAuthor:
    kind: ReviewAuthorKind
    login: str | None = strawberry.field(description="A person's login; null for an agent.")
    session_id: strawberry.ID | None = strawberry.field(description="The agent's session; null for a person.")

    @classmethod
    def of(cls, author: records.Author) -> ReviewAuthor:
        session = strawberry.ID(author.session_id) if author.session_id else None
        return cls(kind=author.kind, login=author.login, session_id=session)


@strawberry.type(description="One comment of a thread.")
class ReviewComment:
    id: strawberry.ID
    author: ReviewAuthor
    body: str = strawberry.field(
        description="Markdown as written: render it as untrusted (no raw HTML, links shown as links)."
    )
    created_at: datetime


@strawberry.type(description="What surrounded the anchored lines when the thread was opened.")
class ReviewAnchorContext:
    before: list[str] = strawberry.field(description="Up to 3 lines just above.")
    after: list[str] = strawberry.field(description="Up to 3 lines just below.")


@strawberry.type(description="The lines a thread was opened on, as they were then.")
class ReviewAnchor:
    commit: str | None = strawberry.field(
        description="For side NEW the branch's last commit then (the lines may have been uncommitted); for OLD the "
        "merge base."
    )
    line: int | None = strawberry.field(description="Where the lines were then (line and endLine say where now).")
    end_line: int | None
    line_text: str = strawberry.field(description="The anchored lines, joined with newlines.")
    context: ReviewAnchorContext


@strawberry.type(description="A discussion on lines of a changed file, on a whole file, or on the whole task.")
class ReviewThread:
    id: strawberry.ID
    task_id: strawberry.ID
    repository_id: strawberry.ID | None = strawberry.field(description="Null for a comment on the whole task.")
    path: str | None = strawberry.field(
        description="The file (for side OLD its path in the base); null for a comment on the whole task."
    )
    line: int | None = strawberry.field(
        description="First line (1-based, of `side`) where the anchored lines are now; it follows them as the file "
        "changes. Null for a comment on a whole file or task."
    )
    end_line: int | None = strawberry.field(description="Last line of the range (equal to line for one line).")
    side: ReviewSide
    state: ReviewThreadState
    origin: ReviewAuthorKind = strawberry.field(description="Who opened it.")
    anchor: ReviewAnchor | None = strawberry.field(description="The lines it was opened on; null without lines.")
    comments: list[ReviewComment] = strawberry.field(description="Oldest first.")
    resolved_by: ReviewAuthor | None = strawberry.field(description="Who resolved it; null unless RESOLVED.")
    resolved_at: datetime | None
    sent_in_prompt_id: strawberry.ID | None = strawberry.field(
        description="The queued prompt that carried it to the agent (sendReviewToAgent); null until sent."
    )
    sent_at: datetime | None
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, record: ThreadRecord) -> ReviewThread:
        def optional_id(value: str | None) -> strawberry.ID | None:
            return None if value is None else strawberry.ID(value)

        anchor = None
        if record.anchor_line is not None:
            end = record.anchor_line + record.anchor_text.count("\n")
            anchor = ReviewAnchor(
                commit=record.anchor_commit,
                line=record.anchor_line,
                end_line=end,
                line_text=record.anchor_text,
                context=ReviewAnchorContext(before=record.anchor_before, after=record.anchor_after),
            )
        return cls(
            id=strawberry.ID(record.id),
            task_id=strawberry.ID(record.task_id),
            repository_id=optional_id(record.repository_id),
            path=record.path,
            line=record.line,
            end_line=record.end_line,
            side=record.side,
            state=record.state,
            origin=record.origin,
            anchor=anchor,
            comments=[
                ReviewComment(
                    id=strawberry.ID(c.id), author=ReviewAuthor.of(c.author), body=c.body, created_at=c.created_at
                )
                for c in record.comments
            ],
            resolved_by=ReviewAuthor.of(record.resolved_by) if record.resolved_by else None,
            resolved_at=record.resolved_at,
            sent_in_prompt_id=optional_id(record.sent_in_prompt_id),
            sent_at=record.sent_at,
            created_at=record.created_at,
            updated_at=record.updated_at,
        )


@strawberry.type(description="A file whose diff changed (a CHANGES event): an open diff refreshes it.")
class ChangedFile:
    repository_id: strawberry.ID
    path: str
