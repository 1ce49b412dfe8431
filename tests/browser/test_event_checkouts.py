"""A provider event chooses its run's checkout, seen in a real headless Chromium against a real `kandev serve`
(its embedded worker runs the run) pointed at the fake GitHub and a local TLS git server: a signed push
delivery fires a push automation, and the run's conversation shows the branch its task works on (the pushed
branch, the diff base beside it)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from kandev.adapters.github.deliveries import signature_of
from tests.browser.conftest import KandevServer, serve
from tests.browser.test_web_client import open_app
from tests.support.fake_github import FakeGitHub, fake_github
from tests.support.git_http import GitHttpServer, bare_from, git_http_server
from tests.support.git_repos import with_branch_ahead
from tests.support.server import served_in_thread

pytestmark = pytest.mark.slow

TOKEN = "tok-9c4f1e7b-browser-checkout"
SECRET = "browser-app-webhook-secret"
INSTALLATION = "7272"
KEY = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAsecretkeymaterial\n-----END RSA PRIVATE KEY-----"
ERRORS = "__typename ... on Error { code message }"
RUNS = "query($id: ID!) { automationRuns(automationId: $id) { nodes { id status taskId } } }"


@pytest.fixture(scope="module")
def github_world(web_client: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A served Kandev connected to the fake GitHub (a token, an App routed to its workspace) and acme/app on
    the git server with a `feature` branch one commit ahead of main."""
    folder = tmp_path_factory.mktemp("event-checkouts")
    with (
        served_in_thread(fake_github, "fake-github") as github,
        git_http_server(folder / "git-http", read_tokens=set(), push_tokens={TOKEN}) as git_server,
        serve(
            "browser-event-checkouts-serve.log", KANDEV_GITHUB_API_URL=github.url, GIT_SSL_CAINFO=git_server.ca_file
        ) as (base, _env),
    ):
        server = KandevServer(base=base, workspace_id=_workspace(base))
        yield {"server": server, "github": github, "git": git_server, **_acme_app(folder, github, git_server)}


def _workspace(base: str) -> str:
    workspaces = httpx.post(f"{base}/graphql", json={"query": "{ workspaces { id } }"}, timeout=10).json()
    return str(workspaces["data"]["workspaces"][0]["id"])


def _acme_app(folder: Path, github: FakeGitHub, server: GitHttpServer) -> dict[str, str]:
    work, head, _ = with_branch_ahead(folder / "app")
    bare_from(work, server, "acme/app")
    github.tokens[TOKEN] = "maintainer"
    github.clone_urls["acme/app"] = server.repository_url("acme/app")
    return {"head": head}


def test_a_push_runs_on_the_pushed_branch_and_its_conversation_shows_which(
    page: Any, github_world: dict[str, Any], screenshots: Path
) -> None:
    from playwright.sync_api import expect

    server: KandevServer = github_world["server"]
    workspace = server.workspace_id
    server.connect_github_app(TOKEN, "42", KEY, SECRET, INSTALLATION)
    profiles = server.gql("query($w: ID!) { agentProfiles(workspaceId: $w) { id kind } }", w=workspace)
    automation = server.mutate(
        f"""mutation($i: CreateAutomationInput!) {{ createAutomation(input: $i) {{ {ERRORS}
          ... on AutomationPayload {{ automation {{ id }} }} }} }}""",
        "createAutomation",
        i={
            "workspaceId": workspace,
            "name": "Check each push",
            "prompt": "/say checked {{data.branch}}",
            "agentProfileId": next(p["id"] for p in profiles["agentProfiles"] if p["kind"] == "SCRIPTED"),
            "triggers": [{"type": "GITHUB_PUSH", "filters": {"repositories": ["acme/app"]}}],
        },
    )["automation"]
    body = json.dumps(
        {
            "ref": "refs/heads/feature",
            "after": github_world["head"],
            "before": "1" * 40,
            "repository": {"full_name": "acme/app"},
            "installation": {"id": int(INSTALLATION)},
        }
    ).encode()
    delivered = httpx.post(
        f"{server.base}/api/v1/github/webhook",
        content=body,
        headers={
            "X-GitHub-Event": "push",
            "X-GitHub-Delivery": "d-1",
            "X-Hub-Signature-256": signature_of(SECRET, body),
        },
        timeout=20,
    )
    assert delivered.status_code == 202 and delivered.json()["fired"] == 1, delivered.text
    done = server.wait_for(
        RUNS, lambda d: [r["status"] for r in d["automationRuns"]["nodes"]] == ["SUCCEEDED"], 60, id=automation["id"]
    )
    task_id = done["automationRuns"]["nodes"][0]["taskId"]

    open_app(page, server, f"/automations/{automation['id']}")
    checkout = page.get_by_test_id("run-conversation").get_by_test_id("task-checkout")
    expect(checkout).to_have_attribute("data-source-branch", "feature")
    expect(checkout).to_contain_text("app on feature · base main")
    page.screenshot(path=str(screenshots / "desktop-run-checkout.png"), full_page=True)
    # The run's task says the same wherever it is read.
    repositories = server.gql(
        "query($id: ID!) { task(id: $id) { repositories { sourceBranch branch baseBranch } } }", id=task_id
    )["task"]["repositories"]
    assert repositories == [{"sourceBranch": "feature", "branch": f"feature-{task_id[:8]}", "baseBranch": "main"}]
