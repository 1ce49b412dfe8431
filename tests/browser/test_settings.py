"""The settings pages, in a real headless Chromium against a real `kandev serve`: secrets set and replaced
without their values ever reaching the page, agent profiles with a secret-backed environment (one that
can't run says why), a task run on the new profile, access tokens shown once and revoked, workspaces
created, renamed and switched, and no page scrolling sideways on a phone."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import KandevServer, serve
from tests.browser.test_web_client import no_horizontal_scroll, open_app, unique
from tests.support.factories import served_task
from tests.support.git_repos import make_repository

pytestmark = pytest.mark.slow

FIRST_VALUE = "sk-browser-first-value-1234"
SECOND_VALUE = "sk-browser-second-value-5678"


def accept_dialogs(page: Any) -> None:
    page.on("dialog", lambda dialog: dialog.accept())


def test_a_secret_backed_profile_is_made_in_settings_and_runs_a_task_and_no_secret_value_reaches_the_page(
    page: Any, kandev_server: KandevServer, screenshots: Path
) -> None:
    from playwright.sync_api import expect

    name = unique("KEY").replace(" ", "_").upper()
    open_app(page, kandev_server, "/settings/secrets")
    page.get_by_test_id("secret-name").fill(name)
    page.get_by_test_id("secret-value").fill(FIRST_VALUE)
    page.get_by_test_id("add-secret").click()
    row = page.locator(f'[data-testid="secret"][data-name="{name}"]')
    expect(row).to_be_visible()
    row.get_by_test_id("replace-secret").click()
    row.get_by_test_id("secret-new-value").fill(SECOND_VALUE)
    row.get_by_test_id("save-secret-value").click()
    expect(row.get_by_test_id("replace-secret")).to_be_visible()
    page.get_by_test_id("secret-name").fill(name)  # the same name again: a typed refusal
    page.get_by_test_id("secret-value").fill("x")
    page.get_by_test_id("add-secret").click()
    expect(page.get_by_test_id("secret-error")).to_contain_text("already exists")

    page.get_by_test_id("settings-tab-agents").click()
    page.get_by_test_id("new-profile").click()
    form = page.get_by_test_id("profile-form")
    absent = unique("Not installed")
    form.get_by_test_id("profile-name").fill(absent)
    form.get_by_test_id("profile-command").fill("definitely-not-an-installed-agent\n--acp")
    form.get_by_test_id("profile-env").fill("NO EQUALS SIGN")
    form.get_by_test_id("save-profile").click()
    expect(form.get_by_test_id("profile-error")).to_contain_text("is not NAME=value")
    form.get_by_test_id("profile-env").fill(f"API_KEY=${{secret:{name}}}")
    form.get_by_test_id("save-profile").click()
    missing = page.locator(f'[data-testid="profile"][data-name="{absent}"]')
    expect(missing.get_by_test_id("profile-availability")).to_contain_text(
        "Unavailable: 'definitely-not-an-installed-agent' is not on the server's PATH"
    )

    profile = unique("Keyed agent")
    page.get_by_test_id("new-profile").click()
    form.get_by_test_id("profile-name").fill(profile)
    form.get_by_test_id("profile-kind").select_option("SCRIPTED")
    form.get_by_test_id("profile-env").fill(f"API_KEY=${{secret:{name}}}")
    form.get_by_test_id("save-profile").click()
    made = page.locator(f'[data-testid="profile"][data-name="{profile}"]')
    expect(made.get_by_test_id("profile-availability")).to_have_text("Available")
    made.get_by_test_id("edit-profile").click()
    expect(form.get_by_test_id("profile-env")).to_have_value(f"API_KEY=${{secret:{name}}}")  # the reference only
    page.screenshot(path=str(screenshots / "desktop-settings-agents.png"))
    html = page.content()
    assert FIRST_VALUE not in html and SECOND_VALUE not in html

    task = served_task(kandev_server.mutate, kandev_server.workspace_id, unique("On the new profile"))
    page.goto(f"{kandev_server.base}/tasks/{task['id']}")
    picker = page.get_by_test_id("start-profile")
    picker.select_option(label=profile)
    page.get_by_test_id("composer-text").fill("/say ran with the secret-backed profile")
    page.get_by_test_id("start-task").click()
    expect(page.get_by_test_id("msg-agent")).to_have_text("ran with the secret-backed profile")
    assert SECOND_VALUE not in page.content()


def test_an_access_token_is_shown_once_listed_and_revoked(page: Any, kandev_server: KandevServer) -> None:
    from playwright.sync_api import expect

    accept_dialogs(page)
    name = unique("laptop")
    open_app(page, kandev_server, "/settings/tokens")
    page.get_by_test_id("token-name").fill(name)
    page.get_by_test_id("create-token").click()
    shown = page.get_by_test_id("new-token").locator("code")
    expect(shown).to_have_text(re.compile(r"^kdv_\S+$"))
    token = shown.inner_text()
    page.get_by_test_id("dismiss-token").click()
    expect(page.get_by_test_id("new-token")).to_have_count(0)
    assert token not in page.content()  # gone from the page once dismissed
    row = page.locator(f'[data-testid="token"][data-name="{name}"]')
    row.get_by_test_id("revoke-token").click()
    expect(row.get_by_test_id("token-revoked")).to_be_visible()


def test_a_workspace_is_created_switched_to_and_renamed_and_settings_fit_a_phone(
    web_client: Path, page: Any, phone: Any, screenshots: Path
) -> None:
    from playwright.sync_api import expect

    with serve("browser-tests-settings-serve.log") as (base, _env):
        page.goto(base + "/settings/workspace")
        page.get_by_test_id("new-workspace-name").fill("Team B")
        # The new workspace's details are held back until a new name is typed: the end of that load must not
        # overwrite what was typed meanwhile.
        held: list[Any] = []
        page.route(
            "**/graphql",
            lambda route: (
                held.append(route) if "query Workspace(" in (route.request.post_data or "") else route.continue_()
            ),
        )
        page.get_by_test_id("create-workspace").click()
        expect(page.get_by_test_id("workspace-name")).to_have_value("Team B")
        expect(page.locator("header select")).to_have_value(
            page.locator("header select option", has_text="Team B").get_attribute("value")
        )
        page.get_by_test_id("workspace-name").fill("Team Blue")
        assert held, "the new workspace's load was held"
        for route in held:
            route.continue_()
        page.unroute("**/graphql")
        page.wait_for_load_state("networkidle")
        expect(page.get_by_test_id("workspace-name")).to_have_value("Team Blue")
        page.get_by_test_id("rename-workspace").click()
        expect(page.locator("header select option", has_text="Team Blue")).to_have_count(1)
        names = httpx_names(base)
        assert "Team Blue" in names and "Team B" not in names

        for section in ("workspace", "agents", "executors", "repositories", "secrets", "tokens"):
            phone.goto(f"{base}/settings/{section}")
            expect(phone.get_by_test_id("settings")).to_be_visible()
            phone.wait_for_load_state("networkidle")  # what the section loads is laid out before it is measured
            no_horizontal_scroll(phone)
        phone.screenshot(path=str(screenshots / "mobile-settings.png"))


def httpx_names(base: str) -> list[str]:
    import httpx

    body = httpx.post(f"{base}/graphql", json={"query": "{ workspaces { name } }"}, timeout=10).json()
    return [w["name"] for w in body["data"]["workspaces"]]


def test_executor_profiles_are_added_renamed_and_deleted_and_a_repository_is_added_or_refused_with_why(
    page: Any, kandev_server: KandevServer, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    accept_dialogs(page)
    name = unique("Team worktree")
    open_app(page, kandev_server, "/settings/executors")
    page.get_by_test_id("executor-name").fill(name)
    page.get_by_test_id("executor-kind").select_option("LOCAL")
    page.get_by_test_id("add-executor").click()
    row = page.locator(f'[data-testid="executor"][data-name="{name}"]')
    expect(row).to_contain_text("Local: in the repository itself")
    row.get_by_test_id("executor-rename").fill(f"{name} (renamed)")
    row.get_by_test_id("save-executor").click()
    renamed = page.locator(f'[data-testid="executor"][data-name="{name} (renamed)"]')
    expect(renamed).to_be_visible()
    renamed.get_by_test_id("delete-executor").click()
    expect(renamed).to_have_count(0)

    repository = make_repository(tmp_path / "project")
    page.get_by_test_id("settings-tab-repositories").click()
    repo_name = unique("project")
    page.get_by_test_id("repository-name").fill(repo_name)
    page.get_by_test_id("repository-path").fill(str(tmp_path / "not-a-repository"))
    page.get_by_test_id("add-repository").click()
    expect(page.get_by_test_id("repository-error")).to_be_visible()
    page.get_by_test_id("repository-path").fill(str(repository))
    page.get_by_test_id("add-repository").click()
    added = page.locator(f'[data-testid="repository"][data-name="{repo_name}"]')
    expect(added).to_contain_text(str(repository))
    expect(added).to_contain_text("default branch main")
