"""Sessions, turns, transcript messages and the session event stream."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import strawberry
from strawberry.scalars import JSON

from kandev.domain.records import MessageRecord, SessionRecord, TurnRecord
from kandev.domain.sessions.service import MessageOrder, encode_message_cursor
from kandev.schema.columns import column
from kandev.schema.context import Info
from kandev.schema.enums import MessageKind, SessionEventKind, SessionState, SortOrder, TurnState
from kandev.schema.fields import described


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


@strawberry.type(description="A page of transcript messages, in the order asked for.")
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

    @described(
        "The transcript, oldest first unless `order` is DESC. Page on with `after` (a cursor from this "
        "listing, same order and filters); `last` takes the final N of the ordering instead."
    )
    async def messages(
        self,
        info: Info,
        first: Annotated[int, strawberry.argument(description="Page size, 0-500.")] = 100,
        after: Annotated[
            str | None, strawberry.argument(description="Continue after this cursor (pageInfo.endCursor).")
        ] = None,
        last: Annotated[int | None, strawberry.argument(description="Take the final N instead (0-500).")] = None,
        order: Annotated[
            SortOrder, strawberry.argument(description="ASC: oldest first (default); DESC: newest first.")
        ] = SortOrder.ASC,
        kinds: Annotated[
            list[MessageKind] | None, strawberry.argument(description="Only messages of these kinds.")
        ] = None,
        after_message_id: Annotated[
            strawberry.ID | None, strawberry.argument(description="Only messages newer than this message.")
        ] = None,
        before_message_id: Annotated[
            strawberry.ID | None, strawberry.argument(description="Only messages older than this message.")
        ] = None,
    ) -> MessageConnection:
        page = await info.context.services.sessions.messages(
            self.record.id,
            first=first,
            after=after,
            last=last,
            order=MessageOrder(order.value),
            kinds=None if kinds is None else [kind.value for kind in kinds],
            after_message_id=None if after_message_id is None else str(after_message_id),
            before_message_id=None if before_message_id is None else str(before_message_id),
        )
        edges = [
            MessageEdge(cursor=encode_message_cursor(m.seq), node=Message(record=MessageRecord.of(m)))
            for m in page.messages
        ]
        return MessageConnection(
            edges=edges,
            page_info=MessagePageInfo(has_next_page=page.has_next_page, end_cursor=edges[-1].cursor if edges else None),
        )

    @described("The MCP tool names this session's agent currently has (its profile).")
    async def mcp_tools(self, info: Info) -> list[str]:
        return await info.context.services.sessions.mcp_tools(self.record.id)

    @described(
        "The capability groups of the session's MCP profile (user-question, parent-question, task-title, "
        "github-pr, gitlab-mr), from its purpose, autopilot, parent, title ownership and repositories."
    )
    async def mcp_capabilities(self, info: Info) -> list[str]:
        profile = await info.context.services.sessions.mcp_profile(self.record.id)
        return sorted(c.value for c in profile.capabilities)

    @described("Prompts waiting their turn, in delivery order.")
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
