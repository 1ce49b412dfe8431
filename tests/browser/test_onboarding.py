"""An empty workspace's board explains how to start: a first task with the Scripted agent (its prompt
filled in, run to the end) and how to connect a real agent; it goes once the workspace has a task."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import KandevServer
from tests.browser.test_accessibility import serious_violations
from tests.browser.test_web_client import no_horizontal_scroll, open_app, unique

pytestmark = pytest.mark.slow

CREATE_WORKSPACE = (
    "mutation($i: CreateWorkspaceInput!) "
    "{ createWorkspace(input: $i) { __typename ... on WorkspacePayload { workspace { id } } } }"
)


def empty_workspace(server: KandevServer) -> str:
    created = server.mutate(CREATE_WORKSPACE, "createWorkspace", i={"name": unique("Empty")})
    return created["workspace"]["id"]


def open_workspace(page: Any, server: KandevServer, workspace_id: str) -> None:
    # The client opens the workspace it remembers.
    page.add_init_script(f"localStorage.setItem('kandev.workspace', {workspace_id!r})")
    open_app(page, server)


def test_an_empty_workspace_shows_how_to_start_and_its_first_task_runs_the_scripted_agent(
    page: Any, kandev_server: KandevServer, screenshots: Path
) -> None:
    from playwright.sync_api import expect

    open_workspace(page, kandev_server, empty_workspace(kandev_server))
    onboarding = page.get_by_test_id("onboarding")
    expect(onboarding).to_be_visible()
    expect(onboarding).to_contain_text("/say TEXT")
    expect(onboarding.get_by_role("link", name="Settings → Agent profiles")).to_have_attribute(
        "href", "/settings/agents"
    )
    assert serious_violations(page) == []
    page.screenshot(path=str(screenshots / "desktop-onboarding.png"))

    onboarding.get_by_test_id("onboarding-try").click()
    form = page.get_by_test_id("task-form")
    expect(form.locator("[name=title]")).to_have_value("My first task")
    expect(form.locator("[name=prompt]")).to_have_value(
        "/say Looking at the workspace now.\n/tool list_tasks_kandev {}\n/say Done: **one** task found."
    )
    expect(form.locator("[name=agent] option:checked")).to_have_text("Scripted")
    form.get_by_test_id("create-task-submit").click()
    messages = page.get_by_test_id("msg-agent")
    expect(messages.last).to_contain_text("Done: one task found.")
    expect(messages.last.locator("strong")).to_have_text("one")  # Markdown, rendered

    open_app(page, kandev_server)  # the workspace has a task now: the board, no onboarding
    expect(page.get_by_test_id("task-card")).to_have_count(1)
    expect(page.get_by_test_id("onboarding")).to_have_count(0)


def test_the_onboarding_fits_a_phone(phone: Any, kandev_server: KandevServer, screenshots: Path) -> None:
    from playwright.sync_api import expect

    open_workspace(phone, kandev_server, empty_workspace(kandev_server))
    expect(phone.get_by_test_id("onboarding")).to_be_visible()
    no_horizontal_scroll(phone)
    assert serious_violations(phone) == []
    phone.screenshot(path=str(screenshots / "mobile-onboarding.png"))
