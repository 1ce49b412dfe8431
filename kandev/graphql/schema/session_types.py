"""Sessions, turns, transcript messages and the session event stream."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import strawberry
from strawberry.scalars import JSON

from kandev.domain.records import MessageRecord, SessionRecord, TurnRecord
from kandev.domain.sessions.service import MessageOrder, encode_message_cursor
from kandev.graphql.schema.attachment_types import Attachment, message_attachments
from kandev.graphql.schema.context import Info, Loaders
from kandev.graphql.schema.enums import MessageKind, SessionEventKind, SessionState, SortOrder, TurnState
from kandev.graphql.schema.fields import described
from kandev.graphql.schema.usage_types import TurnUsage


@strawberry.type(description="One prompt and the agent's response to it.")
class Turn:
    record: strawberry.Private[TurnRecord]

    id: strawberry.ID
    seq: int
    state: TurnState
    stop_reason: str | None = strawberry.field(description="ACP stop reason (end_turn, cancelled, …) or failed.")
    error: str | None
    started_at: datetime
    ended_at: datetime | None

    @described("What the turn used and cost, as its agent reported it; null until it reported.")
    async def usage(self, info: Info) -> TurnUsage | None:
        row = await info.context.loaders.turn_usage.load(self.id)
        return TurnUsage.of(row) if row is not None else None

    @classmethod
    def of(cls, record: TurnRecord) -> Turn:
        return cls(
            record=record,
            id=strawberry.ID(record.id),
            seq=record.seq,
            state=TurnState(record.state),
            stop_reason=record.stop_reason,
            error=record.error,
            started_at=record.started_at,
            ended_at=record.ended_at,
        )


@strawberry.type(description="One entry of a session's transcript.")
class Message:
    record: strawberry.Private[MessageRecord]

    id: strawberry.ID
    kind: MessageKind
    text: str
    data: JSON = strawberry.field(
        description="Kind-specific details: tool call id, status, input and output; plan entries."
    )
    turn_id: strawberry.ID | None
    seq: int
    created_at: datetime
    updated_at: datetime

    @described("Files the prompt carried to the agent (USER messages).")
    def attachments(self) -> list[Attachment]:
        return message_attachments(self.record.data)

    @classmethod
    def of(cls, record: MessageRecord) -> Message:
        return cls(
            record=record,
            id=strawberry.ID(record.id),
            kind=MessageKind(record.kind),
            text=record.text,
            data=JSON(record.data),
            turn_id=None if record.turn_id is None else strawberry.ID(record.turn_id),
            seq=record.seq,
            created_at=record.created_at,
            updated_at=record.updated_at,
        )


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
    # Subscriptions build a fresh set per event; queries use the request's.
    loaders: strawberry.Private[Loaders | None] = None

    def _loaders(self, info: Info) -> Loaders:
        return self.loaders or info.context.loaders

    id: strawberry.ID
    task_id: strawberry.ID
    state: SessionState
    name: str
    is_primary: bool
    agent_profile_id: strawberry.ID | None
    created_at: datetime
    ended_at: datetime | None
    completion_pending: bool = strawberry.field(
        description="The last turn ended on a signal-gated step without step_complete_kandev."
    )
    plan_mode: bool

    @classmethod
    def of(cls, record: SessionRecord, *, loaders: Loaders | None = None) -> Session:
        """Built only for a session the caller may see: its nested fields read without checking again."""
        return cls(
            record=record,
            loaders=loaders,
            id=strawberry.ID(record.id),
            task_id=strawberry.ID(record.task_id),
            state=SessionState(record.state),
            name=record.name,
            is_primary=record.is_primary,
            agent_profile_id=None if record.agent_profile_id is None else strawberry.ID(record.agent_profile_id),
            created_at=record.created_at,
            ended_at=record.ended_at,
            completion_pending=record.completion_pending,
            plan_mode=record.plan_mode,
        )

    @strawberry.field
    async def turns(self, info: Info) -> list[Turn]:
        rows = await self._loaders(info).turns_by_session.load(self.record.id)
        return [Turn.of(TurnRecord.of(t)) for t in rows]

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
        page = await info.context.services.lookups.messages(
            self.record.id,
            first=first,
            after=after,
            last=last,
            order=MessageOrder(order.value),
            kinds=None if kinds is None else [kind.value for kind in kinds],
            after_message_id=None if after_message_id is None else str(after_message_id),
            before_message_id=None if before_message_id is None else str(before_message_id),
        )
        edges = [MessageEdge(cursor=encode_message_cursor(m.seq), node=Message.of(m)) for m in page.messages]
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
        rows = await self._loaders(info).queued_prompts_by_session.load(self.record.id)
        return [
            QueuedPrompt(id=strawberry.ID(p.id), text=p.text, source=p.source, created_at=p.created_at) for p in rows
        ]


@strawberry.type(description="A change in a session: transcript, turns or state.")
class SessionEvent:
    kind: SessionEventKind
    session: Session
    message: Message | None = None
    turn: Turn | None = None
