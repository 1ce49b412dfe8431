"""Step completion signals and questions to the operator."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kandev.domain.sessions.clarifications import ANSWERED, REJECTED, render_answers
from kandev.mcp_bridge.catalogue import ToolCall, ToolSpec, obj, register, string
from kandev.mcp_bridge.tools.fields import ERRORS, WORKSPACE_ID, workspace_of

QUESTION = """id task_id: taskId session_id: sessionId turn_id: turnId questions context state answers
  created_at: createdAt"""
OPTION = obj({"label": string("What the user picks.", minLength=1), "description": string("More detail.")}, ("label",))
QUESTIONS = {
    "type": "array",
    "minItems": 1,
    "maxItems": 4,
    "description": "1 to 4 questions.",
    "items": obj(
        {
            "prompt": string("The question, self-contained.", minLength=1),
            "id": string("Your id for the question (default q1, q2, …)."),
            "title": string("A short heading."),
            "options": {"type": "array", "maxItems": 8, "items": OPTION, "description": "Choices to offer."},
        },
        ("prompt",),
    ),
}


async def _wait_for_answer(shaped: dict[str, Any], call: ToolCall, services: Any) -> dict[str, Any]:
    """The tool call waits for the user; without an answer in time the turn pauses (hard pause)."""
    clarifications = services.clarifications
    timeout = services.ctx.settings.clarification_timeout_s
    try:
        row = await clarifications.wait(shaped["question_id"], timeout)
    except BaseException:  # the client went away or the call was cancelled: pause, keep it answerable
        await clarifications.hard_pause(shaped["question_id"])
        raise
    if row.state == ANSWERED:
        return {
            "question_id": row.id,
            "status": "answered",
            "answers": row.answers,
            "answer_text": render_answers(row),
        }
    if row.state == REJECTED:
        return {"question_id": row.id, "status": "rejected"}
    await clarifications.hard_pause(row.id)
    return {
        "question_id": row.id,
        "status": "waiting_for_user",
        "message": "No answer yet. End your turn now; the answer will arrive as your next prompt.",
    }


def _answer_variables(call: ToolCall) -> dict[str, Any]:
    args = call.arguments
    if args.get("reject"):
        return {"id": args["pending_id"], "reject": True, "answers": []}
    answers = [
        {
            "questionId": a["question_id"],
            "selectedOptions": a.get("selected_options", []),
            "customText": a.get("custom_text"),
        }
        for a in args.get("answers", [])
    ]
    return {"id": args["pending_id"], "reject": False, "answers": answers}


async def _pending_variables(call: ToolCall) -> dict[str, Any]:
    since = call.arguments.get("created_since")
    if since is not None:
        try:
            datetime.fromisoformat(since)
        except ValueError:
            from kandev.mcp_bridge.catalogue import ToolInputError

            raise ToolInputError("field 'created_since' must be an ISO 8601 date-time") from None
    return {
        "ws": workspace_of(call),
        "since": since,
        "after": call.arguments.get("cursor"),
        "limit": call.arguments.get("limit", 50),
    }


register(
    ToolSpec(
        name="step_complete_kandev",
        description=(
            "Signal that every requirement the user stated for the current workflow step is satisfied. Call it "
            "once, as the last action of your turn, never on partial progress, before a question, or after a "
            "failure. Returns accepted: false with a reason, changing nothing, when this turn already signaled "
            "(already_signaled), the step was re-opened by a user message (reopened), or the task has left the "
            "step this turn worked on (step_changed). The handoff is shown to the next step's agent."
        ),
        input_schema=obj(
            {
                "summary": string("One paragraph: what was done in this step.", minLength=1, maxLength=4000),
                "handoff": string("Context for the next step's agent.", maxLength=4000),
                "blockers": string("Known unresolved issues.", maxLength=4000),
            },
            ("summary",),
        ),
        document=f"""mutation($input: SignalStepCompleteInput!) {{ signalStepComplete(input: $input) {{ {ERRORS}
          ... on SignalStepCompletePayload {{ accepted reason }} }} }}""",
        variables=lambda call: {"input": {k: call.arguments.get(k) for k in ("summary", "handoff", "blockers")}},
        result=lambda data: {
            k: v for k, v in data["signalStepComplete"].items() if k != "__typename" and v is not None
        },
    ),
    ToolSpec(
        name="ask_user_question_kandev",
        description=(
            "Ask the user 1 to 4 questions and wait for the answer. Ask only what you can't reasonably decide "
            "yourself. If no answer comes in time, end your turn: the answer arrives later as your next prompt."
        ),
        input_schema=obj({"questions": QUESTIONS, "context": string("Why you ask, what it blocks.")}, ("questions",)),
        document=f"""mutation($input: AskUserQuestionInput!) {{ askUserQuestion(input: $input) {{ {ERRORS}
          ... on ClarificationPayload {{ clarification {{ id }} }} }} }}""",
        variables=lambda call: {
            "input": {"questions": call.arguments["questions"], "context": call.arguments.get("context")}
        },
        result=lambda data: {"question_id": data["askUserQuestion"]["clarification"]["id"]},
        follow_up=_wait_for_answer,
    ),
    ToolSpec(
        name="list_pending_questions_kandev",
        description="List questions agents are waiting on in a workspace, oldest first; page with cursor.",
        input_schema=obj(
            {
                "workspace_id": WORKSPACE_ID,
                "created_since": string("Only questions asked at or after this ISO 8601 time."),
                "cursor": string("next_cursor from a previous page."),
                "limit": {"type": "integer", "minimum": 1, "maximum": 200, "description": "Default: 50."},
            }
        ),
        document=f"""query($ws: ID!, $since: DateTime, $after: String, $limit: Int!) {{
          pendingQuestions(workspaceId: $ws, since: $since, after: $after, limit: $limit) {{
          nodes {{ {QUESTION} }} next_cursor: nextCursor }} }}""",
        variables=_pending_variables,
        result=lambda data: {
            "questions": data["pendingQuestions"]["nodes"],
            "next_cursor": data["pendingQuestions"]["next_cursor"],
        },
    ),
    ToolSpec(
        name="answer_question_kandev",
        description="Answer a pending question (selected option labels and/or custom text per question), or reject it.",
        input_schema=obj(
            {
                "pending_id": string("The pending question set's id (its question_id).", minLength=1),
                "answers": {
                    "type": "array",
                    "items": obj(
                        {
                            "question_id": string("Which question of the set.", minLength=1),
                            "selected_options": {"type": "array", "items": {"type": "string"}},
                            "custom_text": string("Free-text answer."),
                        },
                        ("question_id",),
                    ),
                },
                "reject": {"type": "boolean", "description": "Decline to answer."},
            },
            ("pending_id",),
        ),
        # The original system's name for pending_id: accepted, never advertised.
        aliases={"question_id": "pending_id"},
        document=f"""mutation($id: ID!, $reject: Boolean!, $answers: [QuestionAnswerInput!]!) {{
          answer: answerClarification(input: {{clarificationId: $id, answers: $answers}}) @skip(if: $reject) {{ {ERRORS}
            ... on ClarificationPayload {{ clarification {{ {QUESTION} }} }} }}
          rejected: rejectClarification(clarificationId: $id) @include(if: $reject) {{ {ERRORS}
            ... on ClarificationPayload {{ clarification {{ {QUESTION} }} }} }} }}""",
        variables=_answer_variables,
        result=lambda data: (data.get("answer") or data.get("rejected"))["clarification"],
    ),
)


register(
    ToolSpec(
        name="ask_parent_question_kandev",
        description=(
            "Autopilot only: ask your direct parent task 1 to 4 questions when a critical decision blocks you. "
            "Call it as the last action of your turn, then end the turn: the parent's answer arrives as your next "
            "prompt. Returns at once with the question_id; a repeat returns the same pending question."
        ),
        input_schema=obj(
            {"questions": QUESTIONS, "context": string("Why you ask and what it blocks.")}, ("questions",)
        ),
        document=f"""mutation($input: AskUserQuestionInput!) {{ askParentQuestion(input: $input) {{ {ERRORS}
          ... on AskParentQuestionPayload {{ status parent_task_id: parentTaskId question {{ id }} }} }} }}""",
        variables=lambda call: {
            "input": {"questions": call.arguments["questions"], "context": call.arguments.get("context")}
        },
        result=lambda data: {
            "question_id": data["askParentQuestion"]["question"]["id"],
            "parent_task_id": data["askParentQuestion"]["parent_task_id"],
            "status": data["askParentQuestion"]["status"],
        },
    ),
)
