"""The resume history is read from the database newest first, 50 rows at a time, and gives exactly the window
the rule gives over the whole transcript: a long conversation loads no more messages than a short one."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import event, func, select

from kandev.domain.sessions.agent_context import HISTORY_LIMIT, history_messages, history_window
from kandev.models import Message
from kandev.models.base import new_id, utcnow
from kandev.models.enums import MessageKind
from tests.support.factories import started_task

RESET = (MessageKind.SYSTEM, "Agent context reset on entering 'Review'.", {"context_reset": True})


@contextmanager
def loaded_messages() -> Iterator[list[str]]:
    """The ids of the Message rows the ORM builds while the block runs."""
    seen: list[str] = []

    def on_load(message: Message, _: Any) -> None:
        seen.append(message.id)

    event.listen(Message, "load", on_load)
    try:
        yield seen
    finally:
        event.remove(Message, "load", on_load)


async def write(db: Any, session_id: str, entries: list[tuple[Any, ...]]) -> list[Message]:
    """Append (kind, text[, data[, turn_id]]) entries after the session's last message; returns them."""
    async with db.transaction() as s:
        last = await s.scalar(select(func.max(Message.seq)).where(Message.session_id == session_id)) or 0
        now = utcnow()
        rows = []
        for offset, entry in enumerate(entries, start=1):
            kind, text = entry[0], entry[1]
            data = entry[2] if len(entry) > 2 else {}
            turn_id = entry[3] if len(entry) > 3 else f"turn-{(last + offset) // 4}"
            rows.append(
                Message(
                    id=new_id(),
                    session_id=session_id,
                    turn_id=turn_id,
                    seq=last + offset,
                    kind=kind,
                    text=text,
                    data=data,
                    created_at=now,
                    updated_at=now,
                )
            )
        s.add_all(rows)
    return rows


async def everything(db: Any, session_id: str) -> list[Message]:
    async with db.read() as s:
        return list(await s.scalars(select(Message).where(Message.session_id == session_id).order_by(Message.seq)))


async def window_read(db: Any, session_id: str, current_turn_id: str) -> list[Message]:
    async with db.read() as s:
        return await history_messages(s, session_id, current_turn_id)


def texts(messages: list[Message]) -> list[str]:
    return [m.text for m in messages]


async def test_the_read_window_is_the_rules_window_with_tool_calls_blanks_resets_and_the_current_turn(
    services, db, workspace_id
):
    session_id = (await started_task(services, workspace_id, "/say hi")).session_id
    entries: list[tuple[Any, ...]] = [(MessageKind.USER, "before the reset"), RESET]
    for i in range(70):
        kind = MessageKind.USER if i % 2 == 0 else MessageKind.AGENT
        entries += [(kind, f"message {i}"), (MessageKind.TOOL_CALL, f"call {i}"), (MessageKind.THOUGHT, "hmm")]
        if i % 9 == 0:  # blank text the SQL filter lets through: the rule drops it, the read keeps paging
            entries += [(MessageKind.AGENT, "  \n "), (MessageKind.USER, "\t")]
        if i % 11 == 0:
            entries.append((MessageKind.AGENT, ""))
    await write(db, session_id, entries)
    await write(db, session_id, [(MessageKind.USER, "the current prompt", {}, "current-turn")])

    read = await window_read(db, session_id, "current-turn")
    previous = [m for m in await everything(db, session_id) if m.turn_id != "current-turn"]
    assert texts(read) == texts(history_window(previous))
    assert texts(read) == [f"message {i}" for i in range(20, 70)]
    assert "the current prompt" not in texts(read)


async def test_a_reset_inside_the_newest_fifty_bounds_the_window(services, db, workspace_id):
    session_id = (await started_task(services, workspace_id, "/say hi")).session_id
    await write(db, session_id, [(MessageKind.USER, f"old {i}") for i in range(30)])
    await write(db, session_id, [RESET[:2] + (RESET[2], None)])  # the marker a step move writes has no turn
    await write(db, session_id, [(MessageKind.AGENT, f"new {i}") for i in range(5)])
    assert texts(await window_read(db, session_id, "current-turn")) == [f"new {i}" for i in range(5)]


async def test_a_conversation_of_thousands_of_messages_loads_only_the_window(services, db, workspace_id):
    session_id = (await started_task(services, workspace_id, "/say hi")).session_id
    entries: list[tuple[Any, ...]] = []
    for i in range(1500):
        entries += [(MessageKind.USER if i % 2 == 0 else MessageKind.AGENT, f"message {i}")]
        entries += [(MessageKind.TOOL_CALL, f"call {i}")]
    await write(db, session_id, entries)

    with loaded_messages() as loaded:
        read = await window_read(db, session_id, "current-turn")
    assert texts(read) == [f"message {i}" for i in range(1450, 1500)]
    assert len(loaded) == HISTORY_LIMIT


async def test_reading_the_window_leaves_the_transcript_as_it_was(services, db, workspace_id):
    session_id = (await started_task(services, workspace_id, "/say hi")).session_id
    await write(db, session_id, [(MessageKind.USER, f"m {i}") for i in range(60)] + [RESET])
    before = [(m.id, m.seq, m.kind, m.text, m.data) for m in await everything(db, session_id)]
    assert await window_read(db, session_id, "current-turn") == []
    assert [(m.id, m.seq, m.kind, m.text, m.data) for m in await everything(db, session_id)] == before
