"""The real Claude Code ACP adapter through a whole task in headless Chromium, offline: `kandev serve` runs it against
the local fake model API; the person grants the permission it asks in the task page, and the page shows the Kandev
tool it called, the file it wrote, its answer, the context window and cost it reported, and the card's cost."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.browser.conftest import KandevServer, serve
from tests.browser.test_web_client import no_horizontal_scroll, open_app
from tests.support.fake_model_api import (
    FINAL_TEXT,
    KANDEV_TOOL,
    USAGE,
    WRITTEN_FILE,
    WRITTEN_TEXT,
    FakeModelApi,
    fake_model_api,
)
from tests.support.git_repos import make_repository
from tests.support.real_agents import claude_code_env, installed_adapters

pytestmark = pytest.mark.slow

TURN_TIMEOUT_MS = 180_000
CREATE_PROFILE = """mutation($i: CreateAgentProfileInput!) { createAgentProfile(input: $i) { __typename
  ... on CreateAgentProfilePayload { agentProfile { id } } ... on Error { message } } }"""
CREATE_REPOSITORY = """mutation($i: CreateRepositoryInput!) { createRepository(input: $i) { __typename
  ... on RepositoryPayload { repository { id } } ... on Error { message } } }"""
CREATE_TASK = """mutation($i: CreateTaskInput!) { createTask(input: $i) { __typename
  ... on CreateTaskPayload { task { id sessions { id } } } ... on Error { message } } }"""
USAGE_OF = """query($id: ID!) { session(id: $id) { turns { stopReason
  usage { inputTokens outputTokens costUsd contextUsed contextSize } } } }"""


@dataclass
class RealAgentServer:
    server: KandevServer
    root: Path  # the server's work dir is root/work
    claude: Path
    model_api: FakeModelApi


@pytest.fixture(scope="module")
def claude_server(web_client: Path) -> Iterator[RealAgentServer]:
    """A server of its own, its work dir where the test can look, the real adapter and the fake model API."""
    bins = installed_adapters()
    root = Path(tempfile.mkdtemp(prefix="kandev-real-agent-ui-"))
    with fake_model_api() as fake, serve("real-agent-ui-serve.log", KANDEV_WORK_DIR=str(root / "work")) as (base, _):
        workspaces = httpx.post(f"{base}/graphql", json={"query": "{ workspaces { id } }"}, timeout=10).json()
        server = KandevServer(base=base, workspace_id=workspaces["data"]["workspaces"][0]["id"])
        yield RealAgentServer(server, root, bins / "claude-agent-acp", fake)


def start_claude_task(real: RealAgentServer) -> tuple[str, str]:
    """A task on a fresh repository whose agent is the real Claude Code, asking for permission; (task, session)."""
    server = real.server
    profile = server.mutate(
        CREATE_PROFILE,
        "createAgentProfile",
        i={
            "workspaceId": server.workspace_id,
            "name": "Claude Code (real)",
            "kind": "ACP",
            "command": [str(real.claude)],
            "env": claude_code_env(real.root / "claude-home", real.model_api.base_url),
            "supportsMcp": True,
            "permissionPolicy": "ASK",
        },
    )["agentProfile"]
    repo = make_repository(real.root / "repo")
    repository = server.mutate(
        CREATE_REPOSITORY, "createRepository", i={"workspaceId": server.workspace_id, "name": "repo", "path": str(repo)}
    )["repository"]
    task = server.mutate(
        CREATE_TASK,
        "createTask",
        i={
            "workspaceId": server.workspace_id,
            "title": f"Write {WRITTEN_FILE}",
            "prompt": f"List the Kandev tasks, then write {WRITTEN_FILE}.",
            "agentProfileId": profile["id"],
            "repositories": [{"repositoryId": repository["id"]}],
        },
    )["task"]
    return task["id"], task["sessions"][0]["id"]


def test_a_person_grants_claude_codes_permission_in_the_task_page_and_sees_its_tool_calls_file_answer_and_cost(
    page: Any, phone: Any, claude_server: RealAgentServer, screenshots: Path
) -> None:
    from playwright.sync_api import expect

    server = claude_server.server
    task_id, session_id = start_claude_task(claude_server)
    open_app(page, server, f"/tasks/{task_id}")
    answer = page.get_by_test_id("msg-agent").filter(has_text=FINAL_TEXT)
    allow = page.get_by_test_id("permission-allow")
    granted: list[str] = []
    # Grant what the agent asks, in the page, until its answer arrives (bounded: the agent asks once or twice).
    for _ in range(5):
        allow.first.or_(answer).first.wait_for(timeout=TURN_TIMEOUT_MS)
        if answer.count():
            break
        card = page.get_by_test_id("permission-card").first
        granted.append(card.locator(".action-title").inner_text())
        if len(granted) == 1:
            page.screenshot(path=str(screenshots / "desktop-real-agent-permission.png"), full_page=True)
        allow.first.click()
        expect(card).to_be_hidden(timeout=30_000)
    expect(answer).to_be_visible()
    assert any(WRITTEN_FILE in title for title in granted), granted

    tools = page.get_by_test_id("msg-tool")
    expect(tools.filter(has=page.locator(".tool-title", has_text=KANDEV_TOOL))).to_have_attribute(
        "class", re.compile("tool-completed")
    )
    # (the Kandev tool's output names the task, "Write hello.txt", too: the titles tell the calls apart)
    write = tools.filter(has=page.locator(".tool-title", has_text=f"Write {WRITTEN_FILE}"))
    write.locator("summary").click()
    change = write.get_by_test_id("tool-diff")
    expect(change).to_have_attribute("data-path", re.compile(rf"(^|/){re.escape(WRITTEN_FILE)}$"))
    expect(change).to_contain_text("(new file)")
    expect(change.locator("pre")).to_contain_text(f"+ {WRITTEN_TEXT.strip()}")
    page.screenshot(path=str(screenshots / "desktop-real-agent-change.png"), full_page=True)
    [written] = list((claude_server.root / "work").rglob(WRITTEN_FILE))
    assert written.read_text() == WRITTEN_TEXT

    # What the agent reported: three model replies of the fake's usage, the context window, and Claude's own price.
    [turn] = server.gql(USAGE_OF, id=session_id)["session"]["turns"]
    usage = turn["usage"]
    assert (usage["inputTokens"], usage["outputTokens"]) == (USAGE["input"] * 3, USAGE["output"] * 3), usage
    gauge = page.get_by_test_id("context-gauge")
    expect(gauge).to_have_attribute("data-used", str(usage["contextUsed"]))
    expect(gauge).to_have_attribute("data-size", str(usage["contextSize"]))
    expect(page.get_by_test_id("task-spend")).to_contain_text("$")
    page.screenshot(path=str(screenshots / "desktop-real-agent-task.png"), full_page=True)

    open_app(page, server, "/")
    cost = page.locator(f'[data-testid="task-card"][data-task-id="{task_id}"]').get_by_test_id("card-cost")
    expect(cost).to_contain_text(f"{usage['inputTokens']} input and {usage['outputTokens']} output tokens")
    assert float(cost.get_attribute("data-cost-usd")) == pytest.approx(usage["costUsd"], abs=1e-6)

    open_app(phone, server, f"/tasks/{task_id}")
    expect(phone.get_by_test_id("msg-agent").filter(has_text=FINAL_TEXT)).to_be_visible()
    expect(phone.get_by_test_id("context-gauge")).to_be_visible()
    no_horizontal_scroll(phone)
    phone.screenshot(path=str(screenshots / "mobile-real-agent-task.png"), full_page=True)
