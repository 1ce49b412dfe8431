"""The automation editor in a real headless Chromium against a real `kandev serve`: a schedule checked as it is
typed (its meaning and next fires in the chosen timezone), a GitHub condition, repository chips, a server
refusal shown without saving anything, a webhook's one-time secret that works, editing, and a phone."""

from __future__ import annotations

import hashlib
import hmac
import re
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.browser.conftest import KandevServer
from tests.browser.test_accessibility import serious_violations
from tests.browser.test_web_client import no_horizontal_scroll, open_app, unique
from tests.support.git_repos import make_repository

pytestmark = pytest.mark.slow

AUTOMATION = """query($id: ID!) { automation(id: $id) { name enabled prompt context
  triggers { type expression timezone filters } repositories { repositoryId baseBranch } } }"""
COUNT = "query($w: ID!) { automations(workspaceId: $w) { id } }"
REVEAL = (
    "mutation($id: ID!) { revealWebhookSecret(automationId: $id) "
    "{ __typename ... on WebhookSecretPayload { secret } } }"
)
ADD_REPOSITORY = (
    "mutation($i: CreateRepositoryInput!) "
    "{ createRepository(input: $i) { __typename ... on RepositoryPayload { repository { id name } } } }"
)


def saved_id(page: Any) -> str:
    from playwright.sync_api import expect

    expect(page).to_have_url(re.compile(r"/automations/[^/]+/edit$"))
    return page.url.rsplit("/", 2)[-2]


def test_a_scheduled_automation_with_a_github_condition_and_a_repository_is_made_in_the_editor(
    page: Any, kandev_server: KandevServer, screenshots: Path, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    repo_name = unique("automated")
    repository = kandev_server.mutate(
        ADD_REPOSITORY,
        "createRepository",
        i={"workspaceId": kandev_server.workspace_id, "name": repo_name, "path": str(make_repository(tmp_path / "r"))},
    )["repository"]
    open_app(page, kandev_server, "/automations/new")
    form = page.get_by_test_id("automation-form")
    name = unique("Nightly triage")
    form.get_by_test_id("automation-name").fill(name)
    form.get_by_test_id("automation-prompt").fill("Triage what changed: {{trigger.type}}")
    form.get_by_test_id("schedule-preset").select_option("custom")
    form.get_by_test_id("schedule-expression").fill("61 * * * *")
    expect(form.get_by_test_id("schedule-error")).to_be_visible()
    form.get_by_test_id("schedule-expression").fill("*/15 9-17 * * 1-5")
    form.get_by_test_id("schedule-timezone").fill("Europe/Berlin")
    expect(form.get_by_test_id("schedule-description")).to_be_visible()
    expect(form.get_by_test_id("schedule-next-fires").locator("li")).to_have_count(5)
    form.get_by_test_id("github-on").check()
    form.get_by_test_id("github-type").select_option("GITHUB_PUSH")
    form.get_by_test_id("github-repositories").fill("acme/api")
    form.get_by_test_id("github-branches").fill("main, release/*")
    form.get_by_test_id("automation-add-repository").select_option(repository["id"])
    chip = form.get_by_test_id("automation-repository")
    expect(chip).to_contain_text(repo_name)
    chip.get_by_role("textbox").fill("main")
    assert serious_violations(page) == []
    page.screenshot(path=str(screenshots / "desktop-automation-editor.png"), full_page=True)
    form.get_by_test_id("save-automation").click()

    automation_id = saved_id(page)
    saved = kandev_server.gql(AUTOMATION, id=automation_id)["automation"]
    assert saved["name"] == name and saved["enabled"] is True
    by_type = {t["type"]: t for t in saved["triggers"]}
    assert by_type["SCHEDULED"]["expression"] == "*/15 9-17 * * 1-5"
    assert by_type["SCHEDULED"]["timezone"] == "Europe/Berlin"
    assert by_type["GITHUB_PUSH"]["filters"] == {"repositories": ["acme/api"], "branches": ["main", "release/*"]}
    assert saved["repositories"] == [{"repositoryId": repository["id"], "baseBranch": "main"}]

    # Edited: the form opens with what was saved, and a change reaches the server.
    page.reload()
    expect(form.get_by_test_id("automation-name")).to_have_value(name)
    expect(form.get_by_test_id("schedule-expression")).to_have_value("*/15 9-17 * * 1-5")
    form.get_by_test_id("automation-enabled").uncheck()
    form.get_by_test_id("automation-context").select_option("CONTINUE_SESSION")
    expect(form.get_by_test_id("automation-concurrency")).to_be_disabled()
    form.get_by_test_id("save-automation").click()
    kandev_server.wait_for(AUTOMATION, lambda d: d["automation"]["enabled"] is False, id=automation_id)
    assert kandev_server.gql(AUTOMATION, id=automation_id)["automation"]["context"] == "CONTINUE_SESSION"


def test_the_server_refusing_a_save_shows_why_and_stores_nothing(page: Any, kandev_server: KandevServer) -> None:
    from playwright.sync_api import expect

    before = len(kandev_server.gql(COUNT, w=kandev_server.workspace_id)["automations"])
    open_app(page, kandev_server, "/automations/new")
    form = page.get_by_test_id("automation-form")
    form.get_by_test_id("automation-name").fill(unique("Never saved"))
    form.get_by_test_id("automation-prompt").fill("x")
    form.get_by_test_id("schedule-preset").select_option("custom")
    form.get_by_test_id("schedule-expression").fill("not a schedule")
    form.get_by_test_id("save-automation").click()
    expect(form.get_by_test_id("automation-save-error")).to_be_visible()
    expect(page).to_have_url(re.compile(r"/automations/new$"))
    assert len(kandev_server.gql(COUNT, w=kandev_server.workspace_id)["automations"]) == before


def test_a_webhook_automation_shows_its_url_and_secret_once_and_the_secret_works(
    page: Any, kandev_server: KandevServer
) -> None:
    from playwright.sync_api import expect

    open_app(page, kandev_server, "/automations/new")
    form = page.get_by_test_id("automation-form")
    form.get_by_test_id("automation-name").fill(unique("Deploy hook"))
    form.get_by_test_id("automation-prompt").fill("Check the deploy: {{data.version}}")
    form.get_by_test_id("mode-webhook").check()
    form.get_by_test_id("save-automation").click()
    automation_id = saved_id(page)
    shown = page.get_by_test_id("webhook-secret")
    expect(shown).to_be_visible()
    url = page.get_by_test_id("webhook-url").inner_text()
    secret = page.get_by_test_id("webhook-secret-value").inner_text()
    assert url == f"{kandev_server.base}/api/v1/automations/webhook/{automation_id}"
    revealed = kandev_server.mutate(REVEAL, "revealWebhookSecret", id=automation_id)
    assert revealed["secret"] == secret
    answer = httpx.post(url, json={"version": "1.2.3"}, headers={"X-Webhook-Secret": secret}, timeout=10)
    assert answer.status_code == 202, answer.text
    wrong = httpx.post(url, json={}, headers={"X-Webhook-Secret": "wrong"}, timeout=10)
    assert wrong.status_code in (401, 403, 404)

    page.reload()  # once: a reload shows no secret
    expect(page.get_by_test_id("automation-name")).to_be_visible()
    expect(page.get_by_test_id("webhook-secret")).to_have_count(0)


def test_a_webhook_taking_signed_deliveries_only_shows_how_to_sign_and_refuses_the_bare_secret(
    page: Any, kandev_server: KandevServer
) -> None:
    from playwright.sync_api import expect

    open_app(page, kandev_server, "/automations/new")
    form = page.get_by_test_id("automation-form")
    form.get_by_test_id("automation-name").fill(unique("Signed hook"))
    form.get_by_test_id("automation-prompt").fill("Deploy {{data.version}}")
    form.get_by_test_id("mode-webhook").check()
    form.get_by_test_id("webhook-signed-only").check()
    form.get_by_test_id("save-automation").click()
    automation_id = saved_id(page)
    url = page.get_by_test_id("webhook-url").inner_text()
    secret = page.get_by_test_id("webhook-secret-value").inner_text()
    scheme = page.get_by_test_id("webhook-signing").inner_text()
    for words in ("X-Kandev-Timestamp", "X-Kandev-Signature", "sha256=", "HMAC-SHA256", "<timestamp>.<body>", url):
        assert words in scheme, words
    saved = kandev_server.gql(AUTOMATION.replace("filters", "filters requireSignature"), id=automation_id)
    assert saved["automation"]["triggers"] == [
        {"type": "WEBHOOK", "expression": None, "timezone": None, "filters": None, "requireSignature": True}
    ]

    # A sender following the page: signed as it says, accepted once; the bare secret and a replay refused.
    body = b'{"version":"1.2.3"}'
    timestamp = str(int(time.time()))
    digest = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    headers = {"X-Kandev-Timestamp": timestamp, "X-Kandev-Signature": f"sha256={digest}"}
    assert httpx.post(url, content=body, headers=headers, timeout=10).status_code == 202
    assert httpx.post(url, content=body, headers=headers, timeout=10).status_code == 409
    assert httpx.post(url, content=body, headers={"X-Webhook-Secret": secret}, timeout=10).status_code == 401

    page.reload()  # the setting reads back into the editor
    expect(page.get_by_test_id("webhook-signed-only")).to_be_checked()


def test_the_editor_fits_a_phone(phone: Any, kandev_server: KandevServer, screenshots: Path) -> None:
    from playwright.sync_api import expect

    open_app(phone, kandev_server, "/automations/new")
    phone.get_by_test_id("github-on").check()
    expect(phone.get_by_test_id("github-field")).to_be_visible()
    expect(phone.get_by_test_id("schedule-next-fires").locator("li")).to_have_count(5)
    no_horizontal_scroll(phone)
    assert serious_violations(phone) == []
    phone.screenshot(path=str(screenshots / "mobile-automation-editor.png"), full_page=True)


def test_the_form_says_an_empty_repository_list_is_not_evaluated_and_saves_all_repositories_explicitly(
    page: Any, kandev_server: KandevServer
) -> None:
    """The spec's rule for GitHub conditions: no repository means not evaluated; "All repositories on <host>"
    is its own choice, stored as such."""
    from playwright.sync_api import expect

    open_app(page, kandev_server, "/automations/new")
    form = page.get_by_test_id("automation-form")
    form.get_by_test_id("automation-name").fill(unique("Every PR"))
    form.get_by_test_id("automation-prompt").fill("Review {{pr.url}}")
    form.get_by_test_id("github-on").check()
    for kind in ("GITHUB_PR", "GITHUB_PUSH", "GITHUB_CI"):
        form.get_by_test_id("github-type").select_option(kind)
        field = form.get_by_test_id("github-field")
        expect(field).to_contain_text("empty: none: the condition is not evaluated")
        expect(field).to_contain_text("All repositories on the connected GitHub host")
    form.get_by_test_id("github-type").select_option("GITHUB_PR")
    form.get_by_test_id("github-repositories").fill("acme/api")
    form.get_by_test_id("github-all_repositories").check()
    expect(form.get_by_test_id("github-repositories")).to_be_disabled()
    expect(form.get_by_test_id("github-repositories")).to_have_value("")
    form.get_by_test_id("save-automation").click()

    saved = kandev_server.gql(AUTOMATION, id=saved_id(page))["automation"]
    [github] = [t for t in saved["triggers"] if t["type"] == "GITHUB_PR"]
    assert github["filters"]["all_repositories"] is True and not github["filters"].get("repositories")
