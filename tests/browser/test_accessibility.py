"""An axe-core scan of every page of the web client, on a desktop and on a phone, in a real headless
Chromium against a real `kandev serve`: no serious or critical accessibility violation."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.conftest import FRONTEND, KandevServer
from tests.browser.test_automations_ui import create_automation
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
SETTINGS = ("workspace", "workflows", "agents", "executors", "repositories", "secrets", "tokens")
PAGES = [
    "/",
    "/tasks/{task}",
    *(f"/settings/{section}" for section in SETTINGS),
    "/automations",
    "/automations/{automation}",
]


def serious_violations(page: Any) -> list[dict[str, Any]]:
    page.evaluate(AXE.read_text())  # through the DevTools protocol: the page's CSP allows no inline script
    return page.evaluate(SCAN)


def scan_every_page(page: Any, server: KandevServer) -> dict[str, list[dict[str, Any]]]:
    from playwright.sync_api import expect

    task = served_task(server.mutate, server.workspace_id, unique("Accessible"))
    open_app(page, server, f"/tasks/{task['id']}")
    page.get_by_test_id("composer-text").fill(
        "/say An **accessible** answer with `code` and [a link](https://example.com)"
    )
    page.get_by_test_id("start-task").click()
    expect(page.get_by_test_id("msg-agent")).to_contain_text("accessible answer")
    automation = create_automation(
        server, "/say An automation's answer", triggers=[{"type": "SCHEDULED", "expression": "@daily", "timezone": ""}]
    )
    open_app(page, server, f"/automations/{automation['id']}")
    page.get_by_test_id("run-now").click()
    expect(page.get_by_test_id("msg-agent")).to_contain_text("automation's answer")
    found = {}
    for path in PAGES:
        open_app(page, server, path.format(task=task["id"], automation=automation["id"]))
        if path.startswith("/settings"):
            expect(page.get_by_test_id("settings")).to_be_visible()
        if path == "/automations":
            expect(page.get_by_test_id("agenda-recent")).to_be_visible()
        if path.startswith("/automations/"):
            expect(page.get_by_test_id("msg-agent")).to_contain_text("automation's answer")
        found[path] = serious_violations(page)
    return {path: violations for path, violations in found.items() if violations}


def test_no_page_has_a_serious_accessibility_violation_on_a_desktop(page: Any, kandev_server: KandevServer) -> None:
    assert scan_every_page(page, kandev_server) == {}


def test_no_page_has_a_serious_accessibility_violation_on_a_phone(phone: Any, kandev_server: KandevServer) -> None:
    assert scan_every_page(phone, kandev_server) == {}


def test_the_scan_finds_a_violation_when_there_is_one(page: Any, kandev_server: KandevServer) -> None:
    open_app(page, kandev_server)
    page.evaluate("() => document.body.insertAdjacentHTML('beforeend', '<button data-probe></button>')")
    assert [v["id"] for v in serious_violations(page)] == ["button-name"]
