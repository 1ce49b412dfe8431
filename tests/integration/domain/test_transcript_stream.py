"""The transcript stream stores agent text redacted across chunk and message boundaries, live too."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from sqlalchemy import select

from kandev.domain.sessions.transcript_stream import TranscriptStream
from kandev.domain.sessions.turns import claim_turn
from kandev.models import Message
from kandev.platform.event_bus import session_channel
from kandev.runtime.base import REDACTED, AgentUpdate
from tests.support.factories import started_task

SECRET = "sk-live-0123456789abcdef"


async def claimed_stream(services: Any, workspace_id: str) -> TranscriptStream:
    session_id = (await started_task(services, workspace_id, "work", "Leaky")).session_id
    claimed = await claim_turn(services.ctx, session_id, worker_name="t", job_id=None, lease_seconds=60)
    assert claimed is not None
    stream = TranscriptStream(services.ctx, session_id, claimed.turn_id)
    stream.use_secrets([SECRET, "short"])
    return stream


async def stored(db: Any, session_id: str, kind: str = "AGENT") -> list[str]:
    async with db.read() as s:
        rows = await s.scalars(
            select(Message.text).where(Message.session_id == session_id, Message.kind == kind).order_by(Message.seq)
        )
        return list(rows)


async def drained(events: Any) -> list[dict[str, Any]]:
    """Every payload published so far (each write publishes after its commit)."""
    payloads: list[dict[str, Any]] = []
    while True:
        try:
            payloads.append(await asyncio.wait_for(anext(events), 0.5))
        except TimeoutError:
            return payloads


def chunks(text: str, size: int = 4) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


async def test_a_secret_streamed_in_four_character_chunks_is_stored_and_published_redacted(
    services, db, bus, workspace_id
):
    stream = await claimed_stream(services, workspace_id)
    async with bus.subscribe(session_channel(stream.session_id)) as events:
        for piece in chunks(f"the key is {SECRET} ok"):
            await stream.on_update(AgentUpdate("agent_text", piece, {"message_id": "a1"}))
        for piece in chunks(f"thinking about {SECRET}"):
            await stream.on_update(AgentUpdate("thought", piece))
        await stream.end_turn()
        payloads = await drained(events)
    assert await stored(db, stream.session_id) == [f"the key is {REDACTED} ok"]
    assert await stored(db, stream.session_id, "THOUGHT") == [f"thinking about {REDACTED}"]
    published = json.dumps(payloads)
    assert payloads and SECRET[:8] not in published and SECRET[-8:] not in published


async def test_a_secret_split_across_two_messages_is_redacted_in_both_and_never_published(
    services, db, bus, workspace_id
):
    stream = await claimed_stream(services, workspace_id)
    async with bus.subscribe(session_channel(stream.session_id)) as events:
        # Each line its own agent message (as when every /say line becomes a message), the secret cut in two.
        await stream.on_update(AgentUpdate("agent_text", f"first {SECRET[:9]}", {"message_id": "m1"}))
        await stream.on_update(AgentUpdate("agent_text", f"{SECRET[9:]} second", {"message_id": "m2"}))
        await stream.end_turn()
        payloads = await drained(events)
    assert await stored(db, stream.session_id) == [f"first {REDACTED}", f"{REDACTED} second"]
    texts = [p["message"]["text"] for p in payloads if "message" in p]
    assert texts and not any(SECRET[:9] in t or SECRET[9:] in t for t in texts)


async def test_held_text_is_stored_at_turn_end_after_a_tool_call_in_order(services, db, workspace_id):
    stream = await claimed_stream(services, workspace_id)
    await stream.on_update(AgentUpdate("agent_text", "done, see", {"message_id": "m1"}))
    await stream.on_update(AgentUpdate("tool_call", "", {"tool_call_id": "c1", "title": "ls"}))
    await stream.end_turn()
    async with db.read() as s:
        rows = (
            await s.execute(
                select(Message.kind, Message.text)
                .where(Message.session_id == stream.session_id, Message.kind.in_(["AGENT", "TOOL_CALL"]))
                .order_by(Message.seq)
            )
        ).all()
    assert [tuple(r) for r in rows] == [("AGENT", "done, see"), ("TOOL_CALL", "ls")]


async def test_chunks_without_message_ids_start_a_new_message_after_a_non_text_update(services, db, workspace_id):
    stream = await claimed_stream(services, workspace_id)
    await stream.on_update(AgentUpdate("agent_text", "still here after 2 seconds"))
    await stream.on_update(AgentUpdate("other", "", {"session_update": "available_commands_update"}))
    await stream.on_update(AgentUpdate("agent_text", "done"))
    await stream.on_update(AgentUpdate("agent_text", ", really"))
    await stream.end_turn()
    assert await stored(db, stream.session_id) == ["still here after 2 seconds", "done, really"]


async def test_a_new_message_id_starts_a_new_message_and_the_same_id_extends_it(services, db, workspace_id):
    stream = await claimed_stream(services, workspace_id)
    await stream.on_update(AgentUpdate("agent_text", "still here after 2 seconds", {"message_id": "say-1"}))
    await stream.on_update(AgentUpdate("agent_text", "done", {"message_id": "say-2"}))
    await stream.on_update(AgentUpdate("agent_text", " now", {"message_id": "say-2"}))
    await stream.end_turn()
    assert await stored(db, stream.session_id) == ["still here after 2 seconds", "done now"]
