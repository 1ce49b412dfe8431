"""The real Claude Code and Codex ACP adapters (pinned in tests/real_agents) through a whole Kandev task, offline:
`kandev serve` launches each against a local fake model API; the agent calls a Kandev MCP tool, asks permission
for a file write that a person grants through GraphQL, writes the file in the task's worktree and reports usage."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_model_api import FINAL_TEXT, KANDEV_TOOL, USAGE, WRITTEN_FILE, WRITTEN_TEXT, fake_model_api
from tests.support.git_repos import make_repository
from tests.support.parallel import one_at_a_time
from tests.support.serve import Served, serving

pytestmark = pytest.mark.slow

AGENTS_DIR = Path(__file__).resolve().parents[2] / "real_agents"
NPM_TIMEOUT = 600


def installed_adapters() -> Path:
    """tests/real_agents/node_modules, installed from its lock file when missing or older than the lock (by one
    parallel test worker at a time)."""
    with one_at_a_time(AGENTS_DIR.parents[1] / "build" / "real-agents-npm.lock"):
        return _install_adapters()


def _install_adapters() -> Path:
    modules = AGENTS_DIR / "node_modules"
    stamp = modules / ".package-lock.json"
    if stamp.exists() and stamp.stat().st_mtime >= (AGENTS_DIR / "package-lock.json").stat().st_mtime:
        return modules / ".bin"
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed: the real ACP adapters can't be installed")
    subprocess.run(
        ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"],
        cwd=AGENTS_DIR,
        check=True,
        timeout=NPM_TIMEOUT,
        capture_output=True,
    )
    return modules / ".bin"


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


def start_task(served: Served, profile_id: str, repo: Path) -> tuple[str, str]:
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
    system: tuple[Served, Any, Path], tmp_path: Path, name: str, command: list[str], env: dict[str, str]
) -> dict[str, Any]:
    served, fake, _ = system
    repo = make_repository(tmp_path / f"{name.split()[0].lower()}-repo")
    profile_id = make_profile(served, name, command, env)
    before, replies = set(served.work_dir.rglob(WRITTEN_FILE)), len(fake.steps())
    task_id, session_id = start_task(served, profile_id, repo)
    granted = grant_permissions_until_the_turn_ends(served, task_id, session_id, timeout=180)
    session = gql(served, SESSION, id=session_id)["session"]
    written = set(served.work_dir.rglob(WRITTEN_FILE)) - before
    steps = fake.steps()[replies:]
    return {"granted": granted, "session": session, "steps": steps, "written": written, "log": served.log}


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


def test_claude_code_runs_a_whole_task_offline(system, tmp_path):
    served, fake, bins = system
    home = tmp_path / "claude-home"
    home.mkdir()
    env = {
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": fake.base_url,
        "ANTHROPIC_API_KEY": "sk-ant-fake-key",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
    }
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


def test_codex_runs_a_whole_task_offline(system, tmp_path):
    served, fake, bins = system
    home = tmp_path / "codex-home"
    home.mkdir()
    provider = (
        f'model_providers.fake={{name="fake", base_url="{fake.base_url}/v1", env_key="FAKE_OPENAI_KEY",'
        ' wire_api="responses", request_max_retries=0, stream_max_retries=0}'
    )
    command = [
        str(bins / "codex-acp"),
        "-c",
        provider,
        "-c",
        'model_provider="fake"',
        "-c",
        'model="gpt-5.3-codex"',
        "-c",
        'approval_policy="on-request"',
        "-c",
        'sandbox_mode="read-only"',
    ]
    env = {"HOME": str(home), "CODEX_HOME": str(home), "FAKE_OPENAI_KEY": "sk-fake-key"}
    run = run_whole_task(system, tmp_path, "Codex (real)", command, env)
    usage = assert_whole_task(run, "printf")
    # codex-acp 0.16 reports the context window (usage_update) and the model, not the turn's tokens or cost.
    assert usage["model"] == "gpt-5.3-codex"
    assert usage["contextUsed"] == USAGE["input"] + USAGE["cache_read"] + USAGE["output"]
    assert usage["contextSize"] and usage["contextSize"] > usage["contextUsed"]
    print("codex usage", usage)
