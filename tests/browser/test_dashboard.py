"""`kandev dashboard` in headless Chromium: its pages run under the guard's Content-Security-Policy and list a
served turn by its task id and title (markup in the title shown as text, never run)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.browser.conftest import SCREENSHOTS, serve
from tests.integration.test_dashboard import running, start_turn, wait_answering, wait_for_job
from tests.support.server import free_port


def test_the_dashboard_page_lists_a_served_turn_by_task_id_and_title(page: Any, web_client: Path) -> None:
    from playwright.sync_api import expect

    with serve("dashboard-serve.log", KANDEV_EMBEDDED_REDIS_PORT=str(free_port())) as (base, env):
        task_id, _ = start_turn(base, "Render <i>this</i> title", "/say rendered")
        port = free_port()
        dashboard = f"http://127.0.0.1:{port}"
        dashboard_env = {k: v for k, v in env.items() if k != "KANDEV_EMBEDDED_REDIS_PORT"}
        with running(["dashboard", "--port", str(port)], dashboard_env) as process:
            wait_answering(dashboard, process)
            wait_for_job(dashboard, "finished", f"task={task_id}")
            page.goto(f"{dashboard}/0/view/jobs/kandev-turns/finished/50/asc/1")
            row = page.locator("span.description", has_text=f"task={task_id}").first
            expect(row).to_contain_text("«Render ‹i›this‹/i› title»")
            assert page.locator("i", has_text="this").count() == 0, "the title's markup must not render"
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SCREENSHOTS / "dashboard.png"))
