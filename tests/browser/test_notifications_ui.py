"""Notifications in a real headless Chromium against a real `kandev serve`: a channel added in Settings →
Notifications reaches a local webhook receiver with Send test, a down target shows why it failed, and the
browser shows a notification (Notification API, permission granted) when an agent asks for permission or asks a
question, when a turn fails and when a task reaches review, with a sound only while a person has it on; the
browser's permission is asked once."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import DESKTOP, UI_TIMEOUT_MS, KandevServer, _new_page
from tests.browser.test_web_client import open_app, unique
from tests.support.factories import served_task
from tests.support.fake_webhook import fake_webhook

pytestmark = pytest.mark.slow

# The page's notifications, recorded as they are shown (the real constructor still runs).
RECORD_NOTIFICATIONS = """(() => {
  const Real = window.Notification;
  window.__notifications = [];
  class Recorded extends Real {
    constructor(title, options) {
      super(title, options);
      window.__notifications.push({ title, body: options && options.body, tag: options && options.tag });
    }
  }
  Object.defineProperty(window, "Notification", { value: Recorded });
  window.__tones = 0;  // the optional sound: a tone started per notification
  const start = OscillatorNode.prototype.start;
  OscillatorNode.prototype.start = function (...args) {
    window.__tones += 1;
    return start.apply(this, args);
  };
})()"""


@pytest.fixture
def notifying_page(browser: Any) -> Iterator[Any]:
    """A desktop page whose site may notify (as after a person allowed it), recording what it shows."""
    yield from _new_page(browser, init_script=RECORD_NOTIFICATIONS, viewport=DESKTOP, permissions=["notifications"])


def add_channel(page: Any, name: str, url: str) -> Any:
    from playwright.sync_api import expect

    page.get_by_test_id("channel-name").fill(name)
    page.get_by_test_id("channel-url").fill(url)
    page.get_by_test_id("add-channel").click()
    row = page.locator(f'[data-testid="notification-channel"][data-name="{name}"]')
    expect(row).to_be_visible()
    return row


def test_a_channel_added_in_settings_reaches_a_webhook_with_send_test_and_a_down_one_shows_why(
    page: Any, kandev_server: KandevServer, screenshots: Path
) -> None:
    from playwright.sync_api import expect

    with fake_webhook() as receiver, fake_webhook(status=500) as down:
        open_app(page, kandev_server, "/settings/notifications")
        good = add_channel(page, unique("Team hook"), receiver.url("/kandev/t0k3n"))
        expect(good.get_by_test_id("channel-status")).to_contain_text("Not tried yet")
        good.get_by_test_id("test-channel").click()
        expect(good.get_by_test_id("channel-test-result")).to_have_text("Test notification delivered.")
        expect(good.get_by_test_id("channel-status")).to_contain_text("Working")
        [request] = receiver.wait_for(1)
        assert request.path == "/kandev/t0k3n" and request.body["title"] == "Kandev test notification"
        assert "t0k3n" not in page.content()  # the URL is never read back
        bad = add_channel(page, unique("Broken hook"), down.url())
        bad.get_by_test_id("test-channel").click()
        expect(bad.get_by_test_id("channel-test-result")).to_contain_text("Not delivered")
        expect(bad).to_have_attribute("data-status", "FAILING")
        expect(bad.get_by_test_id("channel-last-error")).to_contain_text("500")
        page.screenshot(path=str(screenshots / "desktop-settings-notifications.png"))
        page.get_by_test_id("channel-url").fill("json://")
        page.get_by_test_id("channel-name").fill("Nothing")
        page.get_by_test_id("add-channel").click()
        expect(page.get_by_test_id("channel-error")).to_contain_text("not a notification URL")


def test_the_browser_notifies_when_an_agent_asks_a_person_for_permission(
    notifying_page: Any, kandev_server: KandevServer
) -> None:
    page = notifying_page
    profile = kandev_server.mutate(
        """mutation($i: CreateAgentProfileInput!) { createAgentProfile(input: $i) {
          __typename ... on CreateAgentProfilePayload { agentProfile { id } } } }""",
        "createAgentProfile",
        i={
            "workspaceId": kandev_server.workspace_id,
            "name": unique("Asks"),
            "kind": "SCRIPTED",
            "permissionPolicy": "ASK",
        },
    )["agentProfile"]
    open_app(page, kandev_server, "/")
    title = unique("Deploy")
    task = served_task(kandev_server.mutate, kandev_server.workspace_id, title)
    kandev_server.mutate(
        "mutation($i: StartTaskInput!) { startTask(input: $i) { __typename } }",
        "startTask",
        i={"taskId": task["id"], "prompt": "/permission deploy to production", "agentProfileId": profile["id"]},
    )
    page.wait_for_function(
        "(t) => window.__notifications.some((n) => n.title === t)", arg=f"{title} needs you", timeout=UI_TIMEOUT_MS * 2
    )
    [shown] = [n for n in page.evaluate("() => window.__notifications") if n["title"] == f"{title} needs you"]
    assert shown["body"] == "The agent asks for permission."


def test_the_browser_notifies_when_an_agent_asks_a_person_a_question(
    notifying_page: Any, kandev_server: KandevServer
) -> None:
    page = notifying_page
    open_app(page, kandev_server, "/")
    title = unique("Which")
    task = served_task(kandev_server.mutate, kandev_server.workspace_id, title)
    question = {"questions": [{"prompt": "Which database?", "options": [{"label": "sqlite"}, {"label": "pg"}]}]}
    kandev_server.mutate(
        "mutation($i: StartTaskInput!) { startTask(input: $i) { __typename } }",
        "startTask",
        i={"taskId": task["id"], "prompt": f"/tool ask_user_question_kandev {json.dumps(question)}"},
    )
    page.wait_for_function(
        "(t) => window.__notifications.some((n) => n.title === t)", arg=f"{title} needs you", timeout=UI_TIMEOUT_MS * 2
    )
    [shown] = [n for n in page.evaluate("() => window.__notifications") if n["title"] == f"{title} needs you"]
    assert shown["body"] == "The agent asks a question."


# A browser that has not been asked yet: the page's permission requests are counted, and the person says no.
COUNT_PERMISSION_REQUESTS = """(() => {
  window.__asked = Number(localStorage.getItem("test.asked") || 0);
  class Unasked {
    static permission = "default";
    static requestPermission() {
      window.__asked += 1;
      localStorage.setItem("test.asked", String(window.__asked));
      return Promise.resolve("default");  // dismissed: the browser itself would ask again
    }
  }
  Object.defineProperty(window, "Notification", { value: Unasked });
})()"""


@pytest.fixture
def unasked_page(browser: Any) -> Iterator[Any]:
    yield from _new_page(browser, init_script=COUNT_PERMISSION_REQUESTS, viewport=DESKTOP)


def test_the_browser_is_asked_for_notifications_once_on_the_first_prompt_and_never_again(
    unasked_page: Any, kandev_server: KandevServer
) -> None:
    from playwright.sync_api import expect

    page = unasked_page
    task = served_task(kandev_server.mutate, kandev_server.workspace_id, unique("Ask once"))
    open_app(page, kandev_server, f"/tasks/{task['id']}")
    assert page.evaluate("() => window.__asked") == 0  # nothing asked before a person acts
    page.get_by_test_id("composer-text").fill("/say one")
    page.get_by_test_id("start-task").click()
    transcript = page.get_by_test_id("transcript")
    expect(transcript.get_by_test_id("msg-agent").filter(has_text="one")).to_be_visible()
    assert page.evaluate("() => window.__asked") == 1
    page.reload()
    page.get_by_test_id("composer-text").fill("/say two")
    page.get_by_test_id("send-message").click()
    expect(transcript.get_by_test_id("msg-agent").filter(has_text="two")).to_be_visible()
    assert page.evaluate("() => window.__asked") == 1  # dismissed or not, it is never asked again


def test_the_browser_notifies_when_a_turn_fails_and_when_a_task_reaches_review(
    notifying_page: Any, kandev_server: KandevServer
) -> None:
    from playwright.sync_api import expect

    page = notifying_page
    open_app(page, kandev_server, "/settings/notifications")
    enabled = page.get_by_test_id("browser-notifications-enabled")
    expect(enabled).to_be_checked()  # allowed by the person (the context's permission), on by default
    sound = page.get_by_test_id("browser-notifications-sound")
    expect(sound).not_to_be_checked()  # off unless a person turns it on
    sound.check()
    title = unique("Notify me")
    task = served_task(kandev_server.mutate, kandev_server.workspace_id, title)
    page.get_by_test_id("settings-tab-workspace").click()  # any page: the tab listens to its workspace's tasks
    kandev_server.mutate(
        "mutation($i: StartTaskInput!) { startTask(input: $i) { __typename } }",
        "startTask",
        i={"taskId": task["id"], "prompt": "/fail the build broke"},
    )
    page.wait_for_function(
        "(t) => window.__notifications.some((n) => n.title === t)",
        arg=f"{title}: a turn failed",
        timeout=UI_TIMEOUT_MS * 2,
    )
    assert page.evaluate("() => window.__tones") == 1
    page.get_by_test_id("settings-tab-notifications").click()
    page.get_by_test_id("browser-notifications-sound").uncheck()
    kandev_server.mutate(
        "mutation($i: SendMessageInput!) { sendMessage(input: $i) { __typename } }",
        "sendMessage",
        i={"taskId": task["id"], "prompt": "/say fixed"},
    )
    page.wait_for_function(
        "(t) => window.__notifications.some((n) => n.title === t)",
        arg=f"{title} is ready for review",
        timeout=UI_TIMEOUT_MS * 2,
    )
    assert page.evaluate("() => window.__tones") == 1  # the sound was turned off again
    shown = page.evaluate("() => window.__notifications")
    mine = [n for n in shown if n["title"].startswith(title)]
    assert [n["title"] for n in mine] == [f"{title}: a turn failed", f"{title} is ready for review"]
    assert all(n["tag"].startswith(f"kandev-{task['id']}-") for n in mine)
