"""Step completion signals and questions to the operator."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kandev.domain.sessions.clarifications import render_answers
from kandev.edge.mcp_bridge.catalogue import ToolCall, ToolInputError, ToolSpec, command_tool, obj, register, string
from kandev.edge.mcp_bridge.tools.fields import WORKSPACE_ID, workspace_of
from kandev.graphql.contract import ERROR_SELECTION, command

QUESTION = """id task_id: taskId session_id: sessionId turn_id: turnId questions context state answers
  created_at: createdAt"""
ANSWER = command("answerClarification")


async def _wait_for_answer(shaped: dict[str, Any], call: ToolCall, services: Any) -> dict[str, Any]:
    """The tool call waits for the user (ClarificationService.wait_for_answer pauses the turn without one)."""
    waited = await services.clarifications.wait_for_answer(shaped["question_id"])
    if waited.status == "answered":
        return {
            "question_id": waited.row.id,
            "status": "answered",
            "answers": waited.row.answers,
            "answer_text": render_answers(waited.row),
        }
    if waited.status == "rejected":
        return {"question_id": waited.row.id, "status": "rejected"}
    return {
        "question_id": waited.row.id,
        "status": "waiting_for_user",
        "message": "No answer yet. End your turn now; the answer will arrive as your next prompt.",
    }


def _answer_variables(call: ToolCall) -> dict[str, Any]:
    """The adapter of answer_question_kandev: pending_id names the clarification, and reject picks
    rejectClarification instead of answerClarification (the answers keep their declared shape)."""
    args = call.arguments
    pending = args["pending_id"]
    answers = [] if args.get("reject") else args.get("answers", [])
    answer = ANSWER.variables({"clarification_id": pending, "answers": answers})
    return {**answer, "id": pending, "reject": bool(args.get("reject"))}


async def _pending_variables(call: ToolCall) -> dict[str, Any]:
    since = call.arguments.get("created_since")
    if since is not None:
        try:
            datetime.fromisoformat(since)
        except ValueError:
            raise ToolInputError("field 'created_since' must be an ISO 8601 date-time") from None
    return {
        "ws": workspace_of(call),
        "since": since,
        "after": call.arguments.get("cursor"),
        "limit": call.arguments.get("limit", 50),
    }


register(
    command_tool(
        "step_complete_kandev",
        "signalStepComplete",
        "Signal that every requirement the user stated for the current workflow step is satisfied. Call it "
        "once, as the last action of your turn, never on partial progress, before a question, or after a "
        "failure. Returns accepted: false with a reason, changing nothing, when this turn already signaled "
        "(already_signaled), the step was re-opened by a user message (reopened), or the task has left the "
        "step this turn worked on (step_changed). The handoff is shown to the next step's agent.",
        "... on SignalStepCompletePayload { accepted reason }",
        lambda payload: {k: v for k, v in payload.items() if k != "__typename" and v is not None},
    ),
    command_tool(
        "ask_user_question_kandev",
        "askUserQuestion",
        "Ask the user 1 to 4 questions and wait for the answer. Ask only what you can't reasonably decide "
        "yourself. If no answer comes in time, end your turn: the answer arrives later as your next prompt.",
        "... on ClarificationPayload { clarification { id } }",
        lambda payload: {"question_id": payload["clarification"]["id"]},
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
                "answers": ANSWER.json_schema()["properties"]["answers"],
                "reject": {"type": "boolean", "description": "Decline to answer."},
            },
            ("pending_id",),
        ),
        # The original system's name for pending_id: accepted, never advertised.
        aliases={"question_id": "pending_id"},
        document=f"""mutation($input: AnswerClarificationInput!, $id: ID!, $reject: Boolean!) {{
          answer: answerClarification(input: $input) @skip(if: $reject) {{ {ERROR_SELECTION}
            ... on ClarificationPayload {{ clarification {{ {QUESTION} }} }} }}
          rejected: rejectClarification(clarificationId: $id) @include(if: $reject) {{ {ERROR_SELECTION}
            ... on ClarificationPayload {{ clarification {{ {QUESTION} }} }} }} }}""",
        variables=_answer_variables,
        result=lambda data: (data.get("answer") or data["rejected"])["clarification"],
    ),
)


register(
    command_tool(
        "ask_parent_question_kandev",
        "askParentQuestion",
        "Autopilot only: ask your direct parent task 1 to 4 questions when a critical decision blocks you. "
        "Call it as the last action of your turn, then end the turn: the parent's answer arrives as your next "
        "prompt. Returns at once with the question_id; a repeat returns the same pending question.",
        "... on AskParentQuestionPayload { status parent_task_id: parentTaskId question { id } }",
        lambda payload: {
            "question_id": payload["question"]["id"],
            "parent_task_id": payload["parent_task_id"],
            "status": payload["status"],
        },
    ),
)
