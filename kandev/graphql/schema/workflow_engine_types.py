"""Questions to the operator and completion signals, as the API shows them."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, TypeAlias

import strawberry
from strawberry.scalars import JSON

from kandev.domain.sessions.questions import MAX_OPTIONS, MAX_QUESTIONS
from kandev.domain.workflow.signals import MAX_SIGNAL_TEXT_LENGTH
from kandev.graphql.schema.columns import column
from kandev.graphql.schema.context import RUN_DOC, Info, run_at
from kandev.graphql.schema.declare import arg
from kandev.graphql.schema.errors import ExpectedError
from kandev.graphql.schema.fields import described
from kandev.graphql.schema.session_types import Session
from kandev.models import Clarification as ClarificationRow
from kandev.models import ParentQuestion as ParentQuestionRow


@strawberry.type(description="Questions an agent asked (ask_user_question_kandev).")
class Clarification:
    row: strawberry.Private[ClarificationRow]

    id: strawberry.ID = column("id", strawberry.ID)
    task_id: strawberry.ID = column("task_id", strawberry.ID)
    session_id: strawberry.ID = column("session_id", strawberry.ID)
    turn_id: strawberry.ID | None = column("turn_id", strawberry.ID | None)

    @described("[{id, prompt, title?, options?: [{label, description?}]}]")
    def questions(self) -> JSON:
        return JSON(list(self.row.questions))

    context: str = column("context", str)
    state: str = column("state", str, description="PENDING, ANSWERED, REJECTED, EXPIRED or CANCELLED.")

    @strawberry.field
    def answers(self) -> JSON:
        return JSON(list(self.row.answers))

    detached: bool = column(
        "detached", bool, description="The asking turn was paused without an answer; answering resumes the session."
    )
    created_at: datetime = column("created_at", datetime)

    @described(RUN_DOC)
    async def run_id(self, info: Info) -> strawberry.ID | None:
        run_id = await run_at(info, self.row.task_id, self.row.created_at)
        return strawberry.ID(run_id) if run_id else None


@strawberry.type
class QuestionConnection:
    nodes: list[Clarification]
    next_cursor: str | None


@strawberry.input
class QuestionAnswerInput:
    question_id: str = arg("Which question of the set.", min_length=1)
    selected_options: list[str] = strawberry.field(default_factory=list)
    custom_text: str | None = arg("Free-text answer.", default=None)


@strawberry.input
class AnswerClarificationInput:
    clarification_id: strawberry.ID
    answers: list[QuestionAnswerInput]


@strawberry.input
class QuestionOptionInput:
    label: str = arg("What the user picks.", min_length=1)
    description: str | None = arg("More detail.", default=None)


@strawberry.input
class QuestionInput:
    prompt: str = arg("The question, self-contained.", min_length=1)
    id: str | None = arg("Your id for the question (default q1, q2, …).", default=None)
    title: str | None = arg("A short heading.", default=None)
    options: list[QuestionOptionInput] | None = arg("Choices to offer.", default=None, max_items=MAX_OPTIONS)


@strawberry.input(description="Agent only: questions for the operator, 1 to 4.")
class AskUserQuestionInput:
    questions: list[QuestionInput] = arg(f"1 to {MAX_QUESTIONS} questions.", min_items=1, max_items=MAX_QUESTIONS)
    context: str | None = arg("Why you ask and what it blocks.", default=None)


@strawberry.input(description="Agent only: the current step's requirements are all met.")
class SignalStepCompleteInput:
    summary: str = arg("One paragraph: what was done in this step.", min_length=1, max_length=MAX_SIGNAL_TEXT_LENGTH)
    handoff: str | None = arg(
        "Context for the next step's agent: part of its <kandev-context> block.",
        default=None,
        agent="Context for the next step's agent.",
        max_length=MAX_SIGNAL_TEXT_LENGTH,
    )
    blockers: str | None = arg("Known unresolved issues.", default=None, max_length=MAX_SIGNAL_TEXT_LENGTH)


@strawberry.type
class ClarificationPayload:
    clarification: Clarification


@strawberry.type
class SignalStepCompletePayload:
    accepted: bool
    reason: str | None = strawberry.field(
        description="Why it was not accepted: already_signaled (one signal per turn), reopened, step_changed, no_turn."
    )


@strawberry.type
class MarkStepCompletePayload:
    session: Session


AskUserQuestionResult: TypeAlias = Annotated[
    ClarificationPayload | ExpectedError, strawberry.union("AskUserQuestionResult")
]
AnswerClarificationResult: TypeAlias = Annotated[
    ClarificationPayload | ExpectedError, strawberry.union("AnswerClarificationResult")
]
RejectClarificationResult: TypeAlias = Annotated[
    ClarificationPayload | ExpectedError, strawberry.union("RejectClarificationResult")
]
SignalStepCompleteResult: TypeAlias = Annotated[
    SignalStepCompletePayload | ExpectedError, strawberry.union("SignalStepCompleteResult")
]
MarkStepCompleteResult: TypeAlias = Annotated[
    MarkStepCompletePayload | ExpectedError, strawberry.union("MarkStepCompleteResult")
]


@strawberry.type(description="An autopilot child's question to its direct parent.")
class ParentQuestion:
    row: strawberry.Private[ParentQuestionRow]

    id: strawberry.ID = column("id", strawberry.ID)
    child_task_id: strawberry.ID = column("child_task_id", strawberry.ID)
    child_session_id: strawberry.ID = column("child_session_id", strawberry.ID)
    parent_task_id: strawberry.ID = column("parent_task_id", strawberry.ID)

    @strawberry.field
    def questions(self) -> JSON:
        return JSON(list(self.row.questions))

    context: str = column("context", str)
    status: str = column("state", str, description="PENDING, ANSWERED, SUPERSEDED or STALE.")
    answer: str | None = column("answer", str | None)
    resolution: str | None = column("resolution", str | None)
    created_at: datetime = column("created_at", datetime)
    resolved_at: datetime | None = column("resolved_at", datetime | None)

    @described(RUN_DOC)
    async def run_id(self, info: Info) -> strawberry.ID | None:
        run_id = await run_at(info, self.row.child_task_id, self.row.created_at)
        return strawberry.ID(run_id) if run_id else None


@strawberry.type
class AskParentQuestionPayload:
    question: ParentQuestion
    parent_task_id: strawberry.ID
    status: str


AskParentQuestionResult: TypeAlias = Annotated[
    AskParentQuestionPayload | ExpectedError, strawberry.union("AskParentQuestionResult")
]
