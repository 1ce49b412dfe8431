"""A "describe an automation" chat: a session on a hidden task (origin automation_authoring, kept out of the
board, lists and taskEvents) whose agent gets the automation-authoring MCP surface. The operator's first
message starts it; later ones go through sendMessage to its task, like any conversation."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from sqlalchemy import literal, select

from kandev.domain.automations.author_draft import Conversation, Draft
from kandev.domain.context import ServiceContext
from kandev.domain.errors import NotFoundError
from kandev.domain.records import TaskRecord
from kandev.domain.scope import load_task, load_workspace
from kandev.domain.sessions.service import Delivery
from kandev.domain.tasks.service import CreateTask, TaskService
from kandev.domain.validation import check_prompt
from kandev.domain.workspace.agent_profiles import author_profile
from kandev.models import Automation, Message, Session
from kandev.models.enums import AutomationCreatedVia, MessageKind, TaskOrigin

TITLE = "Describe an automation"


async def start_authoring(
    ctx: ServiceContext, workspace_id: str, prompt: str, agent_profile_id: str | None
) -> Delivery:
    """The chat's task and session, its agent started on `prompt`, in one transaction (a profile that can't
    run here refuses it before anything is written). Without a profile, the built-in authoring agent talks."""
    check_prompt(prompt)
    async with ctx.unit_of_work() as uow:
        await load_workspace(uow.db, ctx.principal, workspace_id)
        if agent_profile_id is None:
            agent_profile_id = (await author_profile(uow.db, workspace_id)).id
        command = CreateTask(
            workspace_id=workspace_id,
            title=TITLE,
            agent_profile_id=agent_profile_id,
            origin=TaskOrigin.AUTOMATION_AUTHORING,
            start_agent=False,
        )
        task = await TaskService(ctx).create_within(uow, command)
        session, queued = await ctx.hooks.start_agent(
            ctx, uow, task, prompt, source="user", agent_profile_id=agent_profile_id
        )
        return Delivery(TaskRecord.of(task), session, queued)


class DraftState(StrEnum):
    COLLECTING = "COLLECTING"  # still asking what is missing
    CONFIRMING = "CONFIRMING"  # the full definition is shown, awaiting a yes (or a held yes: a credential missing)
    CONFIRMED = "CONFIRMED"  # the operator said yes and the chat created it (automation_id)
    HANDED_OFF = "HANDED_OFF"  # no viable definition: the form takes over with what was captured


@dataclass(frozen=True)
class AuthoringDraft:
    task_id: str
    state: DraftState
    operator_messages: int
    draft: Draft
    automation_id: str | None = None  # what the chat created, for its confirmation card's link


async def authoring_draft(ctx: ServiceContext, task_id: str) -> AuthoringDraft:
    """What the chat has captured, for the form to take over: the built-in authoring agent's conversation
    replayed over the operator's messages (it is deterministic, so this is exactly what it understood; with
    another agent it is what those rules read in the operator's words). It is CONFIRMED once the chat's agent
    has created the automation: a yes it held (a credential missing) reads CONFIRMING."""
    async with ctx.read() as db:
        task = await load_task(db, ctx.principal, task_id)
        if task.origin != TaskOrigin.AUTOMATION_AUTHORING:
            raise NotFoundError("automation authoring chat", task_id)
        said = await db.scalars(
            select(Message.text)
            .join(Session, Session.id == Message.session_id)
            .where(Session.task_id == task_id, Message.kind == MessageKind.USER)
            .order_by(Message.created_at, Session.created_at, Message.seq)
        )
        conversation, state = Conversation(), DraftState.COLLECTING
        for text in said:
            reply = conversation.hear(text)
            if reply.handoff is not None:
                state = DraftState.HANDED_OFF
            elif reply.create is not None:
                state = DraftState.CONFIRMED
            elif not conversation.done:
                state = DraftState.CONFIRMING if conversation.awaiting_confirmation else DraftState.COLLECTING
        created = await db.scalar(
            select(Automation.id)
            .where(
                Automation.created_via == AutomationCreatedVia.CHAT,
                Automation.created_by.in_(
                    select(literal("session:") + Session.id).where(Session.task_id == task_id).scalar_subquery()
                ),
            )
            .order_by(Automation.created_at)
            .limit(1)
        )
        if state == DraftState.CONFIRMED and created is None:
            state = DraftState.CONFIRMING
        return AuthoringDraft(task_id, state, conversation.operator_messages, conversation.draft, created)
