"""get_task_conversation_kandev: paging with a cursor, sort order, message-type filters and message bounds."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from kandev.domain.sessions.transcript import append_message
from kandev.edge.mcp_bridge.surface import McpCaller
from kandev.models import Message, Session
from tests.integration.mcp_bridge.conftest import agent_on, call_tool
from tests.support.factories import new_task

KINDS = ["USER", "AGENT", "TOOL_CALL", "THOUGHT", "AGENT", "TOOL_CALL", "ERROR", "USER", "AGENT"]


async def seeded(services: Any, workspace_id: str, kinds: list[str] = KINDS) -> tuple[McpCaller, list[str]]:
    """An agent on a task whose primary session holds a transcript of `kinds`; its message ids, oldest first."""
    agent = await agent_on(services, await new_task(services, workspace_id, "Talkative"))
    async with services.ctx.unit_of_work() as uow:
        session = await uow.db.get(Session, agent.session_id)
        for n, kind in enumerate(kinds):
            await append_message(uow, session, kind, f"{kind.lower()} {n}")
    async with services.ctx.read() as db:
        ids = await db.scalars(select(Message.id).where(Message.session_id == agent.session_id).order_by(Message.seq))
        return agent, list(ids)


async def read_all(surface: Any, caller: McpCaller, **arguments: Any) -> tuple[list[dict[str, Any]], int]:
    """Every page, following next_cursor; the messages in order and how many pages it took."""
    messages: list[dict[str, Any]] = []
    pages = 0
    cursor = None
    while True:
        error, page = await call_tool(
            surface,
            caller,
            "get_task_conversation_kandev",
            task_id="self",
            **arguments,
            **({"cursor": cursor} if cursor else {}),
        )
        assert not error, page
        pages += 1
        messages += page["messages"]
        assert (page["next_cursor"] is not None) is page["has_more"]
        if not page["has_more"]:
            return messages, pages
        cursor = page["next_cursor"]
        assert pages < 50


async def test_paging_newest_first_by_default_sees_every_message_exactly_once(tool_surface, services, workspace_id):
    agent, ids = await seeded(services, workspace_id)
    error, first = await call_tool(tool_surface, agent, "get_task_conversation_kandev", task_id="self", limit=4)
    assert not error and first["session_id"] == agent.session_id
    assert [m["id"] for m in first["messages"]] == ids[::-1][:4]
    assert first["has_more"] is True and first["next_cursor"]
    messages, pages = await read_all(tool_surface, agent, limit=4)
    assert [m["id"] for m in messages] == ids[::-1]
    assert pages == 3  # 4 + 4 + 1


async def test_ascending_sort_reverses_the_order_and_pages_forward(tool_surface, services, workspace_id):
    agent, ids = await seeded(services, workspace_id)
    messages, pages = await read_all(tool_surface, agent, sort="asc", limit=2)
    assert [m["id"] for m in messages] == ids and pages == 5
    assert [m["kind"] for m in messages] == KINDS
    error, newest = await call_tool(tool_surface, agent, "get_task_conversation_kandev", task_id="self", sort="desc")
    assert not error and [m["id"] for m in newest["messages"]] == ids[::-1]
    assert newest["has_more"] is False and newest["next_cursor"] is None


async def test_message_types_keep_only_those_kinds_across_pages(tool_surface, services, workspace_id):
    agent, ids = await seeded(services, workspace_id)
    by_id = dict(zip(ids, KINDS, strict=True))
    tools, pages = await read_all(tool_surface, agent, message_types=["tool_call"], limit=1)
    assert [m["kind"] for m in tools] == ["TOOL_CALL", "TOOL_CALL"] and pages == 2
    assert [m["id"] for m in tools] == [i for i in ids[::-1] if by_id[i] == "TOOL_CALL"]
    talk, _ = await read_all(tool_surface, agent, message_types=["message"], sort="asc")
    assert [m["id"] for m in talk] == [i for i in ids if by_id[i] in ("USER", "AGENT")]
    mixed, _ = await read_all(tool_surface, agent, message_types=["error", "thought"], sort="asc")
    assert [m["kind"] for m in mixed] == ["THOUGHT", "ERROR"]


async def test_before_and_after_keep_only_messages_between_two_messages(tool_surface, services, workspace_id):
    agent, ids = await seeded(services, workspace_id)
    error, window = await call_tool(
        tool_surface, agent, "get_task_conversation_kandev", task_id="self", after=ids[2], before=ids[6], sort="asc"
    )
    assert not error and [m["id"] for m in window["messages"]] == ids[3:6]
    older, _ = await read_all(tool_surface, agent, before=ids[3], limit=2)
    assert [m["id"] for m in older] == ids[:3][::-1]


async def test_a_named_session_is_read_instead_of_the_primary_one(tool_surface, services, workspace_id):
    agent, ids = await seeded(services, workspace_id)
    error, sibling = await call_tool(tool_surface, agent, "spawn_session_kandev", name="side")
    assert not error
    error, side = await call_tool(
        tool_surface, agent, "get_task_conversation_kandev", task_id="self", session_id=sibling["id"]
    )
    assert not error and side["session_id"] == sibling["id"] and not set(ids) & {m["id"] for m in side["messages"]}
    other, _ = await seeded(services, workspace_id)
    error, refused = await call_tool(
        tool_surface, agent, "get_task_conversation_kandev", task_id="self", session_id=other.session_id
    )
    assert error and refused["code"] == "NOT_FOUND" and other.session_id not in refused["error"]


async def test_bad_paging_input_is_refused_with_a_clear_error_and_changes_nothing(
    tool_surface, services, db, workspace_id
):
    agent, ids = await seeded(services, workspace_id)
    other, other_ids = await seeded(services, workspace_id)
    refusals = [
        ({"message_types": ["gossip"]}, "INVALID_ARGUMENTS", "field 'message_types[0]' must be one of: user, agent"),
        ({"message_types": []}, "INVALID_ARGUMENTS", "field 'message_types' has too few items"),
        ({"limit": 0}, "INVALID_ARGUMENTS", "field 'limit' is too small"),
        ({"limit": 201}, "INVALID_ARGUMENTS", "field 'limit' is too large"),
        ({"sort": "sideways"}, "INVALID_ARGUMENTS", "field 'sort' must be one of: desc, asc"),
        ({"page": 2}, "INVALID_ARGUMENTS", "unknown field: page"),
        ({"cursor": "not-a-cursor"}, "VALIDATION", "the cursor is not one this API gave out"),
        ({"before": other_ids[0]}, "VALIDATION", "the message to read before is not in this session"),
        ({"after": "no-such-message"}, "VALIDATION", "the message to read after is not in this session"),
    ]
    for arguments, code, text in refusals:
        error, payload = await call_tool(
            tool_surface, agent, "get_task_conversation_kandev", task_id="self", **arguments
        )
        assert error and payload["code"] == code, (arguments, payload)
        assert payload["error"].startswith(text), (arguments, payload)
        assert all(str(value) not in payload["error"] for value in arguments.values())  # never echoes input
    async with db.read() as s:
        assert await s.scalar(select(func.count()).select_from(Message)) == len(ids) + len(other_ids)
