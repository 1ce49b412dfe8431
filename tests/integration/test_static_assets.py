"""GraphiQL and the favicon come from the server itself: no CDN, so they work offline and with auth on."""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

import httpx
import pytest

from kandev.edge.static_assets import GRAPHIQL_ASSETS
from kandev.platform.settings import Settings
from tests.support.factories import settings_for
from tests.support.server import running_server

BROWSER = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}


@pytest.fixture
def auth(request: pytest.FixtureRequest) -> str:
    return getattr(request, "param", "off")


@pytest.fixture
def settings(database_url: str, redis_url: str, tmp_path: Path, auth: str) -> Settings:
    return settings_for(database_url, redis_url, tmp_path, auth=auth)


def referenced(html: str) -> list[tuple[str, str | None]]:
    """(url, integrity) of every script and stylesheet the page loads."""
    found = []
    for tag in re.findall(r"<(?:script|link)\b[^>]*>", html):
        url = re.search(r'\b(?:src|href)="([^"]+)"', tag)
        integrity = re.search(r'\bintegrity="([^"]+)"', tag)
        if url:
            found.append((url.group(1), integrity.group(1) if integrity else None))
    return found


@pytest.mark.parametrize("auth", ["off", "on"], indirect=True)
async def test_graphiql_loads_every_asset_from_this_server_with_auth_off_or_on(settings: Settings, auth: str):
    async with running_server(settings) as address:
        async with httpx.AsyncClient(base_url=f"http://{address}/", timeout=10) as http:
            page = await http.get("/graphql", headers=BROWSER)
            assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
            assert page.headers["x-frame-options"] == "DENY"
            html = page.text
            assert "GraphiQL.createFetcher" in html
            assert re.findall(r"(?:https?:)?//[^\s\"'<>]+", html) == []
            assets = referenced(html)
            assert {url for url, _ in assets} >= {f"graphiql/{name}" for name in GRAPHIQL_ASSETS}
            for url, integrity in assets:
                for encoding in ["gzip", "identity"]:
                    # Resolved against the page's URL, as a browser does.
                    response = await http.get(str(page.url.join(url)), headers={"Accept-Encoding": encoding})
                    assert response.status_code == 200, url
                    expected = "text/css" if url.endswith(".css") else "text/javascript"
                    if url.endswith(".ico"):
                        expected = "image/x-icon"
                    assert response.headers["content-type"].split(";")[0] == expected, url
                    if integrity:
                        # The browser checks the decoded bytes against the hash strawberry's page pins.
                        algorithm, digest = integrity.split("-", 1)
                        actual = base64.b64encode(hashlib.new(algorithm, response.content).digest()).decode()
                        assert actual == digest, url
            if auth == "on":
                assert '"Authorization": "Bearer kdv_..."' in html
            # GraphiQL's own requests still need a token with auth on.
            query = await http.post("/graphql", json={"query": "{ workspaces { id } }"})
            assert query.status_code == (401 if auth == "on" else 200)


@pytest.mark.parametrize("auth", ["on"], indirect=True)
async def test_with_auth_on_a_get_query_from_a_browser_still_needs_a_token(settings: Settings):
    async with running_server(settings) as address:
        async with httpx.AsyncClient(base_url=f"http://{address}", timeout=10) as http:
            response = await http.get("/graphql", params={"query": "{ workspaces { id } }"}, headers=BROWSER)
    assert response.status_code == 401


async def test_an_unknown_graphiql_asset_is_not_found_and_no_path_escapes(settings: Settings):
    async with running_server(settings) as address:
        async with httpx.AsyncClient(base_url=f"http://{address}", timeout=10) as http:
            for path in ["/graphiql/index.html", "/graphiql/LICENSE.react", "/graphiql/..%2F..%2Fconfig.py"]:
                assert (await http.get(path)).status_code == 404, path


async def test_the_favicon_is_a_small_icon(settings: Settings):
    async with running_server(settings) as address:
        async with httpx.AsyncClient(base_url=f"http://{address}", timeout=10) as http:
            response = await http.get("/favicon.ico")
    assert response.status_code == 200
    assert response.headers["content-type"] == "image/x-icon"
    assert response.content[:4] == b"\x00\x00\x01\x00" and len(response.content) < 4096
