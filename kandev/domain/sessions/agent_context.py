"""The backend's context for an agent: one block before the first prompt of every ACP session."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.sessions.tool_profiles import session_profile
from kandev.models import Message, Session, StepTransition, Task, WorkflowStep
from kandev.models.enums import MessageKind, TaskOrigin

OPEN, CLOSE = "<kandev-context>", "</kandev-context>"
HISTORY_LIMIT = 50
HISTORY_MESSAGE_CHARS = 2000
# A sent review is the person's words to the agent, as a message is.
HISTORY_KINDS = (MessageKind.USER, MessageKind.REVIEW, MessageKind.AGENT)
RICH_OUTPUT_TOOL = "show_rich_output_kandev"
AUTOPILOT_CONTRACT = [
    "This task is in autopilot mode: you work on your own.",
    "Make safe, reversible assumptions and keep going; ask only when a decision is essential and blocks "
    "useful progress. Never ask the operator: no ask_user_question_kandev.",
]
AUTOPILOT_WITH_PARENT = [
    *AUTOPILOT_CONTRACT,
    "If you must ask, ask your direct parent task with ask_parent_question_kandev, only as the last action "
    "of your turn, then end the turn; its answer arrives as your next prompt.",
]
AUTOPILOT_ROOT = [
    *AUTOPILOT_CONTRACT,
    "You have no parent to ask: proceed on your best judgement and disclose the assumptions you made.",
]
STEP_SIGNAL_INSTRUCTION = (
    "This workflow step advances automatically only on your signal: call step_complete_kandev once, as the "
    "last action of your turn, and only when every user request and follow-up requirement for this step is "
    "satisfied. Do not call it on partial progress, before asking a question, or after a failure. Ending "
    "your turn without calling it leaves the step paused for the user."
)
AUTHORING_CONTRACT = [
    "You help the operator describe a workspace automation (what fires it, which agent and repositories it "
    "uses, what its prompt asks) and create it with create_automation.",
    "Ask targeted follow-up questions one at a time, at most three in a row. Check schedules with "
    "validate_cron and agents with list_available_agents.",
    "Before creating, show the full definition and create it only once the operator confirms.",
    "Never invent a credential, token or secret: ask the operator to add it in the settings.",
    "After five operator messages without a viable definition, say you are handing over to the form and "
    "list what you captured.",
]
RICH_OUTPUT_INSTRUCTION = (
    "When the user explicitly asks for a chart, graph, plot or file preview and suitable data is available, "
    "show it with show_rich_output_kandev. Otherwise prefer plain text or Markdown (small comparisons as "
    "Markdown tables)."
)


def context_block(
    task: Task,
    session: Session,
    step: WorkflowStep | None,
    extra: Sequence[str] = (),
    handoff: str | None = None,
) -> str:
    lines = [
        OPEN,
        f"You are working on Kandev task {task.id}: {task.title}",
        f"Session: {session.id}",
        *extra,
    ]
    if step is not None:
        lines.append(f"Workflow step: {step.name}")
        if step.auto_advance_requires_signal:
            lines.append(STEP_SIGNAL_INSTRUCTION)
    if handoff and handoff.strip():
        lines += ["Handoff from the previous step:", _unmarked(handoff.strip())]
    if task.autopilot:
        lines += AUTOPILOT_WITH_PARENT if task.parent_id else AUTOPILOT_ROOT
    if task.origin == TaskOrigin.AUTOMATION_AUTHORING:
        lines += [f"Workspace: {task.workspace_id}", *AUTHORING_CONTRACT]
    if task.prompt and task.prompt.strip():
        lines += ["Task description:", task.prompt.strip()]
    lines.append("Kandev tools are available on the MCP server named 'kandev'.")
    if RICH_OUTPUT_TOOL in session_profile(session, task).tool_names():
        lines.append(RICH_OUTPUT_INSTRUCTION)
    lines.append(CLOSE)
    return "\n".join(lines)


def _unmarked(text: str) -> str:
    """Agent-written text can't open or close the context block it is quoted in."""
    return text.replace(OPEN, "<kandev context>").replace(CLOSE, "</kandev context>")


async def step_handoff(db: AsyncSession, task: Task) -> str | None:
    """The handoff of the accepted signal that moved the task onto its current step, if any."""
    last = await db.scalar(
        select(StepTransition)
        .where(StepTransition.task_id == task.id)
        .order_by(StepTransition.created_at.desc())
        .limit(1)
    )
    if last is None or last.to_step_id != task.workflow_step_id:
        return None
    return (last.details or {}).get("signal_handoff")


def resumable(message: Message) -> bool:
    """A message a synthesized resume keeps: user or agent text with something in it. Tool calls, thoughts,
    system and status messages and unknown kinds neither appear nor take one of the window's slots."""
    return message.kind in HISTORY_KINDS and bool(message.text.strip())


def is_context_reset(message: Message) -> bool:
    """The SYSTEM marker a step's reset_agent_context writes: nothing before it is resumed."""
    return message.kind == MessageKind.SYSTEM and bool((message.data or {}).get("context_reset"))


def history_window(messages: Sequence[Message]) -> list[Message]:
    """The rule on a whole transcript (oldest first): the newest 50 resumable messages after the last
    context reset, oldest first. `history_messages` reads the same window without loading the transcript."""
    resets = [i for i, m in enumerate(messages) if is_context_reset(m)]
    if resets:
        messages = messages[resets[-1] + 1 :]
    return [m for m in messages if resumable(m)][-HISTORY_LIMIT:]


async def history_messages(db: AsyncSession, session_id: str, current_turn_id: str) -> list[Message]:
    """`history_window` of the session's transcript without the current turn (its prompt is sent after the
    history, outside the window), read newest first, 50 rows at a time, so a long conversation costs no more
    than a short one. The SQL filter is coarse (kind, not empty); `resumable` has the last word."""
    reset = await db.scalar(
        select(func.max(Message.seq)).where(
            Message.session_id == session_id,
            Message.kind == MessageKind.SYSTEM,
            Message.data["context_reset"].as_boolean().is_(True),
        )
    )
    query = select(Message).where(
        Message.session_id == session_id,
        Message.kind.in_(HISTORY_KINDS),
        Message.text != "",
        or_(Message.turn_id.is_(None), Message.turn_id != current_turn_id),
    )
    if reset is not None:
        query = query.where(Message.seq > reset)
    kept: list[Message] = []
    below: int | None = None
    while len(kept) < HISTORY_LIMIT:
        wanted = HISTORY_LIMIT - len(kept)
        page = query if below is None else query.where(Message.seq < below)
        rows = list(await db.scalars(page.order_by(Message.seq.desc()).limit(wanted)))
        kept += [m for m in rows if resumable(m)]
        if len(rows) < wanted:
            break
        below = rows[-1].seq
    kept.reverse()
    return kept


def resume_history(messages: Sequence[Message]) -> str:
    """A synthesized resume prompt from the newest 50 non-empty user/agent messages, oldest first, each cut
    to HISTORY_MESSAGE_CHARS; quoted text can't close the context block it is shown in."""
    kept = history_window(messages)
    if not kept:
        return ""
    lines = ["The conversation so far (you are resuming it):"]
    for message in kept:
        who = "You" if message.kind == MessageKind.AGENT else "User"
        text = message.text.strip()
        if len(text) > HISTORY_MESSAGE_CHARS:
            text = text[:HISTORY_MESSAGE_CHARS] + " …"
        lines.append(f"[{who}] {_unmarked(text)}")
    return "\n".join(lines)
