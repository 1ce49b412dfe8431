"""Sessions, turns, transcript messages and the session event stream."""

from __future__ import annotations

from datetime import datetime

import strawberry
from strawberry.scalars import JSON

from kandev.domain.records import MessageRecord, SessionRecord, TurnRecord
from kandev.domain.sessions import encode_message_cursor
from kandev.schema.context import Info
from kandev.schema.enums import MessageKind, SessionEventKind, SessionState, TurnState


@strawberry.type(description="One prompt and the agent's response to it.")
class Turn:
    record: strawberry.Private[TurnRecord]

    @strawberry.field
    def id(self) -> strawberry.ID:
        return strawberry.ID(self.record.id)

    @strawberry.field
    def seq(self) -> int:
        return self.record.seq

    @strawberry.field
    def state(self) -> TurnState:
        return TurnState(self.record.state)

    @strawberry.field(description="ACP stop reason (end_turn, cancelled, …) or failed.")
    def stop_reason(self) -> str | None:
        return self.record.stop_reason

    @strawberry.field
    def error(self) -> str | None:
        return self.record.error

    @strawberry.field
    def started_at(self) -> datetime:
        return self.record.started_at

    @strawberry.field
    def ended_at(self) -> datetime | None:
        return self.record.ended_at


@strawberry.type(description="One entry of a session's transcript.")
class Message:
    record: strawberry.Private[MessageRecord]

    @strawberry.field
    def id(self) -> strawberry.ID:
        return strawberry.ID(self.record.id)

    @strawberry.field
    def kind(self) -> MessageKind:
        return MessageKind(self.record.kind)

    @strawberry.field
    def text(self) -> str:
        return self.record.text

    @strawberry.field(description="Kind-specific details: tool call id, status, input and output; plan entries.")
    def data(self) -> JSON:
        return self.record.data

    @strawberry.field
    def turn_id(self) -> strawberry.ID | None:
        return strawberry.ID(self.record.turn_id) if self.record.turn_id else None

    @strawberry.field
    def seq(self) -> int:
        return self.record.seq

    @strawberry.field
    def created_at(self) -> datetime:
        return self.record.created_at

    @strawberry.field
    def updated_at(self) -> datetime:
        return self.record.updated_at


@strawberry.type
class MessageEdge:
    cursor: str
    node: Message


@strawberry.type
class MessagePageInfo:
    has_next_page: bool
    end_cursor: str | None


@strawberry.type(description="Transcript messages, oldest first.")
class MessageConnection:
    edges: list[MessageEdge]
    page_info: MessagePageInfo

    @strawberry.field
    def nodes(self) -> list[Message]:
        return [edge.node for edge in self.edges]


@strawberry.type(description="A prompt waiting for the session's running turn to end.")
class QueuedPrompt:
    id: strawberry.ID
    text: str
    source: str
    created_at: datetime


@strawberry.type(description="One agent conversation on a task.")
class Session:
    record: strawberry.Private[SessionRecord]

    @strawberry.field
    def id(self) -> strawberry.ID:
        return strawberry.ID(self.record.id)

    @strawberry.field
    def task_id(self) -> strawberry.ID:
        return strawberry.ID(self.record.task_id)

    @strawberry.field
    def state(self) -> SessionState:
        return SessionState(self.record.state)

    @strawberry.field
    def name(self) -> str:
        return self.record.name

    @strawberry.field
    def is_primary(self) -> bool:
        return self.record.is_primary

    @strawberry.field
    def agent_profile_id(self) -> strawberry.ID | None:
        return strawberry.ID(self.record.agent_profile_id) if self.record.agent_profile_id else None

    @strawberry.field
    def created_at(self) -> datetime:
        return self.record.created_at

    @strawberry.field
    def ended_at(self) -> datetime | None:
        return self.record.ended_at

    @strawberry.field(description="The last turn ended on a signal-gated step without step_complete_kandev.")
    def completion_pending(self) -> bool:
        return self.record.completion_pending

    @strawberry.field
    def plan_mode(self) -> bool:
        return self.record.plan_mode

    @strawberry.field
    async def turns(self, info: Info) -> list[Turn]:
        rows = await info.context.services.sessions.turns(self.record.id)
        return [Turn(record=TurnRecord.of(t)) for t in rows]

    @strawberry.field(description="The transcript, oldest first; page with `after`, or take the newest with `last`.")
    async def messages(
        self, info: Info, first: int = 100, after: str | None = None, last: int | None = None
    ) -> MessageConnection:
        page = await info.context.services.sessions.messages(self.record.id, first=first, after=after, last=last)
        edges = [
            MessageEdge(cursor=encode_message_cursor(m.seq), node=Message(record=MessageRecord.of(m)))
            for m in page.messages
        ]
        return MessageConnection(
            edges=edges,
            page_info=MessagePageInfo(has_next_page=page.has_next_page, end_cursor=edges[-1].cursor if edges else None),
        )

    @strawberry.field(description="The MCP tool names this session's agent currently has (its profile).")
    async def mcp_tools(self, info: Info) -> list[str]:
        return await info.context.services.sessions.mcp_tools(self.record.id)

    @strawberry.field(description="Prompts waiting their turn, in delivery order.")
    async def queued_prompts(self, info: Info) -> list[QueuedPrompt]:
        rows = await info.context.services.sessions.queued_prompts(self.record.id)
        return [
            QueuedPrompt(id=strawberry.ID(p.id), text=p.text, source=p.source, created_at=p.created_at) for p in rows
        ]


@strawberry.type(description="A change in a session: transcript, turns or state.")
class SessionEvent:
    kind: SessionEventKind
    session: Session
    message: Message | None = None
    turn: Turn | None = None
