"""The board on a phone (375 px): one column at a time, picked with tabs, never a page that scrolls
sideways; on a desktop every column shows and the tabs do not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import KandevServer
from tests.browser.test_web_client import no_horizontal_scroll, open_app, steps, unique
from tests.support.factories import served_task

pytestmark = pytest.mark.slow


def test_on_a_phone_the_board_shows_one_column_and_tabs_switch_it(
    phone: Any, page: Any, kandev_server: KandevServer, screenshots: Path
) -> None:
    from playwright.sync_api import expect

    task = served_task(kandev_server.mutate, kandev_server.workspace_id, unique("On the phone"))
    named = steps(kandev_server)
    open_app(phone, kandev_server)
    columns = phone.get_by_test_id("column")
    expect(columns.filter(visible=True)).to_have_count(1)
    expect(columns.filter(visible=True)).to_have_attribute("data-step-id", named["Backlog"]["id"])
    expect(phone.locator(f'[data-testid="task-card"][data-task-id="{task["id"]}"]')).to_be_visible()
    tabs = phone.get_by_test_id("board-tab")
    expect(tabs).to_have_count(len(named))
    expect(tabs.filter(has_text="Backlog")).to_have_attribute("aria-selected", "true")
    no_horizontal_scroll(phone)
    phone.screenshot(path=str(screenshots / "mobile-board.png"))

    tabs.filter(has_text="Review").click()
    expect(columns.filter(visible=True)).to_have_count(1)
    expect(columns.filter(visible=True)).to_have_attribute("data-step-id", named["Review"]["id"])
    expect(tabs.filter(has_text="Review")).to_have_attribute("aria-selected", "true")
    no_horizontal_scroll(phone)

    open_app(page, kandev_server)  # a desktop: every column, no tabs
    expect(page.get_by_test_id("column").filter(visible=True)).to_have_count(len(named))
    expect(page.get_by_test_id("board-tabs")).to_be_hidden()
