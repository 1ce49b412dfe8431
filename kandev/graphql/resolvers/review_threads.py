"""Review mutations and the agents' query of their task's threads."""

from __future__ import annotations

from typing import Annotated

import strawberry

from kandev.domain.changes.discard import HunkChoice
from kandev.domain.reviews.records import ThreadRecord
from kandev.domain.reviews.sending import SentReview
from kandev.domain.reviews.service import ReviewedMark
from kandev.graphql.resolvers.common import attempt
from kandev.graphql.schema.context import Info
from kandev.graphql.schema.declare import argument
from kandev.graphql.schema.inputs import TASK_ID_FOR_AGENTS
from kandev.graphql.schema.review_inputs import (
    AddReviewCommentInput,
    CommentIdArgument,
    DiscardChangesInput,
    DiscardChangesPayload,
    DiscardChangesResult,
    FileReviewedPayload,
    FileReviewedResult,
    ReplyToReviewThreadInput,
    ReviewThreadPayload,
    ReviewThreadResult,
    SendReviewPayload,
    SendReviewResult,
    SendReviewToAgentInput,
    SetFileReviewedInput,
    ThreadIdArgument,
)
from kandev.graphql.schema.review_thread_types import ReviewThread, ReviewThreadState


def _thread(record: ThreadRecord) -> ReviewThreadPayload:
    return ReviewThreadPayload(thread=ReviewThread.of(record))


async def review_threads(
    info: Info,
    task_id: Annotated[strawberry.ID, argument("The task ('self': the calling session's).", agent=TASK_ID_FOR_AGENTS)],
    state: Annotated[ReviewThreadState | None, argument("Only threads in this state; null: all.")] = None,
) -> list[ReviewThread]:
    records = await info.context.services.reviews.threads(str(task_id), state)
    return [ReviewThread.of(r) for r in records]


async def add_review_comment(info: Info, input: AddReviewCommentInput) -> ReviewThreadResult:
    return await attempt(info.context.services.reviews.add_comment(input.to_command()), _thread)


async def reply_to_review_thread(info: Info, input: ReplyToReviewThreadInput) -> ReviewThreadResult:
    return await attempt(info.context.services.reviews.reply(str(input.thread_id), input.body), _thread)


async def resolve_review_thread(
    info: Info,
    thread_id: ThreadIdArgument,
    note: Annotated[
        str | None,
        argument(
            "A last comment (Markdown) added before resolving.",
            agent="What you did about it (Markdown), shown to the reviewer.",
            max_length=10_000,
        ),
    ] = None,
) -> ReviewThreadResult:
    return await attempt(info.context.services.reviews.resolve(str(thread_id), note), _thread)


async def reopen_review_thread(info: Info, thread_id: ThreadIdArgument) -> ReviewThreadResult:
    return await attempt(info.context.services.reviews.reopen(str(thread_id)), _thread)


async def delete_review_comment(info: Info, comment_id: CommentIdArgument) -> ReviewThreadResult:
    def deleted(record: ThreadRecord) -> ReviewThreadPayload:
        return ReviewThreadPayload(thread=ReviewThread.of(record), thread_deleted=not record.comments)

    return await attempt(info.context.services.reviews.delete_comment(str(comment_id)), deleted)


async def send_review_to_agent(info: Info, input: SendReviewToAgentInput) -> SendReviewResult:
    ids = None if input.thread_ids is None else [str(i) for i in input.thread_ids]

    def sent(review: SentReview) -> SendReviewPayload:
        return SendReviewPayload(
            prompt_id=strawberry.ID(review.prompt_id), threads=[ReviewThread.of(t) for t in review.threads]
        )

    return await attempt(info.context.services.reviews.send_to_agent(str(input.task_id), ids), sent)


async def set_file_reviewed(info: Info, input: SetFileReviewedInput) -> FileReviewedResult:
    call = info.context.services.reviews.set_file_reviewed(
        str(input.task_id), str(input.repository_id), input.path, input.reviewed, input.diff_key
    )

    def marked(mark: ReviewedMark) -> FileReviewedPayload:
        return FileReviewedPayload(
            repository_id=strawberry.ID(mark.repository_id),
            path=mark.path,
            reviewed=mark.reviewed,
            diff_key=mark.diff_key,
        )

    return await attempt(call, marked)


async def discard_changes(info: Info, input: DiscardChangesInput) -> DiscardChangesResult:
    hunk = None if input.hunk is None else HunkChoice(input.hunk.path, input.hunk.header)
    call = info.context.services.reviews.discard(str(input.task_id), str(input.repository_id), input.paths, hunk)
    return await attempt(
        call, lambda paths: DiscardChangesPayload(repository_id=strawberry.ID(str(input.repository_id)), paths=paths)
    )
