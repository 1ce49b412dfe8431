"""The real Claude Code and Codex ACP adapters (pinned in tests/real_agents) through a whole Kandev task, offline:
`kandev serve` launches each against a local fake model API; the agent calls a Kandev MCP tool, asks permission
for a file write that a person grants through GraphQL, writes the file in the task's worktree and reports usage;
a screenshot and a text file attached to the task reach each model API as the agent's own image and text content."""

from __future__ import annotations

import base64
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.attachments import NOTES, UPLOAD, UPLOAD_HEADERS, png
from tests.support.fake_model_api import FINAL_TEXT, KANDEV_TOOL, USAGE, WRITTEN_FILE, WRITTEN_TEXT, fake_model_api
from tests.support.git_repos import make_repository
from tests.support.real_agents import claude_code_env, codex_command, codex_env, installed_adapters
from tests.support.serve import Served, serving

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, Any, Path]]:
    """One fake model API and one `kandev serve` (embedded default, one worker) for the whole module."""
    bins = installed_adapters()
    root = tmp_path_factory.mktemp("real-agents")
    with fake_model_api() as fake, serving(root, KANDEV_WORK_DIR=str(root / "work")) as served:
        served.work_dir = root / "work"  # type: ignore[attr-defined]
        yield served, fake, bins


def gql(served: Served, query: str, **variables: Any) -> dict[str, Any]:
    return served.gql(query, **variables)


def workspace(served: Served) -> str:
    return gql(served, "{ workspaces { id } }")["workspaces"][0]["id"]


def make_profile(served: Served, name: str, command: list[str], env: dict[str, str]) -> str:
    created = gql(
        served,
        "mutation($i: CreateAgentProfileInput!) { createAgentProfile(input: $i) { __typename"
        " ... on CreateAgentProfilePayload { agentProfile { id } } ... on Error { message } } }",
        i={
            "workspaceId": workspace(served),
            "name": name,
            "kind": "ACP",
            "command": command,
            "env": env,
            "supportsMcp": True,
            "permissionPolicy": "ASK",
        },
    )["createAgentProfile"]
    assert created["__typename"] == "CreateAgentProfilePayload", created
    return created["agentProfile"]["id"]


def start_task(served: Served, profile_id: str, repo: Path, attachment_ids: tuple[str, ...] = ()) -> tuple[str, str]:
    repository = gql(
        served,
        "mutation($i: CreateRepositoryInput!) { createRepository(input: $i) { __typename"
        " ... on RepositoryPayload { repository { id } } ... on Error { message } } }",
        i={"workspaceId": workspace(served), "name": repo.name, "path": str(repo)},
    )["createRepository"]
    assert repository["__typename"] == "RepositoryPayload", repository
    created = gql(
        served,
        "mutation($i: CreateTaskInput!) { createTask(input: $i) { __typename"
        " ... on CreateTaskPayload { task { id sessions { id } } } ... on Error { message } } }",
        i={
            "workspaceId": workspace(served),
            "title": f"Write {WRITTEN_FILE}",
            "prompt": f"List the Kandev tasks, then write {WRITTEN_FILE}.",
            "agentProfileId": profile_id,
            "repositories": [{"repositoryId": repository["repository"]["id"]}],
            "attachmentIds": list(attachment_ids),
        },
    )["createTask"]
    assert created["__typename"] == "CreateTaskPayload", created
    task = created["task"]
    return task["id"], task["sessions"][0]["id"]


SESSION = """query($id: ID!) { session(id: $id) { state
  turns { stopReason error
    usage { inputTokens outputTokens cacheReadTokens cacheWriteTokens costUsd model contextUsed contextSize } }
  messages { nodes { kind text data } } } }"""


def grant_permissions_until_the_turn_ends(served: Served, task_id: str, session_id: str, timeout: float) -> list[str]:
    """Answer every permission the agent asks with its allow option, as a person in the UI does, until the
    session's first turn has ended; returns the titles of the permissions granted."""
    granted: list[str] = []
    deadline = time.monotonic() + timeout
    query = (
        "query($w: ID!, $t: ID) { pendingPermissions(workspaceId: $w, taskId: $t)"
        " { id title options { optionId kind } } }"
    )
    while time.monotonic() < deadline:
        for request in gql(served, query, w=workspace(served), t=task_id)["pendingPermissions"]:
            allow = next(o for o in request["options"] if o["kind"] in ("allow_once", "allow_always"))
            answered = gql(
                served,
                "mutation($i: ResolvePermissionInput!) { resolvePermission(input: $i) { __typename } }",
                i={"requestId": request["id"], "optionId": allow["optionId"], "taskId": task_id},
            )["resolvePermission"]
            assert answered["__typename"] == "ResolvePermissionPayload", answered
            granted.append(request["title"])
        session = gql(served, SESSION, id=session_id)["session"]
        if session["turns"] and session["turns"][0]["stopReason"] is not None:
            return granted
        time.sleep(0.2)
    raise AssertionError(f"the agent's turn did not end within {timeout}s\n{served.log()[-6000:]}")


def run_whole_task(
    system: tuple[Served, Any, Path],
    tmp_path: Path,
    name: str,
    command: list[str],
    env: dict[str, str],
    attachment_ids: tuple[str, ...] = (),
) -> dict[str, Any]:
    served, fake, _ = system
    slug = "-".join(re.findall(r"\w+", name.lower()))  # one repository name per profile: names are unique
    repo = make_repository(tmp_path / f"{slug}-repo")
    profile_id = make_profile(served, name, command, env)
    before, replies = set(served.work_dir.rglob(WRITTEN_FILE)), len(fake.steps())
    task_id, session_id = start_task(served, profile_id, repo, attachment_ids)
    granted = grant_permissions_until_the_turn_ends(served, task_id, session_id, timeout=180)
    session = gql(served, SESSION, id=session_id)["session"]
    written = set(served.work_dir.rglob(WRITTEN_FILE)) - before
    steps = fake.steps()[replies:]
    requests = fake.requests[replies:]
    return {
        "granted": granted,
        "session": session,
        "steps": steps,
        "requests": requests,
        "written": written,
        "log": served.log,
    }


def assert_whole_task(run: dict[str, Any], tool_name_part: str) -> dict[str, Any]:
    session = run["session"]
    [turn] = session["turns"]
    assert turn["stopReason"] == "end_turn", (turn, session["messages"], run["log"]()[-5000:])
    nodes = session["messages"]["nodes"]
    kandev_calls = [
        m
        for m in nodes
        if m["kind"] == "TOOL_CALL" and KANDEV_TOOL in (m["data"].get("title") or m["text"] or str(m["data"]))
    ]
    assert kandev_calls, nodes
    assert any(FINAL_TEXT in m["text"] for m in nodes if m["kind"] == "AGENT"), nodes
    assert run["granted"], "the agent asked no permission"
    [written] = run["written"]
    assert written.read_text() == WRITTEN_TEXT
    return turn["usage"]


def claude_env(fake: Any, home: Path) -> dict[str, str]:
    return claude_code_env(home, fake.base_url)


def test_claude_code_runs_a_whole_task_offline(system, tmp_path):
    served, fake, bins = system
    env = claude_env(fake, tmp_path / "claude-home")
    run = run_whole_task(system, tmp_path, "Claude (real)", [str(bins / "claude-agent-acp")], env)
    usage = assert_whole_task(run, "Write")
    # Three model calls (the Kandev tool, the write, the answer), each with the fake's usage, added up by the agent.
    calls = run["steps"].count("kandev") + run["steps"].count("write") + run["steps"].count("answer")
    assert calls == 3, run["steps"]
    assert (usage["inputTokens"], usage["outputTokens"]) == (USAGE["input"] * calls, USAGE["output"] * calls)
    assert (usage["cacheReadTokens"], usage["cacheWriteTokens"]) == (
        USAGE["cache_read"] * calls,
        USAGE["cache_write"] * calls,
    )
    assert usage["costUsd"] is not None and 0 < usage["costUsd"] < 1  # Claude Code prices the tokens itself
    assert usage["contextSize"] and usage["contextUsed"]
    print("claude usage", usage)


def codex(fake: Any, bins: Path, home: Path) -> tuple[list[str], dict[str, str]]:
    """codex-acp's command, pointed at the fake's Responses API, and its environment."""
    return codex_command(bins, fake.base_url), codex_env(home)


def test_codex_runs_a_whole_task_offline(system, tmp_path):
    served, fake, bins = system
    command, env = codex(fake, bins, tmp_path / "codex-home")
    run = run_whole_task(system, tmp_path, "Codex (real)", command, env)
    usage = assert_whole_task(run, "printf")
    # codex-acp 0.16 reports the context window (usage_update) and the model, not the turn's tokens or cost.
    assert usage["model"] == "gpt-5.3-codex"
    assert usage["contextUsed"] == USAGE["input"] + USAGE["cache_read"] + USAGE["output"]
    assert usage["contextSize"] and usage["contextSize"] > usage["contextUsed"]
    print("codex usage", usage)


def upload(served: Served, name: str, data: bytes) -> str:
    response = httpx.post(
        f"{served.base}{UPLOAD}", files={"file": (name, data, "")}, headers=UPLOAD_HEADERS, timeout=15
    )
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def test_claude_code_is_handed_an_attached_screenshot_and_notes_as_content_of_its_first_request(system, tmp_path):
    served, fake, bins = system
    screenshot = png(3, 2, (10, 200, 90))
    ids = (upload(served, "screenshot.png", screenshot), upload(served, "notes.md", NOTES))
    env = claude_env(fake, tmp_path / "claude-home")
    run = run_whole_task(system, tmp_path, "Claude (attachments)", [str(bins / "claude-agent-acp")], env, ids)
    assert_whole_task(run, "Write")
    first = next(r["body"] for r in run["requests"] if r["path"].endswith("/messages") and r["body"].get("tools"))
    blocks = [
        b for m in first["messages"] if m["role"] == "user" and isinstance(m["content"], list) for b in m["content"]
    ]
    images = [b["source"] for b in blocks if b.get("type") == "image"]
    assert images == [{"type": "base64", "media_type": "image/png", "data": base64.b64encode(screenshot).decode()}]
    texts = "\n".join(b.get("text", "") for b in blocks if b.get("type") == "text")
    assert NOTES.decode() in texts and "notes.md" in texts
    user = next(m for m in run["session"]["messages"]["nodes"] if m["kind"] == "USER")
    assert [a["name"] for a in user["data"]["attachments"]] == ["screenshot.png", "notes.md"]


def test_codex_is_handed_an_attached_screenshot_and_notes_as_content_of_its_first_request(system, tmp_path):
    served, fake, bins = system
    screenshot = png(3, 2, (10, 200, 90))
    ids = (upload(served, "screenshot.png", screenshot), upload(served, "notes.md", NOTES))
    command, env = codex(fake, bins, tmp_path / "codex-home")
    run = run_whole_task(system, tmp_path, "Codex (attachments)", command, env, ids)
    assert_whole_task(run, "printf")
    first = next(r["body"] for r in run["requests"] if r["path"].endswith("/responses"))
    parts = [p for m in first["input"] if m.get("role") == "user" for p in m.get("content") or []]
    images = [p["image_url"] for p in parts if p.get("type") == "input_image"]
    assert images == [f"data:image/png;base64,{base64.b64encode(screenshot).decode()}"]
    texts = "\n".join(p.get("text", "") for p in parts if p.get("type") == "input_text")
    assert NOTES.decode() in texts and "notes.md" in texts
    user = next(m for m in run["session"]["messages"]["nodes"] if m["kind"] == "USER")
    assert [a["name"] for a in user["data"]["attachments"]] == ["screenshot.png", "notes.md"]
