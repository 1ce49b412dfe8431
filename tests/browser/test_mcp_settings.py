"""The MCP servers settings page in a real headless Chromium against a real `kandev serve`: a remote server added
from a curated template, refused with a typed error while its header holds a literal, selected on an agent profile,
edited and deleted."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.conftest import KandevServer
from tests.browser.test_settings import accept_dialogs
from tests.browser.test_web_client import open_app, unique

pytestmark = pytest.mark.slow


def test_a_template_becomes_a_configured_server_that_is_selected_on_a_profile_edited_and_deleted(
    page: Any, kandev_server: KandevServer
) -> None:
    from playwright.sync_api import expect

    accept_dialogs(page)
    open_app(page, kandev_server, "/settings/mcp")
    page.get_by_test_id("mcp-view-marketplace").click()
    template = page.locator('[data-testid="mcp-template"][data-key="github"]')
    expect(template).to_contain_text("api.githubcopilot.com")
    template.get_by_test_id("use-template").click()
    form = page.get_by_test_id("mcp-server-form")
    expect(form.get_by_test_id("mcp-url")).to_have_value("https://api.githubcopilot.com/mcp/")
    expect(form.get_by_test_id("mcp-headers")).to_have_value("Authorization: Bearer ${secret:GITHUB_TOKEN}")
    name = unique("gh").replace(" ", "-")
    form.get_by_test_id("mcp-name").fill(name)
    form.get_by_test_id("mcp-headers").fill("Authorization: Bearer tok-literal-3c9e1f")
    form.get_by_test_id("save-mcp-server").click()
    expect(form.get_by_test_id("mcp-error")).to_contain_text("by reference")
    form.get_by_test_id("mcp-headers").fill("Authorization: Bearer ${secret:GITHUB_TOKEN}")
    form.get_by_test_id("save-mcp-server").click()
    row = page.locator(f'[data-testid="mcp-server"][data-name="{name}"]')
    expect(row).to_contain_text("remote · https://api.githubcopilot.com/mcp/")

    # Selected at the built-in Scripted profile from its form (collapsed until opened); it stays selected.
    page.get_by_test_id("settings-tab-agents").click()
    page.locator('[data-testid="profile"][data-name="Scripted"]').get_by_test_id("edit-profile").click()
    selector = page.get_by_test_id("profile-form").get_by_test_id("mcp-selector")
    selector.locator("summary").click()
    box = selector.locator(f'[data-testid="mcp-select"][data-name="{name}"]')
    box.click()  # saved at once; the box shows the stored selection
    expect(box).to_be_checked()
    expect(selector.locator("summary")).to_have_text("MCP servers (1)")
    page.reload()
    page.locator('[data-testid="profile"][data-name="Scripted"]').get_by_test_id("edit-profile").click()
    expect(selector.locator("summary")).to_have_text("MCP servers (1)")
    page.get_by_test_id("settings-tab-mcp").click()

    row.get_by_test_id("edit-mcp-server").click()
    expect(form.get_by_test_id("mcp-kind")).to_be_disabled()
    form.get_by_test_id("mcp-url").fill("https://mcp.example.test/mcp")
    form.get_by_test_id("save-mcp-server").click()
    expect(row).to_contain_text("remote · https://mcp.example.test/mcp")

    row.get_by_test_id("delete-mcp-server").click()
    expect(row).to_have_count(0)
