"""/mcp/session with the official MCP client, in both protocol eras: the session token decides the caller."""

from __future__ import annotations

import httpx
import pytest
from mcp.shared.exceptions import MCPError

from kandev.domain.access.session_tokens import PREFIX
from kandev.domain.access.tokens import hash_token
from kandev.domain.context import Principal
from kandev.edge.mcp_bridge.server import TOOL_FAILED
from tests.integration.mcp_transport.conftest import ERAS, MODERN, App, FakeSurface, mcp_client, refusal

pytestmark = pytest.mark.parametrize("era", ERAS)


async def test_a_session_token_lists_the_tools_the_surface_gives_that_session(
    era: str, app: App, surface: FakeSurface, new_session, principal: Principal
):
    agent = await new_session()
    async with mcp_client(app.url("/mcp/session"), era, agent.token) as client:
        listed = await client.list_tools()
    assert [tool.name for tool in listed.tools] == ["echo", "whoami", "boom"]
    caller = surface.listed_for[-1]
    assert (caller.endpoint, caller.session_id, caller.task_id) == (
        "session",
        agent.session_id,
        agent.task_id,
    )
    assert caller.principal.user_id == principal.user_id
    assert caller.principal.login == "agent"
    assert (caller.principal.session_id, caller.principal.task_id) == (agent.session_id, agent.task_id)
    assert caller.principal.actor == f"session:{agent.session_id}"
    if era == MODERN:
        assert listed.ttl_ms == 0


async def test_tool_lists_are_never_served_from_a_client_cache(era: str, app: App, surface: FakeSurface, new_session):
    agent = await new_session()
    async with mcp_client(app.url("/mcp/session"), era, agent.token) as client:
        assert [t.name for t in (await client.list_tools()).tools] == ["echo", "whoami", "boom"]
        surface.extra_tools[agent.session_id] = ["late"]
        assert [t.name for t in (await client.list_tools()).tools] == ["echo", "whoami", "boom", "late"]


async def test_a_tool_call_round_trips_as_the_session(era: str, app: App, surface: FakeSurface, new_session):
    agent = await new_session()
    async with mcp_client(app.url("/mcp/session"), era, agent.token) as client:
        echoed = await client.call_tool("echo", {"text": "hi"})
        whoami = await client.call_tool("whoami", {})
    assert not echoed.is_error and echoed.structured_content == {"echo": "hi"}
    assert whoami.structured_content is not None
    assert whoami.structured_content["session_id"] == agent.session_id
    assert whoami.structured_content["task_id"] == agent.task_id
    assert surface.called_by[-1].session_id == agent.session_id


async def test_an_exception_in_the_surface_becomes_a_generic_tool_error(era: str, app: App, new_session, caplog):
    agent = await new_session()
    async with mcp_client(app.url("/mcp/session"), era, agent.token) as client:
        result = await client.call_tool("boom", {})
    assert result.is_error
    text = " ".join(getattr(block, "text", "") for block in result.content)
    assert text == TOOL_FAILED
    assert "hunter2" not in text
    assert any("tool boom failed" in record.getMessage() for record in caplog.records)


async def test_a_bad_or_foreign_or_unknown_session_token_is_refused(era: str, app: App, new_session):
    agent = await new_session()
    other = await new_session()
    secret = agent.token.rsplit(".", 1)[1]
    refused = [
        None,
        "not-a-token",
        f"{PREFIX}no-such-session.{secret}",
        f"{PREFIX}{other.session_id}.{secret}",  # one session's secret under another session's id
        agent.token[:-1] + ("A" if agent.token[-1] != "A" else "B"),
    ]
    bodies = set()
    async with httpx.AsyncClient(timeout=10) as http:
        for token in refused:
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            response = await http.post(app.url("/mcp/session"), json={}, headers=headers)
            assert response.status_code == 401
            assert response.headers["www-authenticate"] == "Bearer"
            bodies.add(response.text)
    assert len(bodies) == 1
    for token in refused:
        assert (await refusal(app.url("/mcp/session"), era, token)).message == "a valid session token is required"


@pytest.mark.parametrize("ending", ["stop", "delete"])
async def test_a_terminal_session_is_refused_even_on_an_open_connection(
    era: str, ending: str, app: App, new_session, services
):
    # The token check was cached by the calls before; the ending (made by this test process, so the
    # server hears of it through Redis like a worker's) must evict it.
    agent = await new_session()
    async with mcp_client(app.url("/mcp/session"), era, agent.token) as client:
        await client.list_tools()
        await client.call_tool("echo", {"text": "cached"})
        assert app.bridge.callers.get(hash_token(agent.token)) is not None  # kept: the ending must evict it
        if ending == "stop":
            await services.sessions.stop_task(agent.task_id)
        else:
            await services.tasks.delete(agent.task_id)
        with pytest.raises(MCPError):
            await client.call_tool("echo", {"text": "hi"})
    assert (await refusal(app.url("/mcp/session"), era, agent.token)).message == "a valid session token is required"
