"""Completion signals, the manual fallback and questions to the operator."""

from __future__ import annotations

from datetime import datetime

import strawberry

from kandev.domain.records import SessionRecord
from kandev.domain.sessions.clarifications import Answer
from kandev.domain.sessions.parent_questions import Asked
from kandev.graphql.resolvers.common import attempt
from kandev.graphql.schema.context import Info
from kandev.graphql.schema.pending_types import PendingActionConnection, pending_connection
from kandev.graphql.schema.selection import selects
from kandev.graphql.schema.session_types import Session
from kandev.graphql.schema.workflow_engine_types import (
    AnswerClarificationInput,
    AnswerClarificationResult,
    AskParentQuestionPayload,
    AskParentQuestionResult,
    AskUserQuestionInput,
    AskUserQuestionResult,
    Clarification,
    ClarificationPayload,
    MarkStepCompletePayload,
    MarkStepCompleteResult,
    ParentQuestion,
    QuestionConnection,
    RejectClarificationResult,
    SignalStepCompleteInput,
    SignalStepCompletePayload,
    SignalStepCompleteResult,
)
from kandev.models import Clarification as ClarificationRow


def _clarified(row: ClarificationRow) -> ClarificationPayload:
    return ClarificationPayload(clarification=Clarification(row=row))


async def pending_questions(
    info: Info,
    workspace_id: strawberry.ID,
    since: datetime | None = None,
    after: str | None = None,
    limit: int = 50,
    task_id: strawberry.ID | None = None,
) -> QuestionConnection:
    page = await info.context.services.clarifications.pending(
        str(workspace_id), since=since, after=after, limit=limit, task_id=str(task_id) if task_id else None
    )
    return QuestionConnection(nodes=[Clarification(row=r) for r in page.rows], next_cursor=page.next_cursor)


async def pending_actions(
    info: Info, workspace_id: strawberry.ID, first: int = 50, after: str | None = None
) -> PendingActionConnection:
    page = await info.context.services.pending_actions.in_workspace(
        str(workspace_id), first=first, after=after, count=selects(info, "totalCount")
    )
    return pending_connection(page)


async def signal_step_complete(info: Info, input: SignalStepCompleteInput) -> SignalStepCompleteResult:
    call = info.context.services.signals.step_complete(input.summary, input.handoff, input.blockers)
    return await attempt(call, lambda r: SignalStepCompletePayload(accepted=r.accepted, reason=r.reason))


async def mark_step_complete(info: Info, session_id: strawberry.ID) -> MarkStepCompleteResult:
    call = info.context.services.signals.mark_complete(str(session_id))
    return await attempt(call, lambda s: MarkStepCompletePayload(session=Session.of(SessionRecord.of(s))))


async def _ask(info: Info, input: AskUserQuestionInput) -> ClarificationRow:
    return await info.context.services.clarifications.ask(_questions(input), input.context)


async def ask_user_question(info: Info, input: AskUserQuestionInput) -> AskUserQuestionResult:
    return await attempt(_ask(info, input), _clarified)


async def answer_clarification(info: Info, input: AnswerClarificationInput) -> AnswerClarificationResult:
    answers = [Answer(a.question_id, list(a.selected_options), a.custom_text) for a in input.answers]
    return await attempt(info.context.services.clarifications.answer(str(input.clarification_id), answers), _clarified)


async def reject_clarification(info: Info, clarification_id: strawberry.ID) -> RejectClarificationResult:
    return await attempt(info.context.services.clarifications.reject(str(clarification_id)), _clarified)


def _questions(input: AskUserQuestionInput) -> list[dict[str, object]]:
    """The input as plain data; the rules on it are the domain's (kandev.domain.sessions.questions)."""
    items: list[dict[str, object]] = []
    for question in input.questions:
        item: dict[str, object] = {"prompt": question.prompt}
        for key in ("id", "title"):
            if getattr(question, key):
                item[key] = getattr(question, key)
        if question.options:
            item["options"] = [{"label": o.label, "description": o.description} for o in question.options]
        items.append(item)
    return items


async def _ask_parent(info: Info, input: AskUserQuestionInput) -> Asked:
    return await info.context.services.parent_questions.ask(_questions(input), input.context)


async def ask_parent_question(info: Info, input: AskUserQuestionInput) -> AskParentQuestionResult:
    return await attempt(
        _ask_parent(info, input),
        lambda asked: AskParentQuestionPayload(
            question=ParentQuestion(row=asked.question),
            parent_task_id=strawberry.ID(asked.parent_task_id),
            status="waiting_for_parent" if asked.question.state == "PENDING" else asked.question.state.lower(),
        ),
    )


async def parent_questions(info: Info, task_id: strawberry.ID, status: str | None = None) -> list[ParentQuestion]:
    rows = await info.context.services.parent_questions.list(str(task_id), status)
    return [ParentQuestion(row=r) for r in rows]
