"""/mcp/session accepts only the live, random token of a session's current launch: nothing derived from
the server key, no personal access token, no token of an earlier launch (even where it was cached)."""

from __future__ import annotations

import hashlib
import hmac
from pathlib import Path

import httpx
import pytest
from mcp.shared.exceptions import MCPError

from kandev.domain.access.session_tokens import PREFIX
from kandev.domain.access.tokens import create_token, hash_token
from kandev.platform.database import Database
from kandev.platform.settings import Settings
from tests.integration.mcp_transport.conftest import ERAS, App, mcp_client, refusal
from tests.support.factories import settings_for
from tests.support.session_tokens import launch_token

pytestmark = pytest.mark.parametrize("era", ERAS)

REFUSED = "a valid session token is required"


@pytest.fixture
def auth(request: pytest.FixtureRequest) -> str:
    return getattr(request, "param", "off")


@pytest.fixture
def settings(database_url: str, redis_url: str, tmp_path: Path, auth: str) -> Settings:
    return settings_for(database_url, redis_url, tmp_path, auth=auth)


async def status(app: App, path: str, token: str) -> int:
    async with httpx.AsyncClient(timeout=10) as http:
        response = await http.post(app.url(path), json={}, headers={"Authorization": f"Bearer {token}"})
    return response.status_code


async def test_a_token_built_from_the_server_key_the_old_way_is_refused(era: str, app: App, new_session, settings):
    agent = await new_session()  # a live session, so only the token itself can be wrong
    digest = hmac.new(settings.server_key, f"session:{agent.session_id}".encode(), hashlib.sha256).hexdigest()
    forged = f"{PREFIX}{agent.session_id}.{digest}"
    assert await status(app, "/mcp/session", forged) == 401
    assert (await refusal(app.url("/mcp/session"), era, forged)).message == REFUSED
    async with mcp_client(app.url("/mcp/session"), era, agent.token) as client:
        assert (await client.list_tools()).tools


@pytest.mark.parametrize("auth", ["off", "on"], indirect=True)
async def test_a_personal_access_token_is_refused_on_the_session_endpoint(era: str, app: App, db: Database):
    token = (await create_token(db, name="laptop", login="local")).token
    assert await status(app, "/mcp/session", token) == 401
    assert (await refusal(app.url("/mcp/session"), era, token)).message == REFUSED


@pytest.mark.parametrize("auth", ["on"], indirect=True)
async def test_a_session_token_is_refused_on_the_external_endpoint(era: str, app: App, new_session):
    agent = await new_session()
    assert await status(app, "/mcp", agent.token) == 401
    assert (await refusal(app.url("/mcp"), era, agent.token)).message == "a valid personal access token is required"


async def test_a_new_launchs_token_refuses_the_previous_one_at_once_even_where_it_was_cached(
    era: str, app: App, new_session, services
):
    agent = await new_session()
    async with mcp_client(app.url("/mcp/session"), era, agent.token) as client:
        await client.call_tool("echo", {"text": "cached"})  # this server process now vouches for the token
        assert app.bridge.callers.get(hash_token(agent.token)) is not None
        relaunched = await launch_token(services.ctx, agent.session_id)
        with pytest.raises(MCPError):
            await client.call_tool("echo", {"text": "stale"})
    assert (await refusal(app.url("/mcp/session"), era, agent.token)).message == REFUSED
    async with mcp_client(app.url("/mcp/session"), era, relaunched) as client:
        echoed = await client.call_tool("echo", {"text": "fresh"})
    assert echoed.structured_content == {"echo": "fresh"}
