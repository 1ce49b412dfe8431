"""A transcript a person can read, in a real headless Chromium against a real `kandev serve`: agent text as
Markdown with no way to run a script (raw HTML dropped, only http(s)/mailto links, a CSP without inline
scripts), one message per `/say`, tool calls that expand to their arguments, and a marker where a stop
cut a turn short."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.browser.conftest import KandevServer
from tests.browser.test_web_client import open_app, unique
from tests.support.factories import served_task

pytestmark = pytest.mark.slow

HOSTILE = (
    "/say Use **bold** and `code` with [the docs](https://example.com/docs) "
    '<img src=x onerror="window.__pwned = 1"> and [click me](javascript:window.__pwned=2) '
    "![tracker](https://example.com/pixel.png)"
)


def start(page: Any, server: KandevServer, prompt: str) -> Any:
    task = served_task(server.mutate, server.workspace_id, unique("Transcript"))
    open_app(page, server, f"/tasks/{task['id']}")
    page.get_by_test_id("composer-text").fill(prompt)
    page.get_by_test_id("start-task").click()
    return page.get_by_test_id("transcript")


def test_the_web_client_is_served_with_a_content_security_policy_that_allows_no_inline_script(
    kandev_server: KandevServer,
) -> None:
    for path in ("/", "/tasks/some-task"):
        response = httpx.get(kandev_server.base + path, timeout=10)
        policy = dict(part.strip().split(" ", 1) for part in response.headers["content-security-policy"].split(";"))
        assert policy["script-src"] == "'self'" and policy["object-src"] == "'none'"
        assert policy["frame-ancestors"] == "'none'" and response.headers["x-content-type-options"] == "nosniff"
    assert "<script>" not in httpx.get(kandev_server.base + "/", timeout=10).text  # nothing inline to allow


def test_agent_markdown_renders_and_its_html_and_javascript_links_run_nothing(
    page: Any, kandev_server: KandevServer
) -> None:
    from playwright.sync_api import expect

    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    transcript = start(page, kandev_server, HOSTILE)
    message = transcript.get_by_test_id("msg-agent")
    expect(message.locator("strong")).to_have_text("bold")
    expect(message.locator("code")).to_have_text("code")
    docs = message.get_by_role("link", name="the docs")
    expect(docs).to_have_attribute("href", "https://example.com/docs")
    expect(docs).to_have_attribute("rel", "noopener noreferrer")
    expect(docs).to_have_attribute("target", "_blank")
    expect(message.locator(".md-link-dropped", has_text="click me")).to_be_visible()
    assert message.locator("a[href^='javascript']").count() == 0
    assert transcript.locator("img").count() == 0  # neither the raw <img> nor the Markdown image is loaded
    expect(message.get_by_role("link", name="image: tracker")).to_have_attribute(
        "href", "https://example.com/pixel.png"
    )
    message.locator(".md-link-dropped", has_text="click me").click()
    assert page.evaluate("() => window.__pwned") is None and dialogs == []


def test_two_say_lines_are_two_messages_and_a_tool_call_expands_to_its_arguments(
    page: Any, kandev_server: KandevServer
) -> None:
    from playwright.sync_api import expect

    arguments = {"workspace_id": kandev_server.workspace_id}
    transcript = start(page, kandev_server, f"/say first\n/say second\n/tool list_tasks_kandev {json.dumps(arguments)}")
    expect(transcript.get_by_test_id("msg-agent")).to_have_count(2)
    expect(transcript.get_by_test_id("msg-agent").nth(0)).to_have_text("first")
    expect(transcript.get_by_test_id("msg-agent").nth(1)).to_have_text("second")
    tool = transcript.get_by_test_id("msg-tool")
    expect(tool).to_contain_text("Done")
    body = tool.locator(".tool-body")
    expect(body).to_be_hidden()
    tool.locator("summary").click()
    expect(body).to_be_visible()
    expect(body.locator("pre").first).to_contain_text(kandev_server.workspace_id)
    expect(body.locator("pre").nth(1)).to_contain_text('"tasks"')


def test_stopping_a_running_turn_leaves_a_marker_in_the_transcript(page: Any, kandev_server: KandevServer) -> None:
    from playwright.sync_api import expect

    transcript = start(page, kandev_server, "/say working on it\n/sleep 60")
    expect(transcript.get_by_test_id("msg-agent")).to_have_text("working on it")
    page.get_by_test_id("stop-task").click()
    marker = transcript.get_by_test_id("msg-system")
    expect(marker).to_contain_text("Stopped by")
    expect(marker).to_have_attribute("role", "separator")


def test_a_failed_turn_shows_its_error_and_what_to_do_next(page: Any, kandev_server: KandevServer) -> None:
    from playwright.sync_api import expect

    start(page, kandev_server, "/fail Set ANTHROPIC_API_KEY as a secret on this profile")
    banner = page.get_by_test_id("turn-error")
    expect(banner).to_contain_text("The last turn failed:")
    expect(banner).to_contain_text("Set ANTHROPIC_API_KEY as a secret on this profile")
    expect(banner).to_have_attribute("role", "alert")


START = """mutation($i: StartTaskInput!) { startTask(input: $i) { __typename ... on Error { message }
    ... on StartTaskPayload { session { id } } } }"""
SESSION_STATE = "query($id: ID!) { session(id: $id) { state } }"


def test_a_long_transcript_opens_on_its_newest_page_and_loads_earlier_ones_as_the_reader_scrolls_up(
    page: Any, kandev_server: KandevServer
) -> None:
    from playwright.sync_api import expect

    task = served_task(kandev_server.mutate, kandev_server.workspace_id, unique("Long transcript"))
    lines = "\n".join(f"/say line {n}" for n in range(1, 251))
    started = kandev_server.mutate(START, "startTask", i={"taskId": task["id"], "prompt": lines})
    session_id = started["session"]["id"]
    kandev_server.wait_for(SESSION_STATE, lambda d: d["session"]["state"] == "WAITING_FOR_INPUT", id=session_id)

    open_app(page, kandev_server, f"/tasks/{task['id']}")
    transcript = page.get_by_test_id("transcript")
    agent = transcript.get_by_test_id("msg-agent")
    expect(agent).to_have_count(100)  # the newest page: lines 151-250
    expect(agent.last).to_have_text("line 250")
    expect(agent.first).to_have_text("line 151")
    transcript.get_by_test_id("load-older").click()  # one page before, the reader's place kept
    expect(agent).to_have_count(200)
    expect(agent.first).to_have_text("line 51")
    assert transcript.evaluate("el => el.scrollTop") > 0
    transcript.get_by_test_id("load-older").click()
    expect(agent).to_have_count(250)
    expect(transcript.get_by_test_id("msg-user")).to_have_count(1)
    expect(transcript.get_by_test_id("load-older")).to_have_count(0)
    texts = agent.all_text_contents()  # off-screen messages skip rendering (content-visibility), not their text
    assert texts == [f"line {n}" for n in range(1, 251)]
