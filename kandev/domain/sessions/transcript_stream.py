"""Turns an agent's stream of updates into transcript messages: text coalesced per message, one
message per tool call updated in place, one plan per turn. Agent and thought text pass through a
streaming redactor per turn, so a secret split across chunks or messages is never stored or published."""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

from kandev.domain.context import ServiceContext
from kandev.domain.sessions.transcript import append_message, update_message
from kandev.models import Message, Session
from kandev.models.enums import MessageKind
from kandev.platform.redaction import Release, StreamRedactor


class AgentUpdate(Protocol):
    """One update from the agent (kandev.runtime.base.AgentUpdate, already redacted), as the transcript reads it."""

    @property
    def kind(self) -> str: ...

    @property
    def text(self) -> str: ...

    @property
    def data(self) -> dict[str, Any]: ...


_TEXT_KINDS = {"agent_text": MessageKind.AGENT, "thought": MessageKind.THOUGHT}
_NEW = object()  # the key of a message's first piece, until the message has an id


class TranscriptStream:
    def __init__(self, ctx: ServiceContext, session_id: str, turn_id: str) -> None:
        self.ctx = ctx
        self.session_id = session_id
        self.turn_id = turn_id
        # (kind, the agent's message id, our message id) of the text message still receiving chunks
        self._open_text: tuple[str, str | None, str] | None = None
        self._tool_messages: dict[str, str] = {}
        self._plan_message: str | None = None
        self._secrets: list[str] = []
        self._redactors: dict[str, StreamRedactor] = {}
        # Updates come from the agent's pump while the turn runner may flush: one writer at a time.
        self._lock = asyncio.Lock()

    def use_secrets(self, secrets: list[str]) -> None:
        """The secret values this session's agent was given; its text is redacted of them from now on."""
        self._secrets = list(secrets)
        self._redactors = {}

    async def next_turn(self, turn_id: str) -> None:
        await self.end_turn()
        self.turn_id = turn_id
        self._open_text = None
        self._tool_messages.clear()
        self._plan_message = None

    async def end_turn(self) -> None:
        """Store the text held back for redaction (turn ended, failed, was cancelled or the agent died)."""
        await asyncio.shield(self._locked(self._flush()))

    async def on_update(self, update: AgentUpdate) -> None:
        # Shielded: the agent connection may cancel its handlers on shutdown, and a write cut off
        # mid-transaction would hold SQLite's write lock until the connection is collected.
        await asyncio.shield(self._locked(self._apply(update)))

    async def _locked(self, work: Any) -> None:
        async with self._lock:
            await work

    async def _flush(self) -> None:
        redactors, self._redactors = self._redactors, {}
        for redactor in redactors.values():
            await self._store(redactor.flush())

    async def _apply(self, update: AgentUpdate) -> None:
        if update.kind in _TEXT_KINDS:
            await self._text(_TEXT_KINDS[update.kind], update.text, update.data.get("message_id"))
        elif update.kind == "tool_call":
            self._open_text = None
            call_id = str(update.data.get("tool_call_id", ""))
            title = str(update.data.get("title") or update.text or "tool call")
            message_id = await self._append(MessageKind.TOOL_CALL, title, {**update.data, "output": update.text})
            self._tool_messages[call_id] = message_id
        elif update.kind == "tool_call_update":
            self._open_text = None
            await self._tool_update(update)
        elif update.kind == "plan":
            self._open_text = None
            if self._plan_message is None:
                self._plan_message = await self._append(MessageKind.PLAN, update.text, update.data)
            else:
                await self._replace(self._plan_message, text=update.text, data=update.data)
        else:  # any other update ends the open message: an agent without message ids starts a new one next
            self._open_text = None

    async def note(self, kind: MessageKind, text: str, data: dict[str, Any] | None = None) -> None:
        self._open_text = None
        await self._append(kind, text, data or {})

    async def _text(self, kind: MessageKind, chunk: str, agent_message_id: str | None) -> None:
        """Chunks extend the open message of the same kind, until the agent starts a new message id
        (or, for agents that send none, until a non-text update came between); what reaches a message is
        only what the redactor releases."""
        if not chunk:
            return
        redactor = self._redactors.get(kind)
        if redactor is None:
            redactor = self._redactors[kind] = StreamRedactor(self._secrets)
        if self._open_text is not None and self._open_text[:2] == (kind, agent_message_id):
            await self._store(redactor.feed(self._open_text[2], chunk))
            return
        releases = redactor.feed(_NEW, chunk)
        await self._store([r for r in releases if r[0] is not _NEW])
        # Created now, even when all of its text is held, so it keeps its place among tool calls.
        first = "".join(text for key, text in releases if key is _NEW)
        message_id = await self._append(kind, first, {})
        redactor.rekey(_NEW, message_id)
        self._open_text = (kind, agent_message_id, message_id)

    async def _store(self, releases: list[Release]) -> None:
        """Append released text to its messages."""
        for message_id, text in releases:
            async with self.ctx.unit_of_work() as uow:
                message = await uow.db.get(Message, message_id)
                session = await uow.db.get(Session, self.session_id)
                assert message is not None and session is not None
                update_message(uow, session, message, text=message.text + text)

    async def _tool_update(self, update: AgentUpdate) -> None:
        call_id = str(update.data.get("tool_call_id", ""))
        message_id = self._tool_messages.get(call_id)
        if message_id is None:  # an update for a call we never saw start: show it anyway
            self._tool_messages[call_id] = await self._append(
                MessageKind.TOOL_CALL,
                str(update.data.get("title") or "tool call"),
                {**update.data, "output": update.text},
            )
            return
        async with self.ctx.unit_of_work() as uow:
            message = await uow.db.get(Message, message_id)
            session = await uow.db.get(Session, self.session_id)
            assert message is not None and session is not None
            data = {**message.data, **update.data}
            if update.text:
                data["output"] = update.text
            title = str(update.data.get("title") or message.text)
            update_message(uow, session, message, text=title, data=data)

    async def _append(self, kind: MessageKind, text: str, data: dict[str, Any]) -> str:
        async with self.ctx.unit_of_work() as uow:
            session = await uow.db.get(Session, self.session_id)
            assert session is not None
            message = await append_message(uow, session, kind, text, turn_id=self.turn_id, data=data)
            return message.id

    async def _replace(self, message_id: str, *, text: str, data: dict[str, Any]) -> None:
        async with self.ctx.unit_of_work() as uow:
            message = await uow.db.get(Message, message_id)
            session = await uow.db.get(Session, self.session_id)
            assert message is not None and session is not None
            update_message(uow, session, message, text=text, data=data)
