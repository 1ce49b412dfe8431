"""'Describe an automation' in a real headless Chromium with the built-in authoring agent (a real ACP process,
no model): it asks, shows what it captured with a confirmation card, creates the automation after the yes; and
when it cannot, it hands over to the form, filled in with what it captured."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import KandevServer
from tests.browser.test_accessibility import serious_violations
from tests.browser.test_web_client import no_horizontal_scroll, open_app, unique

pytestmark = pytest.mark.slow

AUTOMATIONS = (
    "query($w: ID!) { automations(workspaceId: $w) "
    "{ id name prompt createdVia triggers { type expression timezone } } }"
)


def automations(server: KandevServer) -> list[dict[str, Any]]:
    return server.gql(AUTOMATIONS, w=server.workspace_id)["automations"]


def begin(page: Any, server: KandevServer, prompt: str) -> Any:
    from playwright.sync_api import expect

    open_app(page, server, "/automations/describe")
    page.get_by_test_id("authoring-prompt").fill(prompt)
    page.get_by_test_id("authoring-begin").click()
    chat = page.get_by_test_id("authoring-chat")
    expect(chat).to_be_visible()
    return chat


def reply(page: Any, text: str, answers: int) -> None:
    from playwright.sync_api import expect

    page.get_by_test_id("authoring-reply").fill(text)
    page.get_by_test_id("authoring-send").click()
    expect(page.get_by_test_id("msg-agent")).to_have_count(answers, timeout=30_000)


def test_an_automation_described_in_chat_is_confirmed_on_its_card_created_and_linked_to_its_page(
    page: Any, kandev_server: KandevServer, screenshots: Path
) -> None:
    from playwright.sync_api import expect

    what = unique("summarise the merged pull requests")
    chat = begin(page, kandev_server, what)
    expect(page.get_by_test_id("msg-agent").first).to_contain_text("When should it run?", timeout=30_000)
    reply(page, "every weekday at 9 in Europe/Berlin", 2)
    expect(chat).to_have_attribute("data-state", "CONFIRMING")
    card = page.get_by_test_id("authoring-draft")
    expect(card.get_by_test_id("draft-prompt")).to_have_text(what)
    expect(card.get_by_test_id("draft-when")).to_have_text("0 9 * * 1-5 (Europe/Berlin)")
    assert [a for a in automations(kandev_server) if a["prompt"] == what] == []  # nothing before the yes
    assert serious_violations(page) == []
    page.screenshot(path=str(screenshots / "desktop-authoring-chat.png"), full_page=True)

    card.get_by_test_id("authoring-yes").click()
    expect(page.get_by_test_id("authoring-confirmed")).to_be_visible(timeout=30_000)
    made = kandev_server.wait_for(
        AUTOMATIONS, lambda d: any(a["prompt"] == what for a in d["automations"]), w=kandev_server.workspace_id
    )
    [automation] = [a for a in made["automations"] if a["prompt"] == what]
    assert automation["createdVia"] == "CHAT"
    assert automation["triggers"] == [{"type": "SCHEDULED", "expression": "0 9 * * 1-5", "timezone": "Europe/Berlin"}]
    # The confirmation card's deep link (FR-015) opens the new automation's own page.
    page.get_by_test_id("authoring-open-automation").click()
    expect(page).to_have_url(re.compile(rf"/automations/{automation['id']}$"))
    expect(page.get_by_test_id("automation-page")).to_have_attribute("data-automation-id", automation["id"])


def test_a_chat_that_hands_over_opens_the_form_filled_in_with_what_it_captured(
    page: Any, kandev_server: KandevServer
) -> None:
    from playwright.sync_api import expect

    last = unique("still thinking")
    chat = begin(page, kandev_server, "hmm")
    expect(page.get_by_test_id("msg-agent")).to_have_count(1, timeout=30_000)
    for n, text in enumerate(("not sure", "something useful", "whatever", last), start=2):
        reply(page, text, n)
    expect(chat).to_have_attribute("data-state", "HANDED_OFF")
    expect(page.get_by_test_id("authoring-reply")).to_have_count(0)
    page.get_by_test_id("authoring-handed-off").get_by_role("link").click()

    form = page.get_by_test_id("automation-form")
    expect(form.get_by_test_id("automation-prompt")).to_have_value(last)
    expect(form.get_by_test_id("automation-name")).to_have_value(last.capitalize())
    form.get_by_test_id("save-automation").click()
    expect(page).to_have_url(re.compile(r"/automations/[^/]+/edit$"))
    [automation] = [a for a in automations(kandev_server) if a["prompt"] == last]
    assert automation["createdVia"] == "FORM"


def test_describing_an_automation_fits_a_phone(phone: Any, kandev_server: KandevServer) -> None:
    from playwright.sync_api import expect

    begin(phone, kandev_server, unique("summarise the merged pull requests"))
    expect(phone.get_by_test_id("msg-agent").first).to_be_visible(timeout=30_000)
    no_horizontal_scroll(phone)
    assert serious_violations(phone) == []
