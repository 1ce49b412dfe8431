"""The workflow editor, in a real headless Chromium against a private `kandev serve`: a workflow shaped
step by step (a gated step, a rename, a reorder, a delete that moves its tasks), the completion-signal
switch only where a turn-complete move exists, the server's loop warning, YAML export and import, a
task run through the gated step to the next column of the board, and no sideways scroll on a phone."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.browser.conftest import KandevServer, serve
from tests.browser.test_web_client import no_horizontal_scroll, open_app, unique
from tests.support.factories import served_task

pytestmark = pytest.mark.slow

SCRIPT = '/say building\n/tool step_complete_kandev {"summary": "done"}'
WORKFLOWS = (
    "query($w: ID!) { workflows(workspaceId: $w) { id name warnings"
    " steps { id name position isStartStep isFinalStep autoAdvanceRequiresSignal prompt events } } }"
)
TASK = "query($id: ID!) { task(id: $id) { id workflowStepId } }"


@pytest.fixture(scope="module")
def server(web_client: Path) -> Iterator[KandevServer]:
    """A server of this module's own: the workflows made here stay off the shared one's board."""
    with serve("workflow-editor-serve.log") as (base, _env):
        workspaces = httpx.post(f"{base}/graphql", json={"query": "{ workspaces { id } }"}, timeout=10).json()
        yield KandevServer(base=base, workspace_id=workspaces["data"]["workspaces"][0]["id"])


def workflow_named(server: KandevServer, name: str) -> dict[str, Any]:
    [workflow] = [w for w in server.gql(WORKFLOWS, w=server.workspace_id)["workflows"] if w["name"] == name]
    workflow["steps"].sort(key=lambda s: s["position"])
    return workflow


def step_names(server: KandevServer, name: str) -> list[str]:
    return [s["name"] for s in workflow_named(server, name)["steps"]]


def step_row(page: Any, name: str) -> Any:
    return page.locator(f'[data-testid="workflow-step"][data-name="{name}"]')


def open_step(page: Any, name: str) -> Any:
    row = step_row(page, name)
    toggle = row.get_by_test_id("edit-step")
    if toggle.get_attribute("aria-expanded") != "true":
        toggle.click()
    return row


def add_step(page: Any, name: str) -> None:
    from playwright.sync_api import expect

    page.get_by_test_id("new-step-name").fill(name)
    page.get_by_test_id("add-step").click()
    expect(step_row(page, name)).to_be_visible()


def create_workflow(page: Any, server: KandevServer, name: str) -> None:
    from playwright.sync_api import expect

    open_app(page, server, "/settings/workflows")
    page.get_by_test_id("new-workflow-name").fill(name)
    page.get_by_test_id("create-workflow").press("Enter")
    expect(page.get_by_test_id("workflow-name")).to_have_value(name)


def test_a_workflow_is_shaped_in_the_editor_exported_imported_and_runs_a_task_through_its_gated_step(
    page: Any, server: KandevServer, screenshots: Path
) -> None:
    from playwright.sync_api import expect

    page.on("dialog", lambda dialog: dialog.accept())
    name = unique("Gated flow")
    create_workflow(page, server, name)
    for step in ("Build", "Scrap", "Review", "Done"):
        add_step(page, step)

    build = open_step(page, "Build")
    build.get_by_test_id("step-start").check()
    build.get_by_test_id("step-prompt").fill("Build the feature")
    build.get_by_test_id("step-auto-start").check()
    expect(build.get_by_test_id("step-requires-signal")).to_have_count(0)  # no turn-complete move yet
    build.get_by_test_id("step-on-turn-complete").select_option("next")
    switch = build.get_by_test_id("step-requires-signal")
    expect(switch).to_have_attribute("role", "switch")
    switch.focus()
    page.keyboard.press("Space")  # the switch works from the keyboard
    expect(switch).to_be_checked()
    build.get_by_test_id("save-step").click()
    expect(build.get_by_text("waits for signal")).to_be_visible()
    saved = workflow_named(server, name)["steps"][0]
    assert saved["isStartStep"] and saved["autoAdvanceRequiresSignal"] and saved["prompt"] == "Build the feature"
    assert saved["events"] == {
        "on_enter": [{"type": "auto_start_agent"}],
        "on_turn_complete": [{"type": "move_to_next"}],
    }

    review = open_step(page, "Review")
    expect(review.get_by_test_id("step-requires-signal")).to_have_count(0)  # hidden: no turn-complete move
    review.get_by_test_id("step-name").fill("Check")
    review.get_by_test_id("save-step").click()
    expect(step_row(page, "Check")).to_be_visible()

    done = open_step(page, "Done")
    done.get_by_test_id("step-final").check()
    done.get_by_test_id("save-step").click()
    expect(done.get_by_text("final", exact=True)).to_be_visible()

    # Reorder with the keyboard: Scrap goes below Check, so Build's "next" is Check.
    step_row(page, "Scrap").get_by_test_id("step-down").press("Enter")
    expect(page.get_by_test_id("workflow-step").nth(2)).to_have_attribute("data-name", "Scrap")
    expect(step_row(page, "Scrap").get_by_test_id("step-down")).to_be_focused()  # focus follows the step
    assert step_names(server, name) == ["Build", "Check", "Scrap", "Done"]

    # Deleting a step with a task in it moves the task where the person says.
    workflow = workflow_named(server, name)
    ids = {s["name"]: s["id"] for s in workflow["steps"]}
    parked = served_task(
        server.mutate, server.workspace_id, unique("Parked"), workflowId=workflow["id"], workflowStepId=ids["Scrap"]
    )
    scrap = open_step(page, "Scrap")
    scrap.get_by_test_id("delete-step").click()  # no target: refused while the task is there
    expect(scrap.get_by_test_id("delete-step-error")).to_be_visible()
    scrap.get_by_test_id("delete-step-target").select_option(label="Check")
    scrap.get_by_test_id("delete-step").click()
    expect(step_row(page, "Scrap")).to_have_count(0)
    assert server.gql(TASK, id=parked["id"])["task"]["workflowStepId"] == ids["Check"]

    # A loop: Check starts the agent and sends the task back to Build, which sends it on again.
    check = open_step(page, "Check")
    check.get_by_test_id("step-auto-start").check()
    check.get_by_test_id("step-on-turn-complete").select_option("previous")
    check.get_by_test_id("save-step").click()
    expect(page.get_by_test_id("workflow-warning")).to_contain_text("would move a task around forever")
    expect(page.get_by_test_id("workflow-warning")).to_contain_text("'Build' → 'Check' → 'Build'")
    page.get_by_test_id("workflow-warnings").scroll_into_view_if_needed()
    page.screenshot(path=str(screenshots / "desktop-workflow-editor.png"))
    check.get_by_test_id("step-on-turn-complete").select_option("")
    check.get_by_test_id("step-auto-start").uncheck()
    check.get_by_test_id("save-step").click()
    expect(page.get_by_test_id("workflow-warnings")).to_have_count(0)

    # Export, then import the YAML under another name as a new workflow.
    page.get_by_test_id("export-workflow").click()
    exported = page.get_by_test_id("export-yaml")
    expect(exported).to_contain_text("auto_start_agent")
    yaml = exported.input_value()
    copy = f"{name} copy"
    document = yaml.replace(f"name: {name}", f"name: {copy}", 1)
    page.get_by_test_id("import-file").set_input_files(
        files=[{"name": "flow.yaml", "mimeType": "text/yaml", "buffer": document.encode()}]
    )
    expect(page.get_by_test_id("import-yaml")).to_have_value(document)
    page.get_by_test_id("import-workflow").click()
    expect(page.get_by_test_id("workflow-name")).to_have_value(copy)
    imported = workflow_named(server, copy)
    assert [s["name"] for s in imported["steps"]] == ["Build", "Check", "Done"]
    assert imported["steps"][0]["autoAdvanceRequiresSignal"] is True
    page.get_by_test_id("import-yaml").fill("steps: [")
    page.get_by_test_id("import-workflow").click()
    expect(page.get_by_test_id("import-error")).to_be_visible()  # the typed refusal, inline

    # The board (reached in the same page, no reload) shows the edited steps, and a task runs through the
    # gated step on the agent's signal.
    page.locator("a.brand").click()
    page.get_by_test_id("board-workflow").select_option(label=name)
    columns = page.get_by_test_id("column")
    expect(columns).to_have_count(3)  # Scrap is gone
    expect(columns.nth(1)).to_have_attribute("data-step-name", "Check")
    task = served_task(
        server.mutate, server.workspace_id, unique("Gated run"), workflowId=workflow["id"], prompt=SCRIPT
    )
    card = f'[data-testid="task-card"][data-task-id="{task["id"]}"]'
    check_column = page.locator('[data-testid="column"][data-step-name="Check"]')
    expect(check_column.locator(card)).to_be_visible(timeout=60_000)
    assert server.gql(TASK, id=task["id"])["task"]["workflowStepId"] == ids["Check"]


def test_the_editor_fits_a_phone_shows_the_signal_switch_once_a_turn_complete_move_exists_and_deletes_a_workflow(
    phone: Any, server: KandevServer, screenshots: Path
) -> None:
    from playwright.sync_api import expect

    name = unique("Phone flow")
    create_workflow(phone, server, name)
    add_step(phone, "Plan")
    add_step(phone, "Ship")
    plan = open_step(phone, "Plan")
    expect(plan.get_by_test_id("step-requires-signal")).to_have_count(0)
    plan.get_by_test_id("step-on-turn-complete").select_option("next")
    expect(plan.get_by_test_id("step-requires-signal")).to_be_visible()
    no_horizontal_scroll(phone)
    plan.get_by_test_id("step-on-turn-complete").scroll_into_view_if_needed()
    phone.screenshot(path=str(screenshots / "mobile-workflow-editor.png"))
    assert workflow_named(server, name)["warnings"] == []

    phone.on("dialog", lambda dialog: dialog.accept())
    phone.get_by_test_id("delete-workflow").click()
    expect(phone.get_by_test_id("workflow-select").locator("option", has_text=name)).to_have_count(0)
    phone.get_by_test_id("workflow-select").select_option(label="Kanban")
    phone.get_by_test_id("delete-workflow").click()  # the workspace's default: a typed refusal, inline
    expect(phone.get_by_test_id("workflow-error")).to_contain_text("default workflow")
