"""The automation pages in a real headless Chromium against a real `kandev serve` (its embedded worker runs
the runs): the sidebar list with a health text, the /automations agenda with a live countdown and every
automation's runs, and /automations/<id>, where Run now streams the run's transcript, a reply reaches the
same conversation, Stop current run cancels the open run, Export downloads the workspace's automations,
and the ack badge re-checks. A webhook delivered over HTTP shows in the open agenda without a reload, and
the older /runs links land on the agenda and the run's automation."""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.browser.conftest import KandevServer
from tests.browser.test_web_client import no_horizontal_scroll, open_app, unique

pytestmark = pytest.mark.slow

ERRORS = "__typename ... on Error { code message }"
CREATE = f"""mutation($i: CreateAutomationInput!) {{ createAutomation(input: $i) {{ {ERRORS}
    ... on AutomationPayload {{ webhookSecret automation {{ id name }} }} }} }}"""
PROFILES = "query($w: ID!) { agentProfiles(workspaceId: $w) { id kind } }"
RUNS = "query($id: ID!) { automationRuns(automationId: $id) { nodes { id status taskId triggerType } } }"
ACK = "query($id: ID!) { automation(id: $id) { lastAck { status ackedAt } } }"


def scripted_profile(server: KandevServer) -> str:
    profiles = server.gql(PROFILES, w=server.workspace_id)["agentProfiles"]
    return next(p["id"] for p in profiles if p["kind"] == "SCRIPTED")


def create_automation(server: KandevServer, prompt: str, **fields: Any) -> dict[str, Any]:
    """An automation of the test workspace run by the scripted agent: its id, name and webhook secret."""
    name = unique("Automation")
    payload = server.mutate(
        CREATE,
        "createAutomation",
        i={
            "workspaceId": server.workspace_id,
            "name": name,
            "prompt": prompt,
            "agentProfileId": scripted_profile(server),
            **fields,
        },
    )
    return {**payload["automation"], "secret": payload["webhookSecret"]}


def runs_of(server: KandevServer, automation_id: str) -> list[dict[str, Any]]:
    return server.gql(RUNS, id=automation_id)["automationRuns"]["nodes"]


def settled_ack(server: KandevServer, automation_id: str) -> dict[str, Any]:
    data = server.wait_for(
        ACK, lambda d: (d["automation"]["lastAck"] or {}).get("status") not in (None, "PENDING"), id=automation_id
    )
    return data["automation"]["lastAck"]


def test_a_new_automation_shows_live_in_the_sidebar_with_its_health_in_words_and_in_the_agenda_with_a_countdown(
    page: Any, kandev_server: KandevServer, screenshots: Path
) -> None:
    from playwright.sync_api import expect

    open_app(page, kandev_server, "/automations")
    expect(page.get_by_test_id("agenda")).to_be_visible()
    automation = create_automation(
        kandev_server, "/say hourly check", triggers=[{"type": "SCHEDULED", "expression": "@hourly", "timezone": ""}]
    )

    row = page.locator(f"[data-testid=automation-row][data-automation-id='{automation['id']}']")
    expect(row).to_contain_text(automation["name"])
    expect(row.get_by_test_id("automation-health")).to_have_text(re.compile(r"\S"))  # a text, not only a colour
    upcoming = page.locator(f"[data-testid=agenda-next][data-automation-id='{automation['id']}']")
    expect(upcoming).to_contain_text(automation["name"])
    expect(upcoming.get_by_test_id("countdown")).to_have_text(re.compile(r"^in \d+ (s|min)$"))
    page.screenshot(path=str(screenshots / "automations-agenda-desktop.png"), full_page=True)


def test_the_ack_badge_shows_the_stored_verdict_and_re_ack_checks_again_live(
    page: Any, kandev_server: KandevServer
) -> None:
    from playwright.sync_api import expect

    automation = create_automation(kandev_server, "/say checked")
    before = settled_ack(kandev_server, automation["id"])
    open_app(page, kandev_server, f"/automations/{automation['id']}")
    badge = page.get_by_test_id("ack-badge")
    expect(badge).to_have_attribute("data-status", before["status"])
    expect(badge).to_have_text({"OK": "Ack OK", "WARN": "Ack warn", "FAILED": "Ack failed"}[before["status"]])

    page.get_by_test_id("reack").click()
    after = kandev_server.wait_for(
        ACK,
        lambda d: (
            (d["automation"]["lastAck"] or {}).get("status") != "PENDING"
            and d["automation"]["lastAck"]["ackedAt"] != before["ackedAt"]
        ),
        id=automation["id"],
    )["automation"]["lastAck"]
    expect(badge).to_have_attribute("data-status", after["status"])
    expect(page.get_by_test_id("reack")).to_be_enabled()


def test_run_now_streams_the_run_under_its_title_and_a_reply_continues_the_same_conversation(
    page: Any, kandev_server: KandevServer, screenshots: Path
) -> None:
    from playwright.sync_api import expect

    automation = create_automation(kandev_server, "/say run started", titleTemplate="Check {{trigger.type}}")
    open_app(page, kandev_server, f"/automations/{automation['id']}")
    expect(page.get_by_test_id("no-runs")).to_be_visible()

    page.get_by_test_id("run-now").click()
    expect(page.get_by_test_id("run-title")).to_have_text("Check manual")
    transcript = page.get_by_test_id("transcript")
    expect(transcript.get_by_test_id("msg-agent")).to_have_text("run started")
    (run,) = runs_of(kandev_server, automation["id"])
    completed = page.get_by_test_id("rail-completed").locator(f"[data-run-id='{run['id']}']")
    expect(completed).to_be_visible()  # its turn ended: out of Running, into Completed
    expect(page.get_by_test_id("rail-running").get_by_test_id("rail-run")).to_have_count(0)
    expect(page.get_by_test_id("stop-run")).to_have_count(0)

    page.get_by_test_id("composer-text").fill("/say reply heard")
    page.get_by_test_id("send-message").click()
    expect(transcript.get_by_test_id("msg-agent")).to_have_text(["run started", "reply heard"])
    assert len(runs_of(kandev_server, automation["id"])) == 1  # a reply is a turn of the run, not a new run
    page.screenshot(path=str(screenshots / "automation-run-desktop.png"), full_page=True)

    page.get_by_test_id("open-agenda").click()
    recent = page.locator(f"[data-testid=agenda-run][data-run-id='{run['id']}']")
    expect(recent).to_contain_text("Check manual")
    recent.locator("a").click()
    expect(page).to_have_url(re.compile(rf"/automations/{automation['id']}\?run={run['id']}$"))
    expect(page.get_by_test_id("run-title")).to_have_text("Check manual")


def test_stop_current_run_cancels_the_open_run_and_moves_it_to_completed(
    page: Any, kandev_server: KandevServer
) -> None:
    from playwright.sync_api import expect

    automation = create_automation(kandev_server, "/say working on it\n/sleep 60")
    open_app(page, kandev_server, f"/automations/{automation['id']}")
    page.get_by_test_id("run-now").click()
    expect(page.get_by_test_id("msg-agent")).to_have_text("working on it")
    expect(page.get_by_test_id("run-state")).to_contain_text("Running for")
    expect(page.get_by_test_id("next-run")).to_have_attribute("data-state", "RUNNING")
    expect(page.get_by_test_id("rail-running").get_by_test_id("rail-run")).to_have_count(1)
    health = page.locator(f"[data-testid=automation-row][data-automation-id='{automation['id']}']").get_by_test_id(
        "automation-health"
    )
    expect(health).to_have_attribute("data-health", "running")
    expect(health).to_have_text("Running")

    page.get_by_test_id("stop-run").click()
    expect(page.get_by_test_id("stop-run")).to_have_count(0)
    expect(page.get_by_test_id("rail-completed").get_by_test_id("rail-run")).to_have_attribute(
        "data-status", "CANCELLED"
    )
    expect(page.get_by_test_id("rail-running").get_by_test_id("rail-run")).to_have_count(0)
    assert [r["status"] for r in runs_of(kandev_server, automation["id"])] == ["CANCELLED"]
    expect(health).not_to_have_attribute("data-health", "running")  # the sidebar follows the stop live


def test_export_downloads_every_automation_of_the_workspace_as_a_zip_of_yaml_files(
    page: Any, kandev_server: KandevServer, tmp_path: Path
) -> None:
    automation = create_automation(kandev_server, "/say exported")
    open_app(page, kandev_server, f"/automations/{automation['id']}")
    with page.expect_download() as download_info:
        page.get_by_test_id("export-automations").click()
    download = download_info.value
    assert download.suggested_filename == "automations.zip"
    target = tmp_path / "automations.zip"
    download.save_as(target)
    with zipfile.ZipFile(io.BytesIO(target.read_bytes())) as archive:
        names = archive.namelist()
        texts = [archive.read(name).decode() for name in names]
    assert names and all(name.startswith(".kandev/automations/") and name.endswith(".yml") for name in names)
    assert any(automation["name"] in text for text in texts)


def test_a_webhook_delivered_over_http_shows_its_run_in_the_open_agenda_without_a_reload(
    page: Any, kandev_server: KandevServer
) -> None:
    from playwright.sync_api import expect

    automation = create_automation(kandev_server, "/say hooked", triggers=[{"type": "WEBHOOK"}])
    assert automation["secret"]
    open_app(page, kandev_server, "/automations")
    expect(page.get_by_test_id("agenda")).to_be_visible()
    page.evaluate("() => { window.__sameDocument = true; }")

    response = httpx.post(
        f"{kandev_server.base}/api/v1/automations/webhook/{automation['id']}",
        headers={"X-Webhook-Secret": automation["secret"]},
        json={"event": "deploy"},
        timeout=10,
    )
    assert response.status_code == 202, response.text

    run = kandev_server.wait_for(RUNS, lambda d: len(d["automationRuns"]["nodes"]) == 1, id=automation["id"])
    run_id = run["automationRuns"]["nodes"][0]["id"]
    recent = page.locator(f"[data-testid=agenda-run][data-run-id='{run_id}']")
    expect(recent).to_contain_text(automation["name"])
    expect(recent).to_contain_text("webhook")
    assert page.evaluate("() => window.__sameDocument") is True


def test_older_runs_links_land_on_the_agenda_and_on_the_runs_automation(page: Any, kandev_server: KandevServer) -> None:
    from playwright.sync_api import expect

    automation = create_automation(kandev_server, "/say linked", titleTemplate="Linked {{trigger.type}}")
    payload = kandev_server.mutate(
        f"""mutation($i: RunAutomationNowInput!) {{ runAutomationNow(input: $i) {{ {ERRORS}
            ... on RunAutomationNowPayload {{ run {{ id }} }} }} }}""",
        "runAutomationNow",
        i={"automationId": automation["id"]},
    )
    run_id = payload["run"]["id"]
    kandev_server.wait_for(RUNS, lambda d: d["automationRuns"]["nodes"][0]["taskId"] is not None, id=automation["id"])

    open_app(page, kandev_server, "/runs")
    expect(page).to_have_url(f"{kandev_server.base}/automations")
    expect(page.get_by_test_id("agenda")).to_be_visible()

    open_app(page, kandev_server, f"/runs/{run_id}")
    expect(page).to_have_url(f"{kandev_server.base}/automations/{automation['id']}?run={run_id}")
    expect(page.get_by_test_id("run-title")).to_have_text("Linked manual")

    open_app(page, kandev_server, "/runs/no-such-run")
    expect(page.get_by_role("heading", name="Run not found")).to_be_visible()


def test_on_a_phone_the_automation_pages_fit_375_px_and_the_runs_rail_is_a_drawer(
    phone: Any, kandev_server: KandevServer, screenshots: Path
) -> None:
    from playwright.sync_api import expect

    automation = create_automation(
        kandev_server,
        "/say a phone-sized answer",
        titleTemplate="A deliberately long run title that has to wrap on a narrow phone screen {{trigger.type}}",
    )
    open_app(phone, kandev_server, f"/automations/{automation['id']}")
    phone.get_by_test_id("run-now").click()
    expect(phone.get_by_test_id("msg-agent")).to_have_text("a phone-sized answer")
    expect(phone.get_by_test_id("run-rail")).to_be_hidden()
    no_horizontal_scroll(phone)
    phone.get_by_test_id("open-runs").click()
    expect(phone.get_by_test_id("run-rail")).to_be_visible()
    expect(phone.get_by_test_id("rail-run")).to_have_count(1)
    expect(phone.get_by_test_id("close-runs")).to_be_focused()
    no_horizontal_scroll(phone)
    phone.screenshot(path=str(screenshots / "automation-runs-drawer-phone.png"), full_page=True)
    phone.keyboard.press("Escape")
    expect(phone.get_by_test_id("run-rail")).to_be_hidden()
    phone.screenshot(path=str(screenshots / "automation-run-phone.png"), full_page=True)

    open_app(phone, kandev_server, "/automations")
    expect(phone.get_by_test_id("agenda-recent")).to_be_visible()
    no_horizontal_scroll(phone)
    phone.get_by_test_id("open-switcher").click()
    expect(phone.get_by_test_id("mobile-switcher").get_by_test_id("automation-list")).to_contain_text(
        automation["name"]
    )
    phone.screenshot(path=str(screenshots / "automations-agenda-phone.png"), full_page=True)


def downloaded(page: Any, button: Any, tmp_path: Path) -> tuple[str, bytes]:
    """(suggested file name, bytes) of the download a click starts."""
    with page.expect_download() as download_info:
        button.click()
    download = download_info.value
    target = tmp_path / download.suggested_filename
    download.save_as(target)
    return download.suggested_filename, target.read_bytes()


def test_settings_automations_lists_the_workspace_with_run_now_new_and_both_exports(
    page: Any, kandev_server: KandevServer, tmp_path: Path
) -> None:
    """Settings → Automations at /settings/automations: the workspace's automations in a table with a Run now
    action, New automation, and Export as one YAML document or a zip of YAML files."""
    from playwright.sync_api import expect

    automation = create_automation(kandev_server, "/say from the settings table")
    open_app(page, kandev_server, "/settings/automations")
    expect(page.get_by_test_id("settings-tab-automations")).to_have_attribute("aria-current", "page")
    row = page.locator(f'[data-testid="settings-automation"][data-automation-id="{automation["id"]}"]')
    expect(row).to_contain_text(automation["name"])
    expect(row.get_by_test_id("ack-badge")).to_be_visible()

    row.get_by_test_id("settings-run-now").click()
    kandev_server.wait_for(RUNS, lambda d: len(d["automationRuns"]["nodes"]) == 1, id=automation["id"])
    assert [r["triggerType"] for r in runs_of(kandev_server, automation["id"])] == ["MANUAL"]

    name, body = downloaded(page, page.get_by_test_id("export-yaml"), tmp_path)
    assert name == "automations.yaml" and automation["name"] in body.decode()
    name, body = downloaded(page, page.get_by_test_id("export-zip"), tmp_path)
    with zipfile.ZipFile(io.BytesIO(body)) as archive:
        assert name == "automations.zip"
        assert any(automation["name"] in archive.read(n).decode() for n in archive.namelist())

    page.get_by_test_id("settings-new-automation").click()
    expect(page).to_have_url(re.compile(r"/automations/new$"))
    expect(page.get_by_test_id("automation-form")).to_be_visible()


def test_an_empty_workspace_still_exports_an_empty_yaml_document_and_an_empty_zip(
    page: Any, kandev_server: KandevServer, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    empty = kandev_server.mutate(
        "mutation($i: CreateWorkspaceInput!) { createWorkspace(input: $i) { __typename "
        "... on WorkspacePayload { workspace { id } } } }",
        "createWorkspace",
        i={"name": unique("Empty")},
    )["workspace"]["id"]
    page.add_init_script(f"localStorage.setItem('kandev.workspace', '{empty}')")
    open_app(page, kandev_server, "/settings/automations")
    expect(page.get_by_test_id("settings-no-automations")).to_be_visible()

    name, body = downloaded(page, page.get_by_test_id("export-yaml"), tmp_path)
    assert name == "automations.yaml" and "automations: []" in body.decode()
    name, body = downloaded(page, page.get_by_test_id("export-zip"), tmp_path)
    with zipfile.ZipFile(io.BytesIO(body)) as archive:
        assert name == "automations.zip" and archive.namelist() == []
