"""The Ship panel on the task page, in a real headless Chromium against a real `kandev serve` whose scripted agent
changes files in a real git worktree: commit with the agent's suggested message, push to a bare repository served
over TLS, open a pull request on the fake GitHub, its checks shown live from a signed webhook delivery, merge, and
the task moves to its final step; refusals shown in place and changing nothing; the task's settings, and a failing
check with the fix round it started on the card and the board; a repository on no code host merged locally from a
phone; conflicts from an update sent to the agent to resolve."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from kandev.adapters.github.deliveries import signature_of
from tests.browser.conftest import KandevServer, serve
from tests.browser.test_changes_panel import agent_task, repository, write
from tests.browser.test_web_client import no_horizontal_scroll, open_app, unique
from tests.support.fake_github import FakeGitHub, fake_github
from tests.support.git_http import GitHttpServer, bare_from, git_http_server
from tests.support.git_repos import git, make_repository
from tests.support.server import served_in_thread
from tests.support.shipping import ref

pytestmark = pytest.mark.slow

TOKEN = "tok-3d81c5e2-browser-ship"
SECRET = "browser-ship-webhook-secret"
INSTALLATION = 6161
REPO = "acme/app"
ERRORS = "__typename ... on Error { code message }"
CREATE_REPOSITORY = (
    "mutation($i: CreateRepositoryInput!) "
    "{ createRepository(input: $i) { __typename ... on RepositoryPayload { repository { id name } } } }"
)
IDENTITY = f"mutation($i: UpdateAccountInput!) {{ updateAccount(input: $i) {{ {ERRORS} }} }}"
SHIPPED = """query($id: ID!) { task(id: $id) { state workflowStep { name isFinalStep }
  repositories { branch } changes { repositories { commits { sha message } } } } }"""
STEP = "query($id: ID!) { task(id: $id) { state workflowStep { name isFinalStep } } }"
AGENT_TURN = "/say Added a greeting."


@pytest.fixture(scope="module")
def github_world(web_client: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A served Kandev connected to the fake GitHub (a token, an App routed to its workspace, for check events),
    and a git server holding the bare repositories GitHub's pull requests follow."""
    folder = tmp_path_factory.mktemp("ship-panel")
    with (
        served_in_thread(fake_github, "fake-github") as github,
        git_http_server(folder / "git-http", read_tokens=set(), push_tokens={TOKEN}) as git_server,
        serve("browser-ship-serve.log", KANDEV_GITHUB_API_URL=github.url, GIT_SSL_CAINFO=git_server.ca_file) as (
            base,
            _env,
        ),
    ):
        workspaces = httpx.post(f"{base}/graphql", json={"query": "{ workspaces { id } }"}, timeout=10).json()
        server = KandevServer(base=base, workspace_id=workspaces["data"]["workspaces"][0]["id"])
        github.tokens[TOKEN] = "maintainer"
        server.connect_github_app(
            TOKEN, "43", "-----BEGIN RSA PRIVATE KEY-----\nx\n-----END RSA PRIVATE KEY-----", SECRET, str(INSTALLATION)
        )
        yield {"server": server, "github": github, "git": git_server, "folder": folder}


def hosted_repository(world: dict[str, Any], name: str) -> tuple[dict[str, Any], Path]:
    """`name` (owner/repo): a work repository whose origin is its bare clone on the git server, which backs the
    fake's pull requests; the repository as saved, and the bare clone."""
    server: KandevServer = world["server"]
    git_server: GitHttpServer = world["git"]
    work = make_repository(world["folder"] / unique("app").replace(" ", "-"))
    bare = bare_from(work, git_server, name)
    world["github"].git_roots[name] = bare
    git(work, "remote", "add", "origin", git_server.repository_url(name))
    answer = server.mutate(
        CREATE_REPOSITORY,
        "createRepository",
        i={"workspaceId": server.workspace_id, "name": work.name, "path": str(work)},
    )
    return answer["repository"], bare


def deliver_check(server: KandevServer, repository: str, sha: str, run_id: int, conclusion: str) -> None:
    """GitHub's signed check_run delivery for `sha`: the server refreshes the pull request at once."""
    body = json.dumps(
        {
            "action": "completed",
            "check_run": {"id": run_id, "name": "tests", "conclusion": conclusion, "head_sha": sha},
            "repository": {"full_name": repository},
            "installation": {"id": INSTALLATION},
        }
    ).encode()
    headers = {
        "X-GitHub-Event": "check_run",
        "X-GitHub-Delivery": unique("delivery").replace(" ", "-"),
        "X-Hub-Signature-256": signature_of(SECRET, body),
        "Content-Type": "application/json",
    }
    answer = httpx.post(f"{server.base}/api/v1/github/webhook", content=body, headers=headers, timeout=20)
    assert answer.status_code == 202, answer.text


def open_ship(page: Any, server: KandevServer, task_id: str) -> Any:
    from playwright.sync_api import expect

    open_app(page, server, f"/tasks/{task_id}")
    page.get_by_test_id("tab-ship").click()
    panel = page.get_by_test_id("ship-panel")
    expect(panel).to_be_visible()
    return panel


def shown_pr(server: KandevServer, task_id: str) -> dict[str, Any]:
    """The task's pull request as the server holds it (its number and head)."""
    found: dict[str, Any] = server.gql(
        "query($id: ID!) { task(id: $id) { pullRequests { number headSha } } }", id=task_id
    )["task"]["pullRequests"][0]
    return found


def shipped(server: KandevServer, task_id: str) -> dict[str, Any]:
    found: dict[str, Any] = server.gql(SHIPPED, id=task_id)["task"]
    return found


def test_a_change_ships_from_commit_to_a_merged_pull_request_whose_checks_show_live_and_the_task_is_done(
    page: Any, github_world: dict[str, Any], screenshots: Path
) -> None:
    from playwright.sync_api import expect

    server: KandevServer = github_world["server"]
    github: FakeGitHub = github_world["github"]
    app, bare = hosted_repository(github_world, REPO)
    task = agent_task(server, app, "\n".join([write("greet.py", "print('hello')\n"), AGENT_TURN]), "Greet")
    branch = shipped(server, task["id"])["repositories"][0]["branch"]
    panel = open_ship(page, server, task["id"])
    repo = panel.get_by_test_id("ship-repository")
    expect(repo.get_by_test_id("ship-code-host")).to_have_text("on GitHub")

    # The first commit asks for the person's name and email; the agent suggests the message.
    expect(repo.get_by_test_id("git-identity")).to_be_visible()
    repo.get_by_test_id("git-name").fill("Ada Lovelace")
    repo.get_by_test_id("git-email").fill("ada@example.com")
    expect(repo.get_by_test_id("commit-file")).to_have_count(1)
    expect(repo.get_by_test_id("commit-file")).to_have_attribute("data-path", "greet.py")
    repo.get_by_test_id("suggest-message").click()
    expect(repo.get_by_test_id("commit-message")).to_have_value("Apply the task's changes", timeout=60_000)
    repo.get_by_test_id("commit-submit").click()
    expect(repo.get_by_test_id("commit-done")).to_contain_text("Committed")
    expect(repo.get_by_test_id("commit-nothing")).to_have_text("Nothing uncommitted.")
    expect(repo.get_by_test_id("git-identity")).to_have_count(0)  # asked once
    [commit] = shipped(server, task["id"])["changes"]["repositories"][0]["commits"]
    assert commit["message"].startswith("Apply the task's changes\n\nAgent: ")

    # Refused in place, changing nothing: a commit with nothing to commit.
    repo.get_by_test_id("commit-message").fill("Again")
    repo.get_by_test_id("commit-submit").click()
    expect(repo.get_by_test_id("commit-error")).to_have_text("Could not commit: there is nothing to commit")
    assert shipped(server, task["id"])["changes"]["repositories"][0]["commits"] == [commit]

    repo.get_by_test_id("push-submit").click()
    expect(repo.get_by_test_id("push-done")).to_have_text(f"Pushed {branch} at {commit['sha'][:10]}.")
    assert ref(bare, f"refs/heads/{branch}") == commit["sha"]
    # Refused in place, changing nothing: a push to a branch the code host protects.
    github.protected[REPO] = {branch}
    repo.get_by_test_id("push-force").check()
    repo.get_by_test_id("push-submit").click()
    expect(repo.get_by_test_id("push-error")).to_have_text(
        f"Could not push: {branch} is a protected branch on the code host"
    )
    expect(repo.get_by_test_id("push-done")).to_have_count(0)
    assert ref(bare, f"refs/heads/{branch}") == commit["sha"]
    github.protected[REPO] = set()

    # Opened with the server's defaults (a double click sends one request): the card shows it, no checks yet.
    repo.get_by_test_id("pr-draft").check()
    repo.get_by_test_id("pr-draft").uncheck()
    repo.get_by_test_id("open-pr-submit").dblclick()
    card = repo.get_by_test_id("pr-card")
    expect(card.get_by_test_id("pr-state")).to_have_text("Open")
    expect(card.get_by_test_id("pr-link")).to_contain_text(task["title"])
    expect(card.get_by_test_id("pr-checks-summary")).to_have_attribute("data-summary", "none")
    expect(card.get_by_test_id("pr-mergeable")).to_have_attribute("data-mergeable", "mergeable")
    assert len(github.created) == 1
    assert github.created[0]["head"] == branch and github.created[0]["body"] == "Added a greeting."

    # A check completes on GitHub: its delivery refreshes the card live, with the check's status and link.
    run_id = github.add_check(REPO, commit["sha"], "tests", "success")
    deliver_check(server, REPO, commit["sha"], run_id, "success")
    check = card.get_by_test_id("pr-check")
    expect(check).to_have_attribute("data-name", "tests")
    expect(check.get_by_test_id("pr-check-status")).to_have_text("Passed")
    expect(check.get_by_role("link", name="tests")).to_have_attribute("href", f"{github.url}/{REPO}/runs/{run_id}")
    expect(card.get_by_test_id("pr-checks-summary")).to_have_attribute("data-summary", "passing")
    page.screenshot(path=str(screenshots / "desktop-ship.png"), full_page=True)

    # The board card carries the pull request's badge: open, its checks passing.
    open_app(page, server)
    badge = page.locator(f'[data-testid="task-card"][data-task-id="{task["id"]}"]').get_by_test_id("card-pr")
    expect(badge).to_have_attribute("data-state", "open")
    expect(badge).to_have_attribute("data-checks", "passing")
    expect(badge).to_have_text(f"#{shown_pr(server, task['id'])['number']}✓")

    # Merged with a squash (one request for a double click): the task moves to its final step.
    repo = open_ship(page, server, task["id"]).get_by_test_id("ship-repository")
    repo.get_by_test_id("merge-method").select_option("SQUASH")
    repo.get_by_test_id("merge-submit").dblclick()
    expect(repo.get_by_test_id("pr-card").get_by_test_id("pr-state")).to_have_text("Merged")
    assert github.merges == [{"merge_method": "squash", "sha": commit["sha"]}]
    done = server.wait_for(STEP, lambda d: d["task"]["workflowStep"]["isFinalStep"], id=task["id"])
    assert done["task"]["state"] == "COMPLETED"
    expect(page.get_by_test_id("task-step-select").locator("option:checked")).to_have_text(
        done["task"]["workflowStep"]["name"]
    )
    open_app(page, server)
    expect(badge).to_have_attribute("data-state", "merged")


SETTINGS = "query($id: ID!) { task(id: $id) { autoMerge fixFailingChecks { enabled maxRounds } } }"


def test_a_failing_check_shows_on_the_card_and_the_board_with_the_fix_round_the_setting_asked_for(
    page: Any, github_world: dict[str, Any], screenshots: Path
) -> None:
    from playwright.sync_api import expect

    server: KandevServer = github_world["server"]
    github: FakeGitHub = github_world["github"]
    name = "acme/fixes"
    app, _bare = hosted_repository(github_world, name)
    server.mutate(IDENTITY, "updateAccount", i={"gitName": "Ada Lovelace", "gitEmail": "ada@example.com"})
    task = agent_task(server, app, "\n".join([write("fix.py", "x = 1\n"), AGENT_TURN]), "Fix checks")
    repo = open_ship(page, server, task["id"]).get_by_test_id("ship-repository")

    # The task's settings, saved as they change.
    settings = page.get_by_test_id("ship-settings")
    settings.get_by_test_id("fix-checks-enabled").check()
    expect(settings.get_by_test_id("fix-checks-enabled")).to_be_checked()
    settings.get_by_test_id("fix-checks-rounds").select_option("2")
    settings.get_by_test_id("auto-merge").check()
    expect(settings.get_by_test_id("auto-merge")).to_be_checked()
    wanted = {"autoMerge": True, "fixFailingChecks": {"enabled": True, "maxRounds": 2}}
    server.wait_for(SETTINGS, lambda d: d["task"] == wanted, id=task["id"])
    settings.get_by_test_id("auto-merge").uncheck()
    server.wait_for(SETTINGS, lambda d: not d["task"]["autoMerge"], id=task["id"])

    repo.get_by_test_id("commit-message").fill("Add x")
    repo.get_by_test_id("commit-submit").click()
    expect(repo.get_by_test_id("commit-done")).to_contain_text("Committed")
    repo.get_by_test_id("push-submit").click()
    expect(repo.get_by_test_id("push-done")).to_contain_text("Pushed")
    repo.get_by_test_id("pr-title").fill("Fix the tests")
    repo.get_by_test_id("pr-draft").check()
    repo.get_by_test_id("open-pr-submit").click()
    card = repo.get_by_test_id("pr-card")
    expect(card.get_by_test_id("pr-state")).to_have_text("Open · draft")
    expect(card.get_by_test_id("fix-rounds")).to_contain_text("Fix rounds: 0 of at most 2")
    assert (github.created[-1]["title"], github.created[-1]["draft"]) == ("Fix the tests", True)

    # The check fails: the card shows it and the round the failure started; so does the board.
    head = shown_pr(server, task["id"])["headSha"]
    run_id = github.add_check(name, head, "tests", "failure")
    deliver_check(server, name, head, run_id, "failure")
    expect(card.get_by_test_id("pr-checks-summary")).to_have_attribute("data-summary", "failing")
    expect(card.get_by_test_id("pr-check").get_by_test_id("pr-check-status")).to_have_text("Failed")
    expect(card.get_by_test_id("fix-round")).to_have_count(1)
    expect(card.get_by_test_id("fix-round")).to_contain_text("Round 1: tests")
    expect(card.get_by_test_id("fix-rounds")).to_contain_text("Fix rounds: 1 of at most 2")
    card.scroll_into_view_if_needed()
    page.screenshot(path=str(screenshots / "desktop-ship-failing-check.png"))
    # At a phone's width the settings, the card and the forms fit without scrolling sideways.
    page.set_viewport_size({"width": 375, "height": 740})
    expect(card.get_by_test_id("pr-check")).to_be_visible()
    no_horizontal_scroll(page)
    card.scroll_into_view_if_needed()
    page.screenshot(path=str(screenshots / "mobile-ship-failing-check.png"))
    page.set_viewport_size({"width": 1280, "height": 800})
    open_app(page, server)
    badge = page.locator(f'[data-testid="task-card"][data-task-id="{task["id"]}"]').get_by_test_id("card-pr")
    expect(badge).to_have_attribute("data-checks", "failing")
    expect(badge).to_have_attribute(
        "aria-label", f"Pull request #{shown_pr(server, task['id'])['number']}: Open · draft · checks failing"
    )


def test_a_repository_on_no_code_host_is_committed_pushed_and_merged_locally_from_a_phone(
    phone: Any, kandev_server: KandevServer, tmp_path: Path, screenshots: Path
) -> None:
    from playwright.sync_api import expect

    kandev_server.mutate(IDENTITY, "updateAccount", i={"gitName": "Ada Lovelace", "gitEmail": "ada@example.com"})
    work = make_repository(tmp_path / "work")
    bare = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(work), str(bare))
    git(work, "remote", "add", "origin", str(bare))
    answer = kandev_server.mutate(
        CREATE_REPOSITORY,
        "createRepository",
        i={"workspaceId": kandev_server.workspace_id, "name": unique("local").replace(" ", "-"), "path": str(work)},
    )
    prompt = "\n".join([write("notes/a-rather-long-file-name-to-wrap-on-a-phone.md", "one\n"), AGENT_TURN])
    task = agent_task(kandev_server, answer["repository"], prompt, "Local ship")
    panel = open_ship(phone, kandev_server, task["id"])
    repo = panel.get_by_test_id("ship-repository")
    expect(repo.get_by_test_id("ship-code-host")).to_have_text("no code host: merged locally")
    expect(repo.get_by_test_id("commit-file")).to_have_count(1)
    expect(repo.get_by_test_id("open-pr")).to_have_count(0)
    no_horizontal_scroll(phone)

    repo.get_by_test_id("commit-message").fill("Add notes")
    repo.get_by_test_id("commit-submit").click()
    expect(repo.get_by_test_id("commit-done")).to_contain_text("Committed")
    head = shipped(kandev_server, task["id"])["changes"]["repositories"][0]["commits"][0]["sha"]
    repo.get_by_test_id("push-submit").click()
    expect(repo.get_by_test_id("push-done")).to_contain_text(head[:10])
    branch = shipped(kandev_server, task["id"])["repositories"][0]["branch"]
    assert ref(bare, f"refs/heads/{branch}") == head
    no_horizontal_scroll(phone)
    phone.screenshot(path=str(screenshots / "mobile-ship.png"), full_page=True)

    merge = repo.get_by_test_id("merge-submit")
    expect(merge).to_have_text("Merge into main")
    merge.click()
    expect(repo.get_by_test_id("merge-done")).to_contain_text("Merged into main")
    git(bare, "merge-base", "--is-ancestor", head, "refs/heads/main")  # raises unless main now holds it
    done = kandev_server.wait_for(STEP, lambda d: d["task"]["workflowStep"]["isFinalStep"], id=task["id"])
    assert done["task"]["state"] == "COMPLETED"
    no_horizontal_scroll(phone)


def test_conflicts_from_an_update_are_named_and_sent_to_the_agent_to_resolve(
    page: Any, kandev_server: KandevServer, tmp_path: Path, screenshots: Path
) -> None:
    from playwright.sync_api import expect

    kandev_server.mutate(IDENTITY, "updateAccount", i={"gitName": "Ada Lovelace", "gitEmail": "ada@example.com"})
    repo_row = repository(kandev_server, tmp_path)
    task = agent_task(kandev_server, repo_row, "\n".join([write("README", "mine\n"), AGENT_TURN]), "Conflicts")
    panel = open_ship(page, kandev_server, task["id"])
    repo = panel.get_by_test_id("ship-repository")
    repo.get_by_test_id("commit-message").fill("Mine")
    repo.get_by_test_id("commit-submit").click()
    expect(repo.get_by_test_id("commit-done")).to_contain_text("Committed")

    # The base moves with a change of its own to the same line: updating by merge leaves README conflicted.
    source: Path = repo_row["path"]
    (source / "README").write_text("theirs\n")
    git(source, "commit", "-q", "-am", "upstream")
    repo.get_by_test_id("update-merge").click()
    repo.get_by_test_id("update-submit").click()
    expect(repo.get_by_test_id("update-done")).to_have_text(
        "1 file has conflicts: resolve it (or ask the agent) and update again."
    )
    conflicts = repo.get_by_test_id("conflicts")
    expect(conflicts.get_by_test_id("conflict-file")).to_have_text(["README"])
    conflicts.scroll_into_view_if_needed()
    page.screenshot(path=str(screenshots / "desktop-ship-conflicts.png"), full_page=True)

    # The Changes panel shows the same, and its button sends the agent one message naming the file.
    page.get_by_test_id("tab-changes").click()
    notice = page.get_by_test_id("changes-panel").get_by_test_id("conflicts")
    expect(notice.get_by_test_id("conflict-file")).to_have_text(["README"])
    notice.get_by_test_id("ask-agent-resolve").click()
    expect(notice.get_by_test_id("resolve-sent")).to_have_text("Sent to the agent.")
    expect(notice.get_by_test_id("ask-agent-resolve")).to_be_disabled()
    page.get_by_test_id("tab-conversation").click()
    asked = page.get_by_test_id("msg-user").filter(has_text="left merge conflicts in these files")
    expect(asked).to_have_count(1, timeout=60_000)
    expect(asked).to_contain_text("- README")
