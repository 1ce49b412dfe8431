"""An axe-core scan of every page of the web client, on a desktop and on a phone, in a real headless
Chromium against a real `kandev serve`: no serious or critical accessibility violation. Each page scanned is
also saved as a screenshot (desktop-*.png at 1280 px, mobile-*.png at 375 px), kept by CI as an artefact."""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import FRONTEND, SCREENSHOTS, KandevServer
from tests.browser.test_automations_ui import create_automation
from tests.browser.test_changes_panel import agent_task, comment, repository, write
from tests.browser.test_web_client import open_app, unique
from tests.support.factories import served_task

pytestmark = pytest.mark.slow

AXE = FRONTEND / "node_modules" / "axe-core" / "axe.min.js"
SCAN = """async () => {
  const result = await axe.run(document, { resultTypes: ["violations"] });
  return result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map((n) => n.target) }));
}"""
SETTINGS = (
    "workspace",
    "workflows",
    "agents",
    "executors",
    "repositories",
    "secrets",
    "connections",
    "automations",
    "tokens",
)
# Rich output with every block kind: a chart (canvas and legend), metrics and a file block.
RICH = {
    "version": 1,
    "title": "Accessible report",
    "description": "Every block kind, scanned.",
    "blocks": [
        {
            "type": "chart",
            "chart_type": "bar",
            "title": "Checks",
            "summary": "More checks passed than failed.",
            "labels": ["passed", "failed"],
            "series": [{"label": "checks", "values": [9, 1]}, {"label": "flaky", "values": [2, None]}],
        },
        {"type": "metrics", "items": [{"label": "Coverage", "value": "91 %", "detail": "up 2 points"}]},
        {"type": "file", "path": "missing.txt", "title": "Missing file"},
    ],
}
PAGES = [
    "/",
    "/tasks/{task}",
    "/tasks/{changes}",
    *(f"/settings/{section}" for section in SETTINGS),
    "/automations",
    "/automations/{automation}",
    "/automations/new",
    "/automations/describe",
    "/stats",
]
# A usage report, so the task page shows its context gauge and cost, and the Stats page has something to draw.
USAGE = {
    "tokens": {"inputTokens": 120, "outputTokens": 30, "totalTokens": 150},
    "used": 900,
    "size": 2000,
    "cost": {"amount": 0.12, "currency": "USD"},
}
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def screenshot_name(page: Any, path: str) -> str:
    """desktop-board.png, mobile-settings-secrets.png: the device by the page's width, then the page."""
    device = "mobile" if page.viewport_size["width"] < 600 else "desktop"
    named = {
        "/": "board",
        "/tasks/{task}": "task",
        "/tasks/{changes}": "changes",
        "/automations/{automation}": "automation",
    }
    slug = named.get(path) or path.strip("/").replace("/", "-")
    return f"{device}-{slug}.png"


def fresh_pngs(names: list[str], since: float) -> dict[str, str]:
    """What is wrong with each named screenshot: missing, written before `since`, empty or not a PNG."""
    problems = {}
    for name in names:
        file = SCREENSHOTS / name
        if not file.is_file():
            problems[name] = "missing"
        elif file.stat().st_mtime < since:
            problems[name] = "left over from an earlier run"
        elif not file.read_bytes().startswith(PNG_SIGNATURE) or file.stat().st_size <= len(PNG_SIGNATURE):
            problems[name] = "not a non-empty PNG"
    return problems


def serious_violations(page: Any) -> list[dict[str, Any]]:
    page.evaluate(AXE.read_text())  # through the DevTools protocol: the page's CSP allows no inline script
    return page.evaluate(SCAN)


def scan_every_page(page: Any, server: KandevServer, shots: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Each page's serious violations (none listed: none found); each page's screenshot named into `shots`."""
    from playwright.sync_api import expect

    task = served_task(server.mutate, server.workspace_id, unique("Accessible"))
    open_app(page, server, f"/tasks/{task['id']}")
    page.get_by_test_id("composer-text").fill(
        "/say An **accessible** answer with `code` and [a link](https://example.com)\n"
        f"/tool show_rich_output_kandev {json.dumps(RICH)}\n"
        f"/usage {json.dumps(USAGE)}"
    )
    page.get_by_test_id("start-task").click()
    expect(page.get_by_test_id("msg-agent")).to_contain_text("accessible answer")
    # A task in review with changes and a thread: its page opens on the Changes panel.
    repo = repository(server, Path(tempfile.mkdtemp(prefix="kandev-a11y-")), {"app.py": "a = 1\nb = 2\n"})
    changed = agent_task(server, repo, "\n".join([write("app.py", "a = 1\nb = 3\n"), write("NEW.md", "# New\n")]))
    comment(server, changed["id"], "app.py", 2, "Why **3**?")
    automation = create_automation(
        server, "/say An automation's answer", triggers=[{"type": "SCHEDULED", "expression": "@daily", "timezone": ""}]
    )
    open_app(page, server, f"/automations/{automation['id']}")
    page.get_by_test_id("run-now").click()
    expect(page.get_by_test_id("msg-agent")).to_contain_text("automation's answer")
    found = {}
    for path in PAGES:
        open_app(page, server, path.format(task=task["id"], changes=changed["id"], automation=automation["id"]))
        if path.startswith("/settings"):
            expect(page.get_by_test_id("settings")).to_be_visible()
        if path == "/tasks/{task}":  # the rich output drawn, its data table open, a file preview answered
            rich = page.get_by_test_id("msg-rich")
            expect(rich.locator("canvas")).to_have_count(1)
            rich.locator("summary", has_text="Data table").click()
            rich.get_by_role("button", name="Preview Missing file").click()
            expect(rich.get_by_test_id("rich-file-unavailable")).to_be_visible()
            expect(page.get_by_test_id("context-gauge")).to_be_visible()
        if path == "/settings/agents":
            expect(page.get_by_test_id("catalogue-entry").first).to_be_visible()
        if path == "/stats":
            expect(page.get_by_test_id("stats-page").locator("canvas").first).to_be_visible()
        if path == "/tasks/{changes}":  # the file list (on a phone: behind a button), the diff and its thread drawn
            files = page.get_by_test_id("open-file-sheet" if page.viewport_size["width"] < 600 else "file-tree")
            expect(files).to_be_visible()
            expect(page.get_by_test_id("review-thread")).to_have_count(1)
        if path == "/automations":
            expect(page.get_by_test_id("agenda-recent")).to_be_visible()
        if path == "/automations/{automation}":
            expect(page.get_by_test_id("msg-agent")).to_contain_text("automation's answer")
        found[path] = serious_violations(page)
        if page.viewport_size["width"] < 600:  # a phone: no page may scroll sideways
            wide, shown = page.evaluate(
                "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
            )
            if wide > shown:
                found[f"{path} scrolls sideways"] = [{"scrollWidth": wide, "clientWidth": shown}]
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        shots.append(screenshot_name(page, path))
        page.screenshot(path=str(SCREENSHOTS / shots[-1]), full_page=True)
        if path == "/":  # the shortcuts dialog, open over the board
            page.get_by_test_id("open-shortcuts").click()
            expect(page.get_by_test_id("shortcuts")).to_be_visible()
            found["/ with the shortcuts dialog"] = serious_violations(page)
            page.keyboard.press("Escape")
            page.get_by_role("button", name="New task").first.click()  # the form with its repository picker
            expect(page.get_by_test_id("repository-picker")).to_be_visible()
            found["/ with the new-task dialog"] = serious_violations(page)
            page.keyboard.press("Escape")
        if path == "/tasks/{changes}":  # the discard confirmation, and on a phone the file sheet
            page.get_by_test_id("discard-open").click()
            expect(page.get_by_test_id("discard-dialog")).to_be_visible()
            found[f"{path} with the discard dialog"] = serious_violations(page)
            page.keyboard.press("Escape")
            if page.viewport_size["width"] < 600:
                page.get_by_test_id("open-file-sheet").click()
                expect(page.get_by_test_id("file-sheet")).to_be_visible()
                found[f"{path} with the file sheet"] = serious_violations(page)
                page.keyboard.press("Escape")
    return {path: violations for path, violations in found.items() if violations}


def test_no_page_has_a_serious_accessibility_violation_on_a_desktop_and_each_is_saved_as_a_screenshot(
    page: Any, kandev_server: KandevServer
) -> None:
    since, shots = time.time() - 1, []
    assert scan_every_page(page, kandev_server, shots) == {}
    assert len(shots) == len(PAGES) and all(s.startswith("desktop-") for s in shots)
    assert fresh_pngs(shots, since) == {}


def test_no_page_has_a_serious_accessibility_violation_on_a_phone_and_each_is_saved_as_a_screenshot(
    phone: Any, kandev_server: KandevServer
) -> None:
    since, shots = time.time() - 1, []
    assert scan_every_page(phone, kandev_server, shots) == {}
    assert len(shots) == len(PAGES) and all(s.startswith("mobile-") for s in shots)
    assert fresh_pngs(shots, since) == {}


def test_the_screenshot_check_refuses_a_missing_an_empty_and_a_non_png_file() -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    since = time.time() - 1
    (SCREENSHOTS / "probe-empty.png").write_bytes(b"")
    (SCREENSHOTS / "probe-text.png").write_bytes(b"not an image")
    try:
        problems = fresh_pngs(["probe-missing.png", "probe-empty.png", "probe-text.png"], since)
    finally:
        (SCREENSHOTS / "probe-empty.png").unlink()
        (SCREENSHOTS / "probe-text.png").unlink()
    assert problems == {
        "probe-missing.png": "missing",
        "probe-empty.png": "not a non-empty PNG",
        "probe-text.png": "not a non-empty PNG",
    }


def test_the_scan_finds_a_violation_when_there_is_one(page: Any, kandev_server: KandevServer) -> None:
    open_app(page, kandev_server)
    page.evaluate("() => document.body.insertAdjacentHTML('beforeend', '<button data-probe></button>')")
    assert [v["id"] for v in serious_violations(page)] == ["button-name"]
