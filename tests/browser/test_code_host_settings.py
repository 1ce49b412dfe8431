"""The code-host connections settings, in a real headless Chromium against a real `kandev serve` pointed at
the local fake GitLab: a refused token is shown as GitLab's refusal and stores nothing, a good one connects
the workspace (its user and instance shown, the token never on the page), and disconnecting forgets it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.browser.conftest import KandevServer, serve
from tests.browser.test_web_client import open_app
from tests.support.fake_gitlab import FakeGitLab, fake_gitlab_in_thread

pytestmark = pytest.mark.slow

GOOD = "glpat-browser-good-6d1f0a"
REFUSED = "glpat-browser-refused-93be27"


@pytest.fixture(scope="module")
def gitlab_server(web_client: Path) -> Iterator[tuple[KandevServer, FakeGitLab]]:
    fake = FakeGitLab()
    fake.tokens = {GOOD: "browser-tanuki"}
    with fake_gitlab_in_thread(fake) as served:
        with serve("browser-code-hosts-serve.log", KANDEV_GITLAB_URL=served.url) as (base, _env):
            workspaces = httpx.post(f"{base}/graphql", json={"query": "{ workspaces { id } }"}, timeout=10).json()
            yield KandevServer(base=base, workspace_id=workspaces["data"]["workspaces"][0]["id"]), served


def test_gitlab_is_connected_in_settings_after_a_refused_token_and_disconnected_without_the_token_on_the_page(
    page: Any, gitlab_server: tuple[KandevServer, FakeGitLab], screenshots: Path
) -> None:
    from playwright.sync_api import expect

    server, fake = gitlab_server
    page.on("dialog", lambda dialog: dialog.accept())
    open_app(page, server, "/settings/connections")
    panel = page.get_by_test_id("gitlab-connection")
    expect(panel.get_by_test_id("gitlab-status")).to_have_text("Not connected")

    panel.get_by_test_id("gitlab-token").fill(REFUSED)
    panel.get_by_test_id("connect-gitlab").click()
    expect(panel.get_by_test_id("gitlab-error")).to_contain_text("GitLab refused this token")
    expect(panel.get_by_test_id("gitlab-status")).to_have_text("Not connected")

    panel.get_by_test_id("gitlab-token").fill(GOOD)
    panel.get_by_test_id("connect-gitlab").click()
    expect(panel.get_by_test_id("gitlab-status")).to_have_text(f"Connected as browser-tanuki on {fake.url}")
    expect(panel.get_by_test_id("gitlab-token")).to_have_value("")
    expect(panel.get_by_test_id("gitlab-error")).to_have_count(0)
    page.screenshot(path=str(screenshots / "desktop-settings-code-hosts.png"))
    html = page.content()
    assert GOOD not in html and REFUSED not in html
    assert fake.requests.count("/api/v4/user") == 2  # the refused try and the good one, nothing else

    panel.get_by_test_id("disconnect-gitlab").click()
    expect(panel.get_by_test_id("gitlab-status")).to_have_text("Not connected")
    shown = server.gql("query($w: ID!) { gitlabConnection(workspaceId: $w) { username } }", w=server.workspace_id)
    assert shown["gitlabConnection"] is None
