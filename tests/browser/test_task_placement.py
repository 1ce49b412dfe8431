"""Where a task works, chosen in the UI (a real headless Chromium against a real `kandev serve`): the new-task
form picks a repository and one of its branches as the base, the task works there, and the form starts from that
choice the next time; an idle task's page changes a repository's base branch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import KandevServer
from tests.browser.test_changes_panel import CREATE_REPOSITORY, TASK_STATE, write
from tests.browser.test_web_client import open_app, unique
from tests.support.factories import served_task
from tests.support.git_repos import git, make_repository

pytestmark = pytest.mark.slow

CHECKOUTS = "query($id: ID!) { task(id: $id) { repositories { repositoryId baseBranch branch } } }"
CHANGES = "query($id: ID!) { task(id: $id) { changes { repositories { baseBranch stats { files } } } } }"


def repository_with_release(server: KandevServer, folder: Path) -> dict[str, Any]:
    """A repository on `main` with a `release` branch one commit ahead (so a task's base is visible in its diff)."""
    path = make_repository(folder / unique("placed").replace(" ", "-"))
    git(path, "checkout", "-q", "-b", "release")
    (path / "RELEASE").write_text("1.0\n")
    git(path, "add", "RELEASE")
    git(path, "commit", "-q", "-m", "release")
    git(path, "checkout", "-q", "main")
    answer = server.mutate(
        CREATE_REPOSITORY,
        "createRepository",
        i={"workspaceId": server.workspace_id, "name": path.name, "path": str(path)},
    )
    return answer["repository"]


def test_the_new_task_form_picks_a_repository_and_its_base_branch_and_remembers_the_choice(
    page: Any, kandev_server: KandevServer, tmp_path: Path, screenshots: Path
) -> None:
    from playwright.sync_api import expect

    repo = repository_with_release(kandev_server, tmp_path)
    open_app(page, kandev_server)
    page.get_by_role("button", name="New task").first.click()
    form = page.get_by_test_id("task-form")
    picker = form.get_by_test_id("repository-picker")
    # Start clean whatever an earlier task left remembered (applied with the repositories' list, which the add button
    # waits for: the new repository is never among the remembered).
    expect(picker.get_by_test_id("add-repository")).to_be_visible()
    while picker.get_by_role("button", name="Remove", exact=False).count():
        picker.get_by_role("button", name="Remove", exact=False).first.click()
    picker.get_by_test_id("add-repository").click()
    choice = picker.get_by_test_id("repository-choice")
    choice.get_by_test_id("repository-select").select_option(repo["id"])
    branch = choice.get_by_test_id("base-branch")
    expect(branch).to_have_value("main")  # the repository's default branch first
    expect(branch.locator("option", has_text="release")).to_have_count(1)  # listed from the repository
    branch.select_option("release")
    # The workspace default executor, whatever an earlier test on this server chose (the form remembers it).
    form.get_by_test_id("executor-select").select_option(value="")
    title = unique("Placed")
    form.locator("input[name=title]").fill(title)
    form.locator("textarea[name=prompt]").fill(write("placed.txt", "here\n"))
    page.screenshot(path=str(screenshots / "desktop-new-task-repositories.png"))
    form.get_by_test_id("create-task-submit").click()
    expect(page.get_by_test_id("task-page")).to_be_visible()
    task_id = page.get_by_test_id("task-page").get_attribute("data-task-id")
    assert task_id

    [checkout] = kandev_server.gql(CHECKOUTS, id=task_id)["task"]["repositories"]
    assert (checkout["repositoryId"], checkout["baseBranch"]) == (repo["id"], "release")
    kandev_server.wait_for(TASK_STATE, lambda d: d["task"]["state"] == "REVIEW", timeout=60, id=task_id)
    # Diffed against release: its own file only, not release's RELEASE.
    [changes] = kandev_server.gql(CHANGES, id=task_id)["task"]["changes"]["repositories"]
    assert changes == {"baseBranch": "release", "stats": {"files": 1}}

    # The next new task starts where this one works.
    open_app(page, kandev_server)
    page.get_by_role("button", name="New task").first.click()
    remembered = page.get_by_test_id("repository-choice")
    expect(remembered).to_have_count(1)
    expect(remembered).to_have_attribute("data-repository-id", repo["id"])
    expect(remembered.get_by_test_id("base-branch")).to_have_value("release")


def test_an_idle_tasks_page_changes_the_base_branch_of_its_repository(
    page: Any, kandev_server: KandevServer, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    repo = repository_with_release(kandev_server, tmp_path)
    task = served_task(
        kandev_server.mutate, kandev_server.workspace_id, unique("Idle"), repositories=[{"repositoryId": repo["id"]}]
    )
    open_app(page, kandev_server, f"/tasks/{task['id']}")
    expect(page.get_by_test_id("task-checkout")).to_contain_text("base main")
    page.get_by_test_id("change-placement").click()
    dialog = page.get_by_test_id("placement-dialog")
    row = dialog.get_by_test_id("placement-repository")
    expect(row.get_by_test_id("base-branch")).to_have_value("main")
    row.get_by_test_id("base-branch").select_option("release")
    expect(page.get_by_test_id("task-checkout")).to_contain_text("base release")
    dialog.get_by_role("button", name="Close").click()
    [checkout] = kandev_server.gql(CHECKOUTS, id=task["id"])["task"]["repositories"]
    assert checkout["baseBranch"] == "release"


CREATE_EXECUTOR = """mutation($i: CreateExecutorProfileInput!) { createExecutorProfile(input: $i) {
  __typename ... on ExecutorProfilePayload { executorProfile { id name } } } }"""
EXECUTOR = "query($id: ID!) { task(id: $id) { executorProfileId } }"


def test_a_subtask_runs_where_its_parent_does_unless_the_subtask_form_chooses_another_executor(
    page: Any, kandev_server: KandevServer, default_executor_after: None
) -> None:
    from playwright.sync_api import expect

    made = [
        kandev_server.mutate(
            CREATE_EXECUTOR,
            "createExecutorProfile",
            i={"workspaceId": kandev_server.workspace_id, "name": unique(name), "kind": "SANDBOX"},
        )["executorProfile"]
        for name in ("Parent's box", "Other box")
    ]
    parents_box, other_box = made
    parent = served_task(
        kandev_server.mutate, kandev_server.workspace_id, unique("Boxed parent"), executorProfileId=parents_box["id"]
    )
    open_app(page, kandev_server, f"/tasks/{parent['id']}")

    def subtask(title: str, executor: str | None) -> str:
        page.get_by_test_id("new-subtask").click()
        dialog = page.get_by_test_id("subtask-dialog")
        select = dialog.get_by_test_id("executor-select")
        expect(select.locator("option", has_text=other_box["name"])).to_have_count(1)
        expect(select).to_have_value("")
        expect(select.locator("option:checked")).to_have_text("Same as the parent task")
        if executor:
            select.select_option(executor)
        dialog.locator('input[name="title"]').fill(title)
        dialog.get_by_test_id("create-task-submit").click()
        expect(dialog).to_be_hidden()
        row = page.get_by_test_id("sidebar").get_by_test_id("task-row").filter(has_text=title)
        expect(row).to_be_visible()
        task_id = row.get_attribute("data-task-id")
        assert task_id
        return task_id

    inheriting = subtask(unique("Inherits"), None)
    elsewhere = subtask(unique("Elsewhere"), other_box["id"])
    assert kandev_server.gql(EXECUTOR, id=inheriting)["task"]["executorProfileId"] == parents_box["id"]
    assert kandev_server.gql(EXECUTOR, id=elsewhere)["task"]["executorProfileId"] == other_box["id"]
