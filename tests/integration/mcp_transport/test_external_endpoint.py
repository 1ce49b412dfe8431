"""/mcp for external clients: open as the local user with KANDEV_AUTH=off, a personal access token with on."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from kandev.domain.access.tokens import create_token
from kandev.domain.access.users import create_user
from kandev.domain.context import Principal
from kandev.platform.database import Database
from kandev.platform.settings import Settings
from tests.integration.mcp_transport.conftest import ERAS, MODERN, App, FakeSurface, mcp_client, refusal
from tests.support.factories import settings_for

INITIALIZE_PARAMS = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "probe", "version": "0"},
}

pytestmark = pytest.mark.parametrize("era", ERAS)


@pytest.fixture
def auth(request: pytest.FixtureRequest) -> str:
    return getattr(request, "param", "off")


@pytest.fixture
def settings(database_url: str, redis_url: str, tmp_path: Path, auth: str) -> Settings:
    return settings_for(database_url, redis_url, tmp_path, auth=auth)


async def test_with_auth_off_mcp_is_open_as_the_local_user(
    era: str, app: App, surface: FakeSurface, principal: Principal
):
    async with mcp_client(app.url("/mcp"), era) as client:
        listed = await client.list_tools()
        whoami = await client.call_tool("whoami", {})
    assert [tool.name for tool in listed.tools] == ["echo", "whoami"]
    assert surface.listed_for[-1].principal == principal
    assert whoami.structured_content is not None
    assert whoami.structured_content["endpoint"] == "external"
    assert whoami.structured_content["session_id"] is None


@pytest.mark.parametrize("auth", ["on"], indirect=True)
async def test_with_auth_on_mcp_needs_a_personal_access_token(
    era: str, app: App, surface: FakeSurface, db: Database, new_session
):
    async with httpx.AsyncClient(timeout=10) as http:
        response = await http.post(app.url("/mcp"), json={})
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    agent = await new_session()
    for token in [None, "kdv_not-a-real-token", agent.token]:
        assert (await refusal(app.url("/mcp"), era, token)).message == "a valid personal access token is required"

    await create_user(db, "alice")
    alice = await create_token(db, name="ci", login="alice")
    async with mcp_client(app.url("/mcp"), era, alice.token) as client:
        whoami = await client.call_tool("whoami", {})
    assert whoami.structured_content is not None
    assert whoami.structured_content["login"] == "alice"
    assert surface.called_by[-1].principal.login == "alice"


@pytest.mark.parametrize("auth", ["on"], indirect=True)
async def test_a_personal_access_token_is_no_session_token(era: str, app: App, db: Database):
    token = (await create_token(db, name="laptop", login="local")).token
    assert (await refusal(app.url("/mcp/session"), era, token)).message == "a valid session token is required"


async def test_while_bound_to_loopback_a_foreign_host_or_origin_is_refused(era: str, app: App):
    """DNS rebinding: a web page must not reach the open /mcp through a name it controls."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": era}
    if era != MODERN:
        headers.pop("Mcp-Protocol-Version")
        body = {**body, "method": "initialize", "params": INITIALIZE_PARAMS}
    async with httpx.AsyncClient(timeout=10) as http:
        rebound = await http.post(app.url("/mcp"), json=body, headers={**headers, "Host": "evil.example:80"})
        cross = await http.post(app.url("/mcp"), json=body, headers={**headers, "Origin": "http://evil.example"})
    assert rebound.status_code == 421
    assert cross.status_code == 403
