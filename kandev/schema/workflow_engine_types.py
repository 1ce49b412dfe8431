"""Questions to the operator and completion signals, as the API shows them."""

from __future__ import annotations

from datetime import datetime

import strawberry
from strawberry.scalars import JSON

from kandev.models import Clarification as ClarificationRow
from kandev.models import ParentQuestion as ParentQuestionRow
from kandev.schema.payloads import result
from kandev.schema.session_types import Session


@strawberry.type(description="Questions an agent asked (ask_user_question_kandev).")
class Clarification:
    row: strawberry.Private[ClarificationRow]

    @strawberry.field
    def id(self) -> strawberry.ID:
        return strawberry.ID(self.row.id)

    @strawberry.field
    def task_id(self) -> strawberry.ID:
        return strawberry.ID(self.row.task_id)

    @strawberry.field
    def session_id(self) -> strawberry.ID:
        return strawberry.ID(self.row.session_id)

    @strawberry.field
    def turn_id(self) -> strawberry.ID | None:
        return strawberry.ID(self.row.turn_id) if self.row.turn_id else None

    @strawberry.field(description="[{id, prompt, title?, options?: [{label, description?}]}]")
    def questions(self) -> JSON:
        return list(self.row.questions)

    @strawberry.field
    def context(self) -> str:
        return self.row.context

    @strawberry.field(description="PENDING, ANSWERED, REJECTED, EXPIRED or CANCELLED.")
    def state(self) -> str:
        return self.row.state

    @strawberry.field
    def answers(self) -> JSON:
        return list(self.row.answers)

    @strawberry.field(description="The asking turn was paused without an answer; answering resumes the session.")
    def detached(self) -> bool:
        return self.row.detached

    @strawberry.field
    def created_at(self) -> datetime:
        return self.row.created_at


@strawberry.type
class QuestionConnection:
    nodes: list[Clarification]
    next_cursor: str | None


@strawberry.input
class QuestionAnswerInput:
    question_id: str
    selected_options: list[str] = strawberry.field(default_factory=list)
    custom_text: str | None = None


@strawberry.input
class AnswerClarificationInput:
    clarification_id: strawberry.ID
    answers: list[QuestionAnswerInput]


@strawberry.input
class QuestionOptionInput:
    label: str
    description: str | None = None


@strawberry.input
class QuestionInput:
    prompt: str
    id: str | None = None
    title: str | None = None
    options: list[QuestionOptionInput] | None = None


@strawberry.input(description="Agent only: questions for the operator, 1 to 4.")
class AskUserQuestionInput:
    questions: list[QuestionInput]
    context: str | None = None


@strawberry.input(description="Agent only: the current step's requirements are all met.")
class SignalStepCompleteInput:
    summary: str
    handoff: str | None = None
    blockers: str | None = None


@strawberry.type
class ClarificationPayload:
    clarification: Clarification


@strawberry.type
class SignalStepCompletePayload:
    accepted: bool
    reason: str | None


@strawberry.type
class MarkStepCompletePayload:
    session: Session


AskUserQuestionResult = result("AskUserQuestionResult", ClarificationPayload)
AnswerClarificationResult = result("AnswerClarificationResult", ClarificationPayload)
RejectClarificationResult = result("RejectClarificationResult", ClarificationPayload)
SignalStepCompleteResult = result("SignalStepCompleteResult", SignalStepCompletePayload)
MarkStepCompleteResult = result("MarkStepCompleteResult", MarkStepCompletePayload)


@strawberry.type(description="An autopilot child's question to its direct parent.")
class ParentQuestion:
    row: strawberry.Private[ParentQuestionRow]

    @strawberry.field
    def id(self) -> strawberry.ID:
        return strawberry.ID(self.row.id)

    @strawberry.field
    def child_task_id(self) -> strawberry.ID:
        return strawberry.ID(self.row.child_task_id)

    @strawberry.field
    def child_session_id(self) -> strawberry.ID:
        return strawberry.ID(self.row.child_session_id)

    @strawberry.field
    def parent_task_id(self) -> strawberry.ID:
        return strawberry.ID(self.row.parent_task_id)

    @strawberry.field
    def questions(self) -> JSON:
        return list(self.row.questions)

    @strawberry.field
    def context(self) -> str:
        return self.row.context

    @strawberry.field(description="PENDING, ANSWERED, SUPERSEDED or STALE.")
    def status(self) -> str:
        return self.row.state

    @strawberry.field
    def answer(self) -> str | None:
        return self.row.answer

    @strawberry.field
    def resolution(self) -> str | None:
        return self.row.resolution

    @strawberry.field
    def created_at(self) -> datetime:
        return self.row.created_at

    @strawberry.field
    def resolved_at(self) -> datetime | None:
        return self.row.resolved_at


@strawberry.type
class AskParentQuestionPayload:
    question: ParentQuestion
    parent_task_id: strawberry.ID
    status: str


AskParentQuestionResult = result("AskParentQuestionResult", AskParentQuestionPayload)
