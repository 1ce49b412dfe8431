"""The board on a phone (375 px): one column at a time, picked with tabs or a sideways swipe, never a page
that scrolls sideways; on a desktop every column shows and the tabs do not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import KandevServer
from tests.browser.test_web_client import no_horizontal_scroll, open_app, steps, unique
from tests.support.factories import served_task

pytestmark = pytest.mark.slow


def swipe(page: Any, dx: float, dy: float = 0) -> None:
    """A finger drawn across the board through the browser's own touch input (not synthetic DOM events)."""
    box = page.get_by_test_id("board").bounding_box()
    x0, y0 = box["x"] + box["width"] / 2 - dx / 2, box["y"] + 40
    cdp = page.context.new_cdp_session(page)
    try:
        cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x0, "y": y0}]})
        for i in range(1, 6):
            point = {"x": x0 + dx * i / 5, "y": y0 + dy * i / 5}
            cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [point]})
        cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    finally:
        cdp.detach()


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

    # A sideways swipe shows the next column, the other way the previous one; a short or slanted one nothing.
    order = [tabs.nth(i).get_attribute("data-step-id") for i in range(tabs.count())]
    review = order.index(named["Review"]["id"])
    swipe(phone, -150)
    expect(columns.filter(visible=True)).to_have_attribute("data-step-id", order[review + 1])
    expect(tabs.nth(review + 1)).to_have_attribute("aria-selected", "true")
    swipe(phone, -30)
    swipe(phone, -90, dy=80)
    expect(tabs.nth(review + 1)).to_have_attribute("aria-selected", "true")
    board_url = phone.url
    swipe(phone, 150)  # towards the previous column: the board's, not the browser's back gesture
    expect(columns.filter(visible=True)).to_have_attribute("data-step-id", order[review])
    assert phone.url == board_url
    no_horizontal_scroll(phone)

    open_app(page, kandev_server)  # a desktop: every column, no tabs
    expect(page.get_by_test_id("column").filter(visible=True)).to_have_count(len(named))
    expect(page.get_by_test_id("board-tabs")).to_be_hidden()
