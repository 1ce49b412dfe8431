"""Box executors in the web client, in a real headless Chromium against a real `kandev serve` (whose workers detect
what this host can run): a sandbox profile is made in settings with its limits, tested with "Test this profile"
(a box is started and stopped and what it found is shown), and its settings changed; a profile needing a
capability no worker has says so; the new-task form picks the executor, and the cards show where the agent runs
or that its turn waits for a worker with the missing capability."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import KandevServer
from tests.browser.test_settings import accept_dialogs
from tests.browser.test_web_client import open_app, unique
from tests.support.boxes import needs, own_capability

pytestmark = pytest.mark.slow

PROFILES = "query($w: ID!) { executorProfiles(workspaceId: $w) { id name memoryMb unavailableReason } }"
CREATE = """mutation($i: CreateExecutorProfileInput!) { createExecutorProfile(input: $i) { __typename
    ... on ExecutorProfilePayload { executorProfile { id name } } } }"""


def sandbox_worker_lives(server: KandevServer) -> None:
    """Until one of the server's workers (they start after it) advertises that it makes sandboxes."""
    probe = unique("Any sandbox")
    server.mutate(
        CREATE, "createExecutorProfile", i={"workspaceId": server.workspace_id, "name": probe, "kind": "SANDBOX"}
    )
    server.wait_for(
        PROFILES,
        lambda d: any(p["name"] == probe and p["unavailableReason"] is None for p in d["executorProfiles"]),
        timeout=60,
        w=server.workspace_id,
    )


def add_profile(page: Any, name: str, kind: str, **fields: str) -> Any:
    page.get_by_test_id("executor-name").fill(name)
    page.get_by_test_id("executor-kind").select_option(kind)
    for field, value in fields.items():
        page.get_by_test_id(f"box-{field}").fill(value)
    page.get_by_test_id("add-executor").click()
    return page.locator(f'[data-testid="executor"][data-name="{name}"]')


def test_a_sandbox_profile_is_made_tested_and_changed_in_settings_and_an_unrunnable_one_says_why(
    page: Any, kandev_server: KandevServer, screenshots: Path
) -> None:
    from playwright.sync_api import expect

    needs("sandbox")
    sandbox_worker_lives(kandev_server)
    accept_dialogs(page)
    open_app(page, kandev_server, "/settings/executors")
    name = unique("Sandbox")
    row = add_profile(page, name, "SANDBOX", memoryMb="512", pids="256")
    expect(row).to_contain_text("Sandbox: the worktree in Linux namespaces")
    expect(row.get_by_test_id("executor-capabilities")).to_contain_text("Needs a worker with: sandbox")
    expect(row.get_by_test_id("executor-unavailable")).to_have_count(0)
    row.get_by_test_id("test-executor").click()
    report = row.get_by_test_id("executor-test-report")
    expect(report).to_contain_text("The box works", timeout=60_000)
    expect(report).to_contain_text("network interfaces: lo")
    expect(report).to_contain_text("the box was stopped and removed")
    page.screenshot(path=str(screenshots / "desktop-executor-test.png"))

    row.get_by_test_id("edit-executor").click()
    form = row.get_by_test_id("executor-settings-form")
    form.get_by_test_id("box-memoryMb").fill("768")
    form.get_by_test_id("save-executor-settings").click()
    expect(form).to_be_hidden()
    saved = {p["name"]: p for p in kandev_server.gql(PROFILES, w=kandev_server.workspace_id)["executorProfiles"]}
    assert saved[name]["memoryMb"] == 768

    capability = own_capability()
    far = unique("Far away")
    far_row = add_profile(page, far, "DOCKER", image="debian:bookworm", capabilities=capability)
    expect(far_row.get_by_test_id("executor-unavailable")).to_contain_text(f"no live worker offers {capability}")
    far_row.get_by_test_id("test-executor").click()
    expect(far_row.get_by_test_id("executor-test-error")).to_contain_text(f"no live worker offers {capability}")

    bad = add_profile(page, unique("Host network"), "DOCKER", image="debian:bookworm", network="host")
    expect(page.get_by_test_id("executor-error")).to_contain_text("never host")
    expect(bad).to_have_count(0)


def test_the_new_task_form_picks_the_executor_and_cards_show_where_the_agent_runs_or_what_it_waits_for(
    page: Any, kandev_server: KandevServer, screenshots: Path, default_executor_after: None
) -> None:
    from playwright.sync_api import expect

    needs("sandbox")
    sandbox_worker_lives(kandev_server)
    workspace = kandev_server.workspace_id
    capability = own_capability()
    boxed, waiting = unique("Boxed"), unique("Needs a GPU")
    ids = {}
    for profile, needed in ((boxed, []), (waiting, [capability])):
        made = kandev_server.mutate(
            CREATE,
            "createExecutorProfile",
            i={"workspaceId": workspace, "name": profile, "kind": "SANDBOX", "capabilities": needed},
        )
        ids[profile] = made["executorProfile"]["id"]
    titles = {}
    for profile, prompt in ((boxed, "/say hello from the sandbox"), (waiting, "/say never")):
        open_app(page, kandev_server)  # the board: a created task opens its own page
        page.get_by_test_id("new-task").click()
        form = page.get_by_test_id("new-task-dialog").get_by_test_id("task-form")
        title = unique(profile)
        form.locator('input[name="title"]').fill(title)
        form.locator('textarea[name="prompt"]').fill(prompt)
        choice = form.get_by_test_id("executor-select")
        expect(choice.locator(f'option[value="{ids[waiting]}"]')).to_contain_text(
            f"{waiting} (no live worker offers {capability}"
        )
        choice.select_option(value=ids[profile])
        form.get_by_test_id("create-task-submit").click()
        expect(page.get_by_test_id("new-task-dialog")).to_be_hidden()
        titles[profile] = title
    open_app(page, kandev_server)
    cards = {profile: page.get_by_test_id("task-card").filter(has_text=title) for profile, title in titles.items()}
    expect(cards[boxed].get_by_test_id("placement")).to_contain_text("sandbox ·", timeout=30_000)
    expect(cards[waiting].get_by_test_id("placement-waiting")).to_have_text(
        f"waiting for a worker with {capability}", timeout=30_000
    )
    page.screenshot(path=str(screenshots / "desktop-card-placement.png"))
    # The task page says it too, in its head.
    cards[boxed].get_by_role("link").first.click()
    head = page.locator(".task-title-row")
    expect(head).to_contain_text(titles[boxed])
    expect(head.get_by_test_id("placement")).to_contain_text("sandbox ·")
