"""Usage, cost, budgets and the agent catalogue in a real headless Chromium against a real `kandev serve` (its one
embedded worker runs the scripted agent, whose `/usage` directive reports as ACP agents do): installing a catalogue
agent from Settings with its progress and a failed install's error in place, the context gauge and the card's cost
after real turns, a spent task budget raised from the UI releasing the held message, an automation's monthly budget
in its editor, and the Stats page's charts drawn from real turns. Screenshots at 1280 px and 375 px."""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.browser.conftest import KandevServer, serve
from tests.browser.test_web_client import no_horizontal_scroll, open_app, unique
from tests.support.agent_packages import pack_stand_in
from tests.support.factories import served_task

pytestmark = pytest.mark.slow

TOKENS = {"inputTokens": 100, "outputTokens": 20, "cachedReadTokens": 30, "cachedWriteTokens": 5}
CREATE_WORKSPACE = """mutation($i: CreateWorkspaceInput!) { createWorkspace(input: $i) { __typename
  ... on WorkspacePayload { workspace { id } } } }"""
PROFILES = "query($w: ID!) { agentProfiles(workspaceId: $w) { id kind } }"
CREATE_AUTOMATION = """mutation($i: CreateAutomationInput!) { createAutomation(input: $i) { __typename
  ... on Error { message } ... on AutomationPayload { automation { id name } } } }"""
RUN_NOW = """mutation($i: RunAutomationNowInput!) { runAutomationNow(input: $i) { __typename
  ... on Error { message } ... on RunAutomationNowPayload { admission } } }"""
USAGE = """query($w: ID!, $f: DateTime!, $t: DateTime!, $by: UsageGroupBy!) {
  usage(workspaceId: $w, from: $f, to: $t, groupBy: $by) { key turns completedTurns failedTurns costUsd } }"""
TASK_STATE = "query($id: ID!) { task(id: $id) { state pendingAction sessions { state } } }"
PROFILE_COMMANDS = "query($w: ID!) { agentProfiles(workspaceId: $w) { name command env } }"
CATALOGUE = "{ agentCatalogue { id name docsUrl envKeys install { npmPackage version binaryUrl } } }"
AUTOMATION_BUDGET = "query($id: ID!) { automation(id: $id) { budget { limitUsd reached } } }"
RUNS = "query($id: ID!) { automationRuns(automationId: $id) { nodes { status } } }"


def usage_line(tokens: dict[str, int] | None = None, **update: object) -> str:
    """The scripted agent's `/usage` directive: `tokens` answered as the turn's usage, the rest as a usage_update."""
    report = dict(update)
    if tokens is not None:
        report["tokens"] = {"totalTokens": sum(tokens.values()), **tokens}
    return f"/usage {json.dumps(report)}"


def cost(amount: float) -> dict[str, object]:
    return {"amount": amount, "currency": "USD"}


@pytest.fixture(scope="module")
def usage_server(web_client: Path) -> Iterator[KandevServer]:
    """A server of its own: its npm package source holds a stand-in of Codex's package (and nothing for the
    others), and its workspace holds only what these tests make."""
    packages = Path(tempfile.mkdtemp(prefix="kandev-agent-packages-"))
    pack_stand_in(packages, "codex")
    with serve("usage-ui-serve.log", KANDEV_MCP_NPM_SOURCE=str(packages)) as (base, _env):
        workspaces = httpx.post(f"{base}/graphql", json={"query": "{ workspaces { id } }"}, timeout=10).json()
        yield KandevServer(base=base, workspace_id=workspaces["data"]["workspaces"][0]["id"])


def wait_for_turns(server: KandevServer, workspace_id: str, turns: int, ended: bool = False) -> list[dict[str, Any]]:
    """The workspace's usage once `turns` turns have been counted, and with `ended`, have completed or failed."""

    def counted(data: dict[str, Any]) -> bool:
        rows = data["usage"]
        done = sum(r["completedTurns"] + r["failedTurns"] for r in rows) if ended else turns
        return sum(r["turns"] for r in rows) >= turns and done >= turns

    now = datetime.now(UTC)
    window = {"f": (now - timedelta(days=1)).isoformat(), "t": (now + timedelta(days=1)).isoformat()}
    server.wait_for(
        USAGE,
        counted,
        timeout=60,
        w=workspace_id,
        by="WORKSPACE",
        **window,
    )
    return server.gql(USAGE, w=workspace_id, by="WORKSPACE", **window)["usage"]


def test_installing_a_catalogue_agent_shows_its_progress_then_installed_and_a_failed_install_its_error_in_place(
    page: Any, usage_server: KandevServer, screenshots: Path
) -> None:
    from playwright.sync_api import expect

    server = usage_server
    # The one worker is busy with a turn for a few seconds: the install waits for it, and the row says so.
    busy = served_task(server.mutate, server.workspace_id, unique("Busy"), prompt="/sleep 4\n/say rested")
    server.wait_for(TASK_STATE, lambda d: d["task"]["state"] == "IN_PROGRESS", id=busy["id"])
    open_app(page, server, "/settings/agents")
    # Every catalogue agent has a row: npm ones an Install button, the others a link to their download.
    catalogue = server.gql(CATALOGUE)["agentCatalogue"]
    assert len(catalogue) >= 12
    rows = page.get_by_test_id("catalogue-entry")
    expect(rows).to_have_count(len(catalogue))
    for item in catalogue:
        row = rows.and_(page.locator(f'[data-agent="{item["id"]}"]'))
        expect(row).to_contain_text(item["name"])
        expect(row.get_by_role("link", name=f"Docs {item['name']}")).to_have_attribute("href", item["docsUrl"])
        if item["install"]["npmPackage"]:
            expect(row).to_contain_text(f"npm {item['install']['npmPackage']}@{item['install']['version']}")
            expect(row.get_by_role("button", name=f"Install {item['name']}")).to_be_visible()
        else:
            link = row.get_by_role("link", name=f"Download {item['name']}")
            expect(link).to_have_attribute("href", item["install"]["binaryUrl"])
        for key in item["envKeys"]:
            expect(row).to_contain_text(key)
    codex = page.locator('[data-testid="catalogue-entry"][data-agent="codex"]')
    expect(codex).to_have_attribute("data-installed", "false")
    expect(codex.get_by_test_id("catalogue-state")).to_have_text("Not installed")
    codex.get_by_role("button", name="Install Codex").click()
    progress = codex.get_by_test_id("install-progress")
    expect(progress).to_have_attribute("data-state", "QUEUED")
    expect(progress).to_contain_text("Waiting for a worker")
    expect(codex.get_by_role("button", name="Install Codex")).to_be_disabled()
    codex.scroll_into_view_if_needed()
    page.screenshot(path=str(screenshots / "desktop-catalogue-installing.png"), full_page=True)

    expect(codex).to_have_attribute("data-installed", "true", timeout=60_000)
    expect(codex.get_by_test_id("install-done")).to_have_text("Installed.")
    expect(codex.get_by_test_id("catalogue-state")).to_have_text("Installed")
    expect(codex.locator("code")).to_contain_text("agent-packages")
    expect(codex.get_by_role("button", name="Update Codex")).to_be_enabled()

    # Update installs the catalogue's version again through the same job, and says so when it is done.
    codex.get_by_role("button", name="Update Codex").click()
    expect(codex.get_by_test_id("install-done")).to_have_text("Updated.", timeout=60_000)
    expect(codex).to_have_attribute("data-installed", "true")

    # What Install put in place becomes a profile: its command, and its key as a workspace secret.
    codex.get_by_role("button", name="New profile Codex").click()
    form = page.get_by_test_id("profile-form")
    expect(form.get_by_test_id("profile-name")).to_have_value("Codex (installed)")  # the preset is "Codex"
    expect(form.get_by_test_id("profile-env")).to_have_value("OPENAI_API_KEY=${secret:OPENAI_API_KEY}")
    form.get_by_test_id("save-profile").click()
    expect(page.locator('[data-testid="profile"][data-name="Codex (installed)"]')).to_be_visible()
    made = next(
        p
        for p in server.gql(PROFILE_COMMANDS, w=server.workspace_id)["agentProfiles"]
        if p["name"] == "Codex (installed)"
    )
    assert made["command"][0].endswith("/node_modules/.bin/codex-acp") and "/agent-packages/" in made["command"][0]

    # Gemini's package is not in this server's package source: the job fails and says so in its row.
    gemini = page.locator('[data-testid="catalogue-entry"][data-agent="gemini"]')
    gemini.get_by_role("button", name="Install Gemini CLI").click()
    error = gemini.get_by_test_id("install-error")
    expect(error).to_contain_text("Install failed: npm package @google/gemini-cli@", timeout=60_000)
    expect(error).to_contain_text("is not in the configured package source")
    expect(gemini).to_have_attribute("data-installed", "false")
    expect(gemini.get_by_role("button", name="Install Gemini CLI")).to_be_enabled()
    page.set_viewport_size({"width": 1280, "height": 2400})  # the whole catalogue, which scrolls inside the page
    page.get_by_test_id("agent-catalogue").screenshot(path=str(screenshots / "desktop-catalogue-installed.png"))


def test_the_context_gauge_and_the_card_cost_show_what_scripted_turns_reported(
    page: Any, usage_server: KandevServer, screenshots: Path
) -> None:
    from playwright.sync_api import expect

    server = usage_server
    task = served_task(server.mutate, server.workspace_id, unique("Costly"))
    open_app(page, server, f"/tasks/{task['id']}")
    page.get_by_test_id("composer-text").fill(
        f"{usage_line(TOKENS, used=84000, size=200000, cost=cost(0.4))}\n/say first"
    )
    page.get_by_test_id("start-task").click()
    expect(page.get_by_test_id("msg-agent")).to_contain_text("first")
    gauge = page.get_by_test_id("context-gauge")
    expect(gauge).to_have_attribute("data-used", "84000")
    expect(gauge).to_have_attribute("data-size", "200000")
    expect(gauge.get_by_role("meter", name="Context")).to_have_attribute("value", "84000")
    expect(gauge).to_contain_text("42%")
    expect(page.get_by_test_id("task-spend")).to_contain_text("$0.40")

    # ACP's cost is the session's so far: this turn cost 0.60, the task 1.00, and the gauge shows the newer turn.
    page.get_by_test_id("composer-text").fill(
        f"{usage_line(TOKENS, used=150000, size=200000, cost=cost(1.0))}\n/say second"
    )
    page.get_by_test_id("send-message").click()
    expect(page.get_by_test_id("msg-agent").last).to_contain_text("second")
    expect(gauge).to_have_attribute("data-used", "150000")
    expect(gauge).to_contain_text("75%")
    expect(page.get_by_test_id("task-spend")).to_contain_text("$1.00")
    page.screenshot(path=str(screenshots / "desktop-usage-task.png"), full_page=True)

    open_app(page, server, "/")
    card = page.locator(f'[data-testid="task-card"][data-task-id="{task["id"]}"]')
    expect(card.get_by_test_id("card-cost")).to_contain_text("$1.00")
    expect(card.get_by_test_id("card-cost")).to_have_attribute("data-cost-usd", "1")
    expect(card.get_by_test_id("card-cost")).to_contain_text("200 input and 40 output tokens")
    page.screenshot(path=str(screenshots / "desktop-usage-board.png"), full_page=True)


def test_at_375px_the_gauge_the_budget_and_the_card_cost_fit_without_sideways_scroll(
    phone: Any, usage_server: KandevServer, screenshots: Path
) -> None:
    from playwright.sync_api import expect

    server = usage_server
    prompt = f"{usage_line(TOKENS, used=30000, size=200000, cost=cost(0.25))}\n/say on a phone"
    task = served_task(server.mutate, server.workspace_id, unique("Phone"), prompt=prompt)
    open_app(phone, server, f"/tasks/{task['id']}")
    expect(phone.get_by_test_id("context-gauge")).to_have_attribute("data-used", "30000")
    expect(phone.get_by_test_id("task-spend")).to_contain_text("$0.25")
    no_horizontal_scroll(phone)
    phone.screenshot(path=str(screenshots / "mobile-usage-task.png"), full_page=True)
    open_app(phone, server, "/")
    phone.get_by_test_id("board-tab").filter(has_text="Review").click()
    card = phone.locator(f'[data-testid="task-card"][data-task-id="{task["id"]}"]')
    expect(card.get_by_test_id("card-cost")).to_be_visible()
    expect(card.get_by_test_id("card-cost")).to_contain_text("$0.25")
    no_horizontal_scroll(phone)
    phone.screenshot(path=str(screenshots / "mobile-usage-board.png"), full_page=True)


def _raise_a_spent_budget(page: Any, server: KandevServer, screenshots: Path, device: str) -> None:
    from playwright.sync_api import expect

    task = served_task(server.mutate, server.workspace_id, unique("Budgeted"))
    open_app(page, server, f"/tasks/{task['id']}")
    page.get_by_test_id("edit-budget").click()
    dialog = page.get_by_test_id("budget-dialog")
    dialog.get_by_label("Limit in US dollars").fill("1")
    dialog.get_by_test_id("budget-save").click()
    expect(dialog).to_be_hidden()
    expect(page.get_by_test_id("task-budget")).to_contain_text("$0.00 of $1.00")

    spend = usage_line(used=10, size=100, cost=cost(1.25))
    page.get_by_test_id("composer-text").fill(f"/say working\n{spend}\n/sleep 30\n/say never said")
    page.get_by_test_id("start-task").click()
    card = page.get_by_test_id("budget-reached")
    expect(card).to_contain_text("Budget reached")
    expect(card).to_contain_text("$1.25 of $1.00")
    expect(page.get_by_test_id("task-budget")).to_have_attribute("data-reached", "true")
    server.wait_for(TASK_STATE, lambda d: d["task"]["sessions"][0]["state"] != "RUNNING", id=task["id"])

    # A message now waits: the budget holds it until it is raised.
    page.get_by_test_id("composer-text").fill("/say after the raise")
    page.get_by_test_id("send-message").click()
    expect(page.get_by_test_id("queued-count")).to_have_text("1 queued")
    card.scroll_into_view_if_needed()  # on a phone the dock scrolls, and sending left it at the composer
    page.screenshot(path=str(screenshots / f"{device}-budget-reached.png"), full_page=True)
    assert server.gql(TASK_STATE, id=task["id"])["task"]["pendingAction"] == "BUDGET_REACHED"

    # The board's card says so too, with what the task cost.
    open_app(page, server, "/")
    if device == "mobile":
        page.get_by_test_id("board-tab").filter(has_text="In Progress").click()
    on_board = page.locator(f'[data-testid="task-card"][data-task-id="{task["id"]}"]')
    expect(on_board.get_by_test_id("card-status")).to_have_text("Budget reached")
    expect(on_board.get_by_test_id("budget-indicator")).to_be_visible()
    expect(on_board.get_by_test_id("card-cost")).to_contain_text("$1.25")
    on_board.scroll_into_view_if_needed()
    page.screenshot(path=str(screenshots / f"{device}-budget-reached-board.png"), full_page=True)
    open_app(page, server, f"/tasks/{task['id']}")

    card.get_by_label("Limit in US dollars").fill("5")
    card.get_by_role("button", name="Raise budget").click()
    expect(page.get_by_test_id("msg-agent").last).to_contain_text("after the raise", timeout=30_000)
    expect(card).to_be_hidden()
    expect(page.get_by_test_id("task-budget")).to_contain_text("$1.25 of $5.00")
    expect(page.get_by_test_id("msg-agent").filter(has_text="never said")).to_have_count(0)


def test_raising_a_spent_task_budget_in_its_card_releases_the_held_message(
    page: Any, usage_server: KandevServer, screenshots: Path
) -> None:
    _raise_a_spent_budget(page, usage_server, screenshots, "desktop")


def test_at_375px_a_spent_budget_is_raised_from_its_card(
    phone: Any, usage_server: KandevServer, screenshots: Path
) -> None:
    _raise_a_spent_budget(phone, usage_server, screenshots, "mobile")
    no_horizontal_scroll(phone)


def scripted_profile(server: KandevServer, workspace_id: str) -> str:
    return next(p["id"] for p in server.gql(PROFILES, w=workspace_id)["agentProfiles"] if p["kind"] == "SCRIPTED")


def make_automation(server: KandevServer, workspace_id: str, prompt: str) -> dict[str, Any]:
    fields = {"workspaceId": workspace_id, "name": unique("Spender"), "prompt": prompt}
    automation = server.mutate(
        CREATE_AUTOMATION, "createAutomation", i={**fields, "agentProfileId": scripted_profile(server, workspace_id)}
    )["automation"]
    fired = server.mutate(RUN_NOW, "runAutomationNow", i={"automationId": automation["id"]})
    assert fired["admission"] == "FIRED", fired
    return automation


def statuses(server: KandevServer, automation_id: str) -> list[str]:
    """The automation's runs' statuses, newest first."""
    return [r["status"] for r in server.gql(RUNS, id=automation_id)["automationRuns"]["nodes"]]


def test_an_automations_spent_monthly_budget_stops_run_now_says_why_on_its_page_and_a_raise_lets_it_fire(
    page: Any, usage_server: KandevServer, screenshots: Path
) -> None:
    from playwright.sync_api import expect

    server = usage_server
    before = sum(r["turns"] for r in wait_for_turns(server, server.workspace_id, 0))
    automation = make_automation(server, server.workspace_id, f"{usage_line(TOKENS, cost=cost(2.0))}\n/say spent")
    wait_for_turns(server, server.workspace_id, before + 1)
    server.wait_for(RUNS, lambda d: d["automationRuns"]["nodes"][0]["status"] == "SUCCEEDED", id=automation["id"])
    open_app(page, server, f"/automations/{automation['id']}/edit")
    budget = page.get_by_test_id("automation-budget")
    expect(budget).to_contain_text("No budget")
    budget.get_by_label("Limit in US dollars").fill("1.5")
    budget.get_by_role("button", name="Save budget").click()
    state = budget.get_by_test_id("automation-budget-state")
    expect(state).to_have_attribute("data-reached", "true")
    expect(state).to_contain_text("$2.00 of $1.50")
    expect(state).to_contain_text("it does not fire until next month or a raised budget")
    page.screenshot(path=str(screenshots / "desktop-automation-budget.png"), full_page=True)

    # Its page says why it does not fire; Run now is admitted as a skipped run whose reason is the budget.
    open_app(page, server, f"/automations/{automation['id']}")
    notice = page.get_by_test_id("automation-budget-notice")
    expect(notice).to_contain_text("Monthly budget: $2.00 of $1.50")
    expect(notice).to_contain_text("it does not fire until next month or a raised budget")
    page.get_by_test_id("run-now").click()
    toast = page.locator(".toast").filter(has_text="Not run: its monthly budget ($1.5) is spent")
    expect(toast).to_be_visible()
    toast.get_by_role("button", name="Dismiss").click()
    skipped = page.locator('[data-testid="rail-run"][data-status="SKIPPED"]')
    expect(skipped).to_have_count(1)
    expect(skipped).to_contain_text("its monthly budget ($1.5) is spent")
    page.get_by_test_id("reack").click()
    ack = page.get_by_test_id("ack-badge")
    expect(ack).to_have_attribute("data-status", "FAILED", timeout=30_000)
    expect(ack).to_have_attribute("title", re.compile("it will not fire: its monthly budget"))
    page.screenshot(path=str(screenshots / "desktop-automation-budget-spent.png"), full_page=True)
    assert statuses(server, automation["id"]) == ["SKIPPED", "SUCCEEDED"]

    # The notice leads to the editor, where a raise lets it fire again.
    notice.get_by_role("link", name="Raise budget").click()
    budget.get_by_label("Limit in US dollars").fill("10")
    budget.get_by_role("button", name="Save budget").click()
    expect(state).to_have_attribute("data-reached", "false")
    expect(state).to_contain_text("$2.00 of $10.00")
    assert server.gql(AUTOMATION_BUDGET, id=automation["id"])["automation"]["budget"] == {
        "limitUsd": 10.0,
        "reached": False,
    }
    open_app(page, server, f"/automations/{automation['id']}")
    page.get_by_test_id("run-now").click()
    expect(page.get_by_test_id("transcript").get_by_test_id("msg-agent")).to_have_text("spent")
    expect(page.get_by_test_id("automation-budget-notice")).to_have_count(0)
    assert statuses(server, automation["id"])[1:] == ["SKIPPED", "SUCCEEDED"]


@pytest.fixture(scope="module")
def stats_workspace(usage_server: KandevServer) -> dict[str, Any]:
    """A workspace of its own with three real turns: two tasks (one completes, one fails) and an automation run."""
    server = usage_server
    workspace_id = server.mutate(CREATE_WORKSPACE, "createWorkspace", i={"name": unique("Stats")})["workspace"]["id"]
    served_task(server.mutate, workspace_id, "Counted", prompt=f"{usage_line(TOKENS, cost=cost(0.5))}\n/say counted")
    served_task(server.mutate, workspace_id, "Broken", prompt="/fail on purpose")
    automation = make_automation(server, workspace_id, f"{usage_line(TOKENS, cost=cost(0.25))}\n/say fired")
    [whole] = wait_for_turns(server, workspace_id, 3, ended=True)
    assert (whole["turns"], whole["completedTurns"], whole["costUsd"]) == (3, 2, 0.75), whole
    return {"id": workspace_id, "automation": automation}


def open_stats(page: Any, server: KandevServer, workspace_id: str) -> None:
    page.add_init_script(f"localStorage.setItem('kandev.workspace', {json.dumps(workspace_id)})")
    open_app(page, server, "/stats")


def test_the_stats_page_draws_turns_success_tokens_and_cost_by_agent_and_automation_from_real_turns(
    page: Any, usage_server: KandevServer, stats_workspace: dict[str, Any], screenshots: Path
) -> None:
    from playwright.sync_api import expect

    open_stats(page, usage_server, stats_workspace["id"])
    stats = page.get_by_test_id("stats-page")
    expect(stats.get_by_test_id("stats-turns")).to_contain_text("3")
    expect(stats.get_by_test_id("stats-turns")).to_contain_text("2 completed, 1 failed")
    expect(stats.get_by_test_id("stats-success")).to_contain_text("67%")
    expect(stats.get_by_test_id("stats-cost")).to_contain_text("$0.75")
    charts = stats.get_by_test_id("rich-chart")
    expect(charts).to_have_count(6)
    expect(stats.locator("canvas")).to_have_count(6)
    titles = [
        "Turns per day",
        "Success rate",
        "Tokens by agent",
        "Cost by agent",
        "Tokens by automation",
        "Cost by automation",
    ]
    expect(charts.locator("figcaption")).to_have_text(titles)
    page.screenshot(path=str(screenshots / "desktop-stats.png"), full_page=True)

    def table(title: str) -> Any:
        chart = charts.filter(has=page.locator("figcaption", has_text=title))
        chart.locator("summary", has_text="Data table").click()
        return chart.get_by_test_id("rich-chart-table")

    # Two of the turns reported 100 input and 20 output tokens each; the failed one reported nothing.
    expect(table("Tokens by agent").locator("tbody tr")).to_have_text(["Scripted20040"])
    expect(table("Cost by automation").locator("tbody tr")).to_have_text(
        [f"{stats_workspace['automation']['name']}0.25"]
    )
    today = table("Turns per day").locator("tbody tr").last
    expect(today.locator("td")).to_have_text(["3", "2", "1"])
    expect(table("Success rate").locator("tbody tr").last.locator("td")).to_have_text(["66.7"])


def test_at_375px_the_stats_page_draws_its_charts_without_sideways_scroll(
    phone: Any, usage_server: KandevServer, stats_workspace: dict[str, Any], screenshots: Path
) -> None:
    from playwright.sync_api import expect

    open_stats(phone, usage_server, stats_workspace["id"])
    expect(phone.get_by_test_id("stats-page").locator("canvas")).to_have_count(6)
    no_horizontal_scroll(phone)
    phone.screenshot(path=str(screenshots / "mobile-stats.png"), full_page=True)


def test_the_stats_link_in_the_header_opens_the_page_in_its_own_chunk(page: Any, usage_server: KandevServer) -> None:
    from playwright.sync_api import expect

    loaded: list[str] = []
    page.on("request", lambda request: loaded.append(request.url))
    open_app(page, usage_server, "/")
    assert not any("StatsPage" in url for url in loaded)
    page.get_by_test_id("open-stats").click()
    expect(page.get_by_test_id("stats-page")).to_be_visible()
    assert page.url.endswith("/stats") and any("StatsPage" in url for url in loaded)
