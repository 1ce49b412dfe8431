"""The settings pages are live: in a real headless Chromium against a real `kandev serve`, a workflow step, an
agent profile, a secret, a step's WIP limit and a workflow's description made in one tab appear in another tab
without a reload, an access token issued or revoked through the API shows on the open tokens page, and a tab
whose socket dropped catches up on what changed meanwhile."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.conftest import DESKTOP, KandevServer, _new_page
from tests.browser.test_web_client import open_app, unique
from tests.browser.test_workflow_editor import open_step, step_row

pytestmark = pytest.mark.slow

CREATE_SECRET = """mutation($i: CreateSecretInput!) { createSecret(input: $i) { __typename
  ... on SecretPayload { secret { id } } ... on Error { message } } }"""
CREATE_TOKEN = """mutation($n: String!) { createAccessToken(input: { name: $n }) { __typename
  ... on CreateAccessTokenPayload { token accessToken { id } } ... on Error { message } } }"""
REVOKE_TOKEN = """mutation($i: ID!) { revokeAccessToken(id: $i) { __typename ... on Error { message } } }"""


@pytest.fixture
def other(browser: Any) -> Iterator[Any]:
    """A second tab, in its own browser context: what it shows can only come from the server."""
    yield from _new_page(browser, viewport=DESKTOP)


def open_live(page: Any, server: KandevServer, path: str) -> None:
    """Open a settings page once the server listens for this workspace's configuration changes."""
    from playwright.sync_api import expect

    open_app(page, server, path)
    expect(page.get_by_test_id("connection")).to_have_attribute("data-config", "live")
    expect(page.get_by_test_id("settings")).to_be_visible()


def test_a_step_a_profile_and_a_secret_made_in_one_tab_appear_in_another_without_a_reload(
    page: Any, other: Any, kandev_server: KandevServer
) -> None:
    from playwright.sync_api import expect

    open_live(page, kandev_server, "/settings/workflows")
    open_live(other, kandev_server, "/settings/workflows")
    other.evaluate("() => { window.__notReloaded = true; }")  # gone if the tab reloads

    step = unique("Live step")
    page.get_by_test_id("new-step-name").fill(step)
    page.get_by_test_id("add-step").click()
    expect(step_row(other, step)).to_be_visible()

    # Open and unedited in the other tab: its form follows what was saved here.
    watching = open_step(other, step).get_by_test_id("step-wip-limit")
    expect(watching).to_have_value("")
    form = open_step(page, step)
    form.get_by_test_id("step-wip-limit").fill("3")
    form.get_by_test_id("save-step").click()
    expect(watching).to_have_value("3")
    description = unique("What this workflow is for")
    page.get_by_test_id("workflow-description").fill(description)
    page.get_by_test_id("rename-workflow").click()
    expect(other.get_by_test_id("workflow-description")).to_have_value(description)

    page.get_by_test_id("settings-tab-agents").click()
    other.get_by_test_id("settings-tab-agents").click()
    expect(other.get_by_test_id("new-profile")).to_be_visible()
    profile = unique("Live agent")
    page.get_by_test_id("new-profile").click()
    page.get_by_test_id("profile-name").fill(profile)
    page.get_by_test_id("profile-kind").select_option("SCRIPTED")
    page.get_by_test_id("save-profile").click()
    expect(other.locator(f'[data-testid="profile"][data-name="{profile}"]')).to_be_visible()

    page.get_by_test_id("settings-tab-secrets").click()
    other.get_by_test_id("settings-tab-secrets").click()
    expect(other.get_by_test_id("secrets")).to_be_attached()
    secret = unique("LIVE").replace(" ", "_").upper()
    page.get_by_test_id("secret-name").fill(secret)
    page.get_by_test_id("secret-value").fill("sk-live-value-never-shown")
    page.get_by_test_id("add-secret").click()
    expect(other.locator(f'[data-testid="secret"][data-name="{secret}"]')).to_be_visible()

    assert other.evaluate("() => window.__notReloaded === true")
    assert "sk-live-value-never-shown" not in other.content()


def test_an_access_token_issued_and_revoked_through_the_api_shows_on_the_open_tokens_page_without_a_reload(
    page: Any, kandev_server: KandevServer
) -> None:
    from playwright.sync_api import expect

    open_live(page, kandev_server, "/settings/tokens")
    expect(page.get_by_test_id("tokens")).to_be_attached()
    page.evaluate("() => { window.__notReloaded = true; }")  # gone if the tab reloads

    name = unique("api-laptop")
    issued = kandev_server.mutate(CREATE_TOKEN, "createAccessToken", n=name)
    row = page.locator(f'[data-testid="token"][data-name="{name}"]')
    expect(row.get_by_test_id("revoke-token")).to_be_visible()
    kandev_server.mutate(REVOKE_TOKEN, "revokeAccessToken", i=issued["accessToken"]["id"])
    expect(row.get_by_test_id("token-revoked")).to_be_visible()
    expect(row.get_by_test_id("revoke-token")).to_have_count(0)

    assert page.evaluate("() => window.__notReloaded === true")
    assert issued["token"] not in page.content()  # the event names the token, the page never shows its text


def test_a_tab_whose_socket_dropped_refetches_what_changed_meanwhile(page: Any, kandev_server: KandevServer) -> None:
    from playwright.sync_api import expect

    open_live(page, kandev_server, "/settings/secrets")
    page.evaluate("() => window.__kandevDropConnection()")
    # Made while the socket is down: only the refetch after the reconnect can bring it in.
    secret = unique("MISSED").replace(" ", "_").upper()
    kandev_server.mutate(
        CREATE_SECRET, "createSecret", i={"workspaceId": kandev_server.workspace_id, "name": secret, "value": "v"}
    )
    expect(page.get_by_test_id("connection")).to_have_attribute("data-state", "connected")
    assert "reconnecting" in page.evaluate("() => window.__kandevLinkStates")
    expect(page.locator(f'[data-testid="secret"][data-name="{secret}"]')).to_be_visible()
