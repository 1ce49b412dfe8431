"""Attachments in a real headless Chromium against a real `kandev serve`: files added to the composer by the file
picker, by pasting and by dropping, uploaded and sent with the message, then shown in the transcript as image
thumbnails and file chips; a new task's files go with its first prompt; an SVG is never shown as an image."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.browser.conftest import KandevServer
from tests.browser.test_web_client import open_app, unique
from tests.support.attachments import NOTES, SVG, png
from tests.support.factories import served_task

pytestmark = pytest.mark.slow

ADD_FILE = """([kind, name, type, data]) => {
  const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
  const transfer = new DataTransfer();
  transfer.items.add(new File([bytes], name, { type }));
  const box = document.querySelector('[data-testid="composer-text"]');
  const event = kind === "paste"
    ? new ClipboardEvent("paste", { clipboardData: transfer, bubbles: true, cancelable: true })
    : new DragEvent("drop", { dataTransfer: transfer, bubbles: true, cancelable: true });
  box.dispatchEvent(event);
}"""


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def task_with_session(page: Any, server: KandevServer) -> Any:
    from playwright.sync_api import expect

    task = served_task(server.mutate, server.workspace_id, unique("Attach"))
    open_app(page, server, f"/tasks/{task['id']}")
    page.get_by_test_id("composer-text").fill("/say ready")
    page.get_by_test_id("start-task").click()
    transcript = page.get_by_test_id("transcript")
    expect(transcript.get_by_test_id("msg-agent")).to_have_text("ready")
    return transcript


def test_files_picked_pasted_and_dropped_go_with_the_message_and_show_as_thumbnails_and_chips(
    page: Any, kandev_server: KandevServer, screenshots: Path, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    transcript = task_with_session(page, kandev_server)
    picked = tmp_path / "notes.md"
    picked.write_bytes(NOTES)
    page.get_by_test_id("attach-input").set_input_files(str(picked))
    page.evaluate(ADD_FILE, ["paste", "screenshot.png", "image/png", b64(png(6, 4, (20, 120, 220)))])
    page.evaluate(ADD_FILE, ["drop", "diagram.svg", "image/svg+xml", b64(SVG)])
    pending = page.get_by_test_id("pending-attachment")
    expect(pending).to_have_count(3)
    for name in ("notes.md", "screenshot.png", "diagram.svg"):
        expect(pending.filter(has_text=name)).not_to_contain_text("uploading")
    page.screenshot(path=str(screenshots / "desktop-composer-attachments.png"))
    page.get_by_test_id("composer-text").fill("/say got three files")
    page.get_by_test_id("send-message").click()
    expect(page.get_by_test_id("pending-attachment")).to_have_count(0)
    user = transcript.get_by_test_id("msg-user").filter(has_text="got three files")
    thumbnail = user.get_by_test_id("attachment-thumbnail")
    expect(thumbnail).to_have_count(1)
    expect(thumbnail.locator("img")).to_have_attribute("src", _blob())
    assert thumbnail.locator("img").evaluate("(img) => img.complete && img.naturalWidth") == 6
    files = user.get_by_test_id("attachment-file")
    expect(files).to_have_count(2)
    expect(files.filter(has_text="notes.md")).to_be_visible()
    expect(files.filter(has_text="diagram.svg")).to_be_visible()  # a chip, never rendered as an image
    expect(transcript.get_by_test_id("msg-agent").filter(has_text="got three files")).to_be_visible()
    page.screenshot(path=str(screenshots / "desktop-transcript-attachments.png"))


def test_a_file_the_server_refuses_shows_its_reason_and_blocks_sending_until_removed(
    page: Any, kandev_server: KandevServer
) -> None:
    from playwright.sync_api import expect

    task_with_session(page, kandev_server)
    page.evaluate(ADD_FILE, ["drop", "fake.png", "image/png", b64(b"MZ this is no image at all")])
    chip = page.get_by_test_id("pending-attachment")
    expect(chip).to_contain_text("not the image/png it was sent as")
    page.get_by_test_id("composer-text").fill("/say never")
    page.get_by_test_id("send-message").click()
    expect(page.get_by_test_id("composer")).to_contain_text("Remove the files that could not be attached first")
    chip.get_by_role("button", name="Remove fake.png").click()
    expect(chip).to_have_count(0)


def test_a_new_tasks_file_goes_with_its_first_prompt(page: Any, kandev_server: KandevServer, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    title = unique("With a screenshot")
    open_app(page, kandev_server, "/")
    page.get_by_test_id("new-task").click()
    dialog = page.get_by_test_id("new-task-dialog")
    dialog.locator("input[name=title]").fill(title)
    dialog.locator("textarea[name=prompt]").fill("/say looked at it")
    shot = tmp_path / "bug.png"
    shot.write_bytes(png(3, 3))
    dialog.get_by_test_id("attach-input").set_input_files(str(shot))
    expect(dialog.get_by_test_id("pending-attachment")).not_to_contain_text("uploading")
    dialog.get_by_test_id("create-task-submit").click()
    data = kandev_server.wait_for(
        """query($w: ID!) { tasks(workspaceId: $w, first: 50) { nodes { id title sessions { messages(first: 10) {
          nodes { kind attachments { name contentType url } } } } } } }""",
        lambda d: any(t["title"] == title and _said(t, "USER") for t in d["tasks"]["nodes"]),
        w=kandev_server.workspace_id,
    )
    [task] = [t for t in data["tasks"]["nodes"] if t["title"] == title]
    [user] = [m for m in task["sessions"][0]["messages"]["nodes"] if m["kind"] == "USER"]
    assert [(a["name"], a["contentType"]) for a in user["attachments"]] == [("bug.png", "image/png")]
    served = httpx.get(kandev_server.base + user["attachments"][0]["url"], timeout=10)
    assert served.content == png(3, 3) and "sandbox" in served.headers["content-security-policy"]


def _said(task: dict[str, Any], kind: str) -> bool:
    """Its first session has a message of `kind` (a worker claimed the turn and wrote its prompt)."""
    return bool(task["sessions"]) and any(m["kind"] == kind for m in task["sessions"][0]["messages"]["nodes"])


def _blob() -> Any:
    import re

    return re.compile(r"^blob:")
