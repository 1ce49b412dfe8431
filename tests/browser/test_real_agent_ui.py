"""The real Claude Code and Codex ACP adapters through a whole task in headless Chromium, offline: `kandev serve` runs
each against the local fake model API; a person grants the permissions it asks in the task page, and the page shows
the Kandev tool it called, the file it wrote, its answer, the context window and cost it reported, and the card's
cost."""

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
from tests.support.real_agents import claude_code_env, codex_command, codex_env, installed_adapters

pytestmark = pytest.mark.slow

TURN_TIMEOUT_MS = 180_000
CREATE_PROFILE = """mutation($i: CreateAgentProfileInput!) { createAgentProfile(input: $i) { __typename
  ... on CreateAgentProfilePayload { agentProfile { id } } ... on Error { message } } }"""
CREATE_REPOSITORY = """mutation($i: CreateRepositoryInput!) { createRepository(input: $i) { __typename
  ... on RepositoryPayload { repository { id } } ... on Error { message } } }"""
CREATE_TASK = """mutation($i: CreateTaskInput!) { createTask(input: $i) { __typename
  ... on CreateTaskPayload { task { id sessions { id } } } ... on Error { message } } }"""
TASK_STATE = "query($id: ID!) { task(id: $id) { state } }"
USAGE_OF = """query($id: ID!) { session(id: $id) { turns { stopReason
  usage { inputTokens outputTokens costUsd contextUsed contextSize } } } }"""


@dataclass
class RealAgentServer:
    server: KandevServer
    root: Path  # the server's work dir is root/work
    bins: Path
    model_api: FakeModelApi

    def written(self) -> set[Path]:
        return set((self.root / "work").rglob(WRITTEN_FILE))


@pytest.fixture(scope="module")
def real_agents(web_client: Path) -> Iterator[RealAgentServer]:
    """A server of its own, its work dir where the test can look, the real adapters and the fake model API."""
    bins = installed_adapters()
    root = Path(tempfile.mkdtemp(prefix="kandev-real-agent-ui-"))
    with fake_model_api() as fake, serve("real-agent-ui-serve.log", KANDEV_WORK_DIR=str(root / "work")) as (base, _):
        workspaces = httpx.post(f"{base}/graphql", json={"query": "{ workspaces { id } }"}, timeout=10).json()
        server = KandevServer(base=base, workspace_id=workspaces["data"]["workspaces"][0]["id"])
        yield RealAgentServer(server, root, bins, fake)


def start_task(real: RealAgentServer, name: str, command: list[str], env: dict[str, str]) -> tuple[str, str]:
    """A task on a fresh repository whose agent is a real adapter that asks for permission; (task, session)."""
    server = real.server
    profile = server.mutate(
        CREATE_PROFILE,
        "createAgentProfile",
        i={
            "workspaceId": server.workspace_id,
            "name": f"{name} (real)",
            "kind": "ACP",
            "command": command,
            "env": env,
            "supportsMcp": True,
            "permissionPolicy": "ASK",
        },
    )["agentProfile"]
    repo = make_repository(real.root / f"{name.lower()}-repo")
    repository = server.mutate(
        CREATE_REPOSITORY,
        "createRepository",
        i={"workspaceId": server.workspace_id, "name": repo.name, "path": str(repo)},
    )["repository"]
    task = server.mutate(
        CREATE_TASK,
        "createTask",
        i={
            "workspaceId": server.workspace_id,
            "title": f"{name}: write {WRITTEN_FILE}",
            "prompt": f"List the Kandev tasks, then write {WRITTEN_FILE}.",
            "agentProfileId": profile["id"],
            "repositories": [{"repositoryId": repository["id"]}],
        },
    )["task"]
    return task["id"], task["sessions"][0]["id"]


def grant_in_the_page(page: Any, server: KandevServer, task_id: str, screenshots: Path, name: str) -> list[str]:
    """Press Allow on each permission the agent asks until its task is in review; then the Changes panel lists the
    written file, and the conversation shows the answer. The titles granted; the first request, and the changes,
    screenshotted."""
    from playwright.sync_api import expect

    allow = page.get_by_test_id("permission-allow")
    done = page.get_by_test_id("task-state-chip").filter(has_text="Task: Review")
    granted: list[str] = []
    for _ in range(5):  # the fake's script makes the agent ask once or twice
        allow.first.or_(done).first.wait_for(timeout=TURN_TIMEOUT_MS)
        if not allow.count():
            break
        card = page.get_by_test_id("permission-card").filter(has=allow).first
        granted.append(card.locator(".action-title").inner_text())
        if len(granted) == 1:
            page.screenshot(path=str(screenshots / f"desktop-real-{name}-permission.png"), full_page=True)
        card.get_by_test_id("permission-allow").first.click()
        expect(card).to_be_hidden(timeout=30_000)
    server.wait_for(TASK_STATE, lambda d: d["task"]["state"] == "REVIEW", timeout=TURN_TIMEOUT_MS / 1000, id=task_id)
    page.get_by_test_id("tab-changes").click()
    expect(page.get_by_test_id("file-tree")).to_contain_text(WRITTEN_FILE)
    page.screenshot(path=str(screenshots / f"desktop-real-{name}-changes-panel.png"), full_page=True)
    page.get_by_test_id("tab-conversation").click()
    expect(page.get_by_test_id("msg-agent").filter(has_text=FINAL_TEXT)).to_be_visible()
    return granted


def tool_titled(page: Any, title: str) -> Any:
    # (the Kandev tool's output names the tasks, and so the file, too: the titles tell the calls apart)
    return page.get_by_test_id("msg-tool").filter(has=page.locator(".tool-title", has_text=title))


def test_a_person_grants_claude_codes_permission_in_the_task_page_and_sees_its_tool_calls_file_answer_and_cost(
    page: Any, phone: Any, real_agents: RealAgentServer, screenshots: Path
) -> None:
    from playwright.sync_api import expect

    real = real_agents
    server = real.server
    before = real.written()
    env = claude_code_env(real.root / "claude-home", real.model_api.base_url)
    task_id, session_id = start_task(real, "Claude", [str(real.bins / "claude-agent-acp")], env)
    open_app(page, server, f"/tasks/{task_id}")
    granted = grant_in_the_page(page, server, task_id, screenshots, "claude")
    assert any(WRITTEN_FILE in title for title in granted), granted

    expect(tool_titled(page, KANDEV_TOOL)).to_have_attribute("class", re.compile("tool-completed"))
    write = tool_titled(page, f"Write {WRITTEN_FILE}")
    write.locator("summary").click()
    change = write.get_by_test_id("tool-diff")
    expect(change).to_have_attribute("data-path", re.compile(rf"(^|/){re.escape(WRITTEN_FILE)}$"))
    expect(change).to_contain_text("(new file)")
    expect(change.locator("pre")).to_contain_text(f"+ {WRITTEN_TEXT.strip()}")
    page.screenshot(path=str(screenshots / "desktop-real-claude-change.png"), full_page=True)
    [written] = real.written() - before
    assert written.read_text() == WRITTEN_TEXT

    # What the agent reported: three model replies of the fake's usage, the context window, and Claude's own price.
    [turn] = server.gql(USAGE_OF, id=session_id)["session"]["turns"]
    usage = turn["usage"]
    assert (usage["inputTokens"], usage["outputTokens"]) == (USAGE["input"] * 3, USAGE["output"] * 3), usage
    gauge = page.get_by_test_id("context-gauge")
    expect(gauge).to_have_attribute("data-used", str(usage["contextUsed"]))
    expect(gauge).to_have_attribute("data-size", str(usage["contextSize"]))
    expect(page.get_by_test_id("task-spend")).to_contain_text("$")
    page.screenshot(path=str(screenshots / "desktop-real-claude-task.png"), full_page=True)

    open_app(page, server, "/")
    cost = page.locator(f'[data-testid="task-card"][data-task-id="{task_id}"]').get_by_test_id("card-cost")
    expect(cost).to_contain_text(f"{usage['inputTokens']} input and {usage['outputTokens']} output tokens")
    assert float(cost.get_attribute("data-cost-usd")) == pytest.approx(usage["costUsd"], abs=1e-6)

    open_app(phone, server, f"/tasks/{task_id}")
    phone.get_by_test_id("tab-conversation").click()  # a task in review with changes opens on its Changes panel
    expect(phone.get_by_test_id("msg-agent").filter(has_text=FINAL_TEXT)).to_be_visible()
    expect(phone.get_by_test_id("context-gauge")).to_be_visible()
    no_horizontal_scroll(phone)
    phone.screenshot(path=str(screenshots / "mobile-real-claude-task.png"), full_page=True)


def test_a_person_grants_codexs_permission_in_the_task_page_and_sees_its_tool_calls_answer_and_context(
    page: Any, real_agents: RealAgentServer, screenshots: Path
) -> None:
    from playwright.sync_api import expect

    real = real_agents
    server = real.server
    before = real.written()
    command = codex_command(real.bins, real.model_api.base_url)
    task_id, session_id = start_task(real, "Codex", command, codex_env(real.root / "codex-home"))
    open_app(page, server, f"/tasks/{task_id}")
    granted = grant_in_the_page(page, server, task_id, screenshots, "codex")
    assert granted, "Codex asked no permission"

    expect(tool_titled(page, KANDEV_TOOL)).to_have_attribute("class", re.compile("tool-completed"))
    [written] = real.written() - before
    assert written.read_text() == WRITTEN_TEXT
    # codex-acp reports the context window, not the turn's tokens or cost: the gauge shows, the card has no cost.
    [turn] = server.gql(USAGE_OF, id=session_id)["session"]["turns"]
    usage = turn["usage"]
    assert usage["contextUsed"] == USAGE["input"] + USAGE["cache_read"] + USAGE["output"], usage
    gauge = page.get_by_test_id("context-gauge")
    expect(gauge).to_have_attribute("data-used", str(usage["contextUsed"]))
    expect(gauge).to_have_attribute("data-size", str(usage["contextSize"]))
    page.screenshot(path=str(screenshots / "desktop-real-codex-task.png"), full_page=True)
    open_app(page, server, "/")
    card = page.locator(f'[data-testid="task-card"][data-task-id="{task_id}"]')
    expect(card).to_contain_text(FINAL_TEXT)
    expect(card.get_by_test_id("card-cost")).to_have_count(0)
