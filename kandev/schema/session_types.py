"""Sessions, turns, transcript messages and the session event stream."""

from __future__ import annotations

from datetime import datetime

import strawberry
from strawberry.scalars import JSON

from kandev.domain.records import MessageRecord, SessionRecord, TurnRecord
from kandev.domain.sessions import encode_message_cursor
from kandev.schema.columns import column
from kandev.schema.context import Info
from kandev.schema.enums import MessageKind, SessionEventKind, SessionState, TurnState


@strawberry.type(description="One prompt and the agent's response to it.")
class Turn:
    record: strawberry.Private[TurnRecord]

    id: strawberry.ID = column("id", strawberry.ID, source="record")
    seq: int = column("seq", int, source="record")
    state: TurnState = column("state", TurnState, source="record", convert=TurnState)
    stop_reason: str | None = column(
        "stop_reason", str | None, source="record", description="ACP stop reason (end_turn, cancelled, …) or failed."
    )
    error: str | None = column("error", str | None, source="record")
    started_at: datetime = column("started_at", datetime, source="record")
    ended_at: datetime | None = column("ended_at", datetime | None, source="record")


@strawberry.type(description="One entry of a session's transcript.")
class Message:
    record: strawberry.Private[MessageRecord]

    id: strawberry.ID = column("id", strawberry.ID, source="record")
    kind: MessageKind = column("kind", MessageKind, source="record", convert=MessageKind)
    text: str = column("text", str, source="record")
    data: JSON = column(
        "data",
        JSON,
        source="record",
        description="Kind-specific details: tool call id, status, input and output; plan entries.",
    )
    turn_id: strawberry.ID | None = column("turn_id", strawberry.ID | None, source="record")
    seq: int = column("seq", int, source="record")
    created_at: datetime = column("created_at", datetime, source="record")
    updated_at: datetime = column("updated_at", datetime, source="record")


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

    id: strawberry.ID = column("id", strawberry.ID, source="record")
    task_id: strawberry.ID = column("task_id", strawberry.ID, source="record")
    state: SessionState = column("state", SessionState, source="record", convert=SessionState)
    name: str = column("name", str, source="record")
    is_primary: bool = column("is_primary", bool, source="record")
    agent_profile_id: strawberry.ID | None = column("agent_profile_id", strawberry.ID | None, source="record")
    created_at: datetime = column("created_at", datetime, source="record")
    ended_at: datetime | None = column("ended_at", datetime | None, source="record")
    completion_pending: bool = column(
        "completion_pending",
        bool,
        source="record",
        description="The last turn ended on a signal-gated step without step_complete_kandev.",
    )
    plan_mode: bool = column("plan_mode", bool, source="record")

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
