"""The Changes panel in a real headless Chromium: a 5,000-line file's diff painted, and scrolled from top to bottom.

`kandev serve` runs in its own process with the built client (frontend/dist, built first when missing or stale),
one `kandev worker` beside it.
The scripted agent (a profile that may run commands) changes every third line of a 5,000-line TypeScript file in
its worktree, so the file's diff is one hunk of about 6,700 rows; a small file beside it is what the panel shows
first. A paint is a click on the big file in the tree until two frames after its lines are in the viewer (the
hunks fetched over GraphQL, the rows laid out; highlighting follows from a worker, timed too); the scroll moves
the diff 100 px a frame to its end while the frame gaps and the main thread's long tasks (over 50 ms) are
recorded. The server's answer alone (the same GraphQL query over HTTP) and plain `git diff --stat` / `git diff` of
the file on the task's worktree are given beside the paint. Needs Debian's
Chromium and Playwright, as the browser tests do. KANDEV_BENCH_DATABASE_URL / KANDEV_BENCH_REDIS_URL when set,
else SQLite and the embedded Redis-protocol server.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from bench.backends import backends
from bench.fanout import served
from tests.browser.conftest import CHROMIUM_ARGS, _build_web_client, _dist_is_stale, chromium_path
from tests.support.factories import settings_for
from tests.support.git_repos import git, make_repository
from tests.support.workers import running_worker

LINES = 5_000
PAINTS = 5
TARGETS = {"paint_ms_max": 1000, "scroll_frame_p95_ms": 33.4}
BIG = "big.ts"
SMALL = "a_small.txt"
PROFILE = """mutation($i: CreateAgentProfileInput!) { createAgentProfile(input: $i) { __typename
  ... on CreateAgentProfilePayload { agentProfile { id } } } }"""
REPOSITORY = """mutation($i: CreateRepositoryInput!) { createRepository(input: $i) { __typename
  ... on RepositoryPayload { repository { id } } } }"""
TASK = """mutation($i: CreateTaskInput!) { createTask(input: $i) { __typename
  ... on CreateTaskPayload { task { id } } } }"""
STATE = "query($id: ID!) { task(id: $id) { state changeStats { files additions deletions } } }"
HUNKS = """query($id: ID!, $paths: [String!]) { task(id: $id) { changes(paths: $paths) { repositories { files {
  nodes { path diffKey hunks { header oldStart oldLines newStart newLines lines { kind oldNumber newNumber text } } }
} } } } }"""

# Clicks a file and resolves two frames after its first rows are in the viewer's shadow root (the viewer is
# virtualised: it renders about a screenful); rejects after 30 s naming what it saw.
PAINT = """async ([path, minimum]) => {
  const rows = () => {
    const head = document.querySelector('[data-testid="diff-head"]');
    const root = document.querySelector('diffs-container')?.shadowRoot;
    return head?.dataset.path === path && root ? root.querySelectorAll('[data-line]').length : 0;
  };
  const button = document.querySelector(`[data-testid="file-row"][data-path="${path}"] button`);
  const start = performance.now();
  button.click();
  await new Promise((done, fail) => {
    const check = () => {
      if (rows() >= minimum) requestAnimationFrame(() => requestAnimationFrame(done));
      else if (performance.now() - start > 30000) fail(new Error(`${path}: ${rows()} rows after 30 s`));
      else requestAnimationFrame(check);
    };
    check();
  });
  return performance.now() - start;
}"""
# Resolves when the rows shown carry the highlighter's colours.
HIGHLIGHTED = """() => new Promise((done) => {
  const start = performance.now();
  const check = () => {
    const root = document.querySelector('diffs-container')?.shadowRoot;
    if (root?.querySelector('[data-line] span[style*="--diffs-token"]')) done(performance.now() - start);
    else if (performance.now() - start > 30000) done(null);
    else setTimeout(check, 20);
  };
  check();
})"""
# Scrolls the diff to its end, 100 px a frame, recording frame gaps and long tasks meanwhile.
SCROLL = """async () => {
  const box = document.querySelector('.diff-view');
  const long = [];
  const observer = new PerformanceObserver((list) => list.getEntries().forEach((e) => long.push(e.duration)));
  observer.observe({ type: 'longtask' });
  const gaps = [];
  let last = performance.now();
  const start = last;
  await new Promise((done) => {
    const step = (now) => {
      gaps.push(now - last);
      last = now;
      box.scrollTop += 100;
      if (box.scrollTop + box.clientHeight >= box.scrollHeight - 1 || now - start > 60000) done();
      else requestAnimationFrame(step);
    };
    requestAnimationFrame(step);
  });
  await new Promise((r) => setTimeout(r, 100));
  observer.disconnect();
  return { gaps: gaps.slice(1), long, height: box.scrollHeight, ms: performance.now() - start };
}"""


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def seed_repository(folder: Path) -> Path:
    repository = make_repository(folder)
    lines = "".join(f"export function f{n}(a: number): number {{ return a + {n}; }}\n" for n in range(LINES))
    (repository / BIG).write_text(lines)
    (repository / SMALL).write_text("small\n")
    git(repository, "add", "-A")
    git(repository, "commit", "-q", "-m", "seed")
    return repository


async def seed(address: str, folder: Path) -> str:
    """A task in review whose agent changed every third line of BIG and one line of SMALL; its id."""
    async with httpx.AsyncClient(base_url=f"http://{address}", timeout=60) as http:

        async def call(query: str, **variables: Any) -> dict[str, Any]:
            body = (await http.post("/graphql", json={"query": query, "variables": variables})).json()
            assert "errors" not in body, body
            return body["data"]

        workspace_id = (await call("{ workspaces { id } }"))["workspaces"][0]["id"]
        profile = await call(
            PROFILE, i={"workspaceId": workspace_id, "name": "Bench", "kind": "SCRIPTED", "permissionPolicy": "ALLOW"}
        )
        repository = await call(
            REPOSITORY, i={"workspaceId": workspace_id, "name": "bench", "path": str(seed_repository(folder / "repo"))}
        )
        prompt = f"/run sed -i '1~3s/a + /a * /' {BIG}\n/write {SMALL}\nsmaller\n/end-write"
        task = await call(
            TASK,
            i={
                "workspaceId": workspace_id,
                "title": "A big diff",
                "prompt": prompt,
                "agentProfileId": profile["createAgentProfile"]["agentProfile"]["id"],
                "repositories": [{"repositoryId": repository["createRepository"]["repository"]["id"]}],
            },
        )
        task_id: str = task["createTask"]["task"]["id"]
        deadline = time.monotonic() + 120
        while (await call(STATE, id=task_id))["task"]["state"] != "REVIEW":
            if time.monotonic() > deadline:
                raise RuntimeError("the agent did not finish its turn")
            await asyncio.sleep(0.2)
        return task_id


def server_hunks_ms(base: str, task_id: str) -> list[float]:
    """The big file's hunks over GraphQL alone, as the panel asks for them."""
    times = []
    with httpx.Client(base_url=base, timeout=60) as http:
        for _ in range(PAINTS):
            start = time.perf_counter()
            body = http.post("/graphql", json={"query": HUNKS, "variables": {"id": task_id, "paths": [BIG]}}).json()
            times.append((time.perf_counter() - start) * 1000)
            [repository] = body["data"]["task"]["changes"]["repositories"]
            assert len(repository["files"]["nodes"][0]["hunks"][0]["lines"]) > LINES
    return times


def task_worktree(repository: Path) -> Path:
    """The task's worktree: the one the source repository lists besides itself."""
    listed = git(repository, "worktree", "list", "--porcelain")
    paths = [Path(line.split(" ", 1)[1]) for line in listed.splitlines() if line.startswith("worktree ")]
    [worktree] = [p for p in paths if p.resolve() != repository.resolve()]
    return worktree


def plain_git_ms(worktree: Path) -> dict[str, Any]:
    """`git diff --stat main` and `git diff main -- BIG` on the same tree, as anyone would run them."""
    figures = {}
    for name, args in {"diff_stat": ["--stat", "main"], "diff_of_the_file": ["main", "--", BIG]}.items():
        times = []
        for _ in range(PAINTS):
            start = time.perf_counter()
            subprocess.run(["git", "diff", *args], cwd=worktree, check=True, capture_output=True)
            times.append((time.perf_counter() - start) * 1000)
        figures[name] = {"median": round(statistics.median(times), 1), "max": round(max(times), 1)}
    return figures


def in_the_browser(base: str, task_id: str) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    chromium = chromium_path()
    if chromium is None:
        raise RuntimeError("Chromium is not installed (Debian: apt-get install -y chromium)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            page = context.new_page()
            page.goto(f"{base}/tasks/{task_id}")
            page.wait_for_selector(f'[data-testid="file-row"][data-path="{BIG}"]', timeout=60_000)
            paints, highlighted = [], []
            for _ in range(PAINTS + 1):  # the first one loads the viewer's chunks and its worker: unmeasured
                page.evaluate(PAINT, [SMALL, 1])
                paints.append(page.evaluate(PAINT, [BIG, 20]))
                highlighted.append(page.evaluate(HIGHLIGHTED))
            scroll = page.evaluate(SCROLL)
            context.close()
        finally:
            browser.close()
    gaps, long = scroll["gaps"], scroll["long"]
    coloured = [h for h in highlighted[1:] if h is not None]
    return {
        "paint_ms": {
            "median": round(statistics.median(paints[1:]), 1),
            "max": round(max(paints[1:]), 1),
            "runs": [round(p, 1) for p in paints[1:]],
            "first_with_chunks": round(paints[0], 1),
        },
        "highlighted_after_paint_ms": {
            "median": round(statistics.median(coloured), 1) if coloured else None,
            "max": round(max(coloured), 1) if coloured else None,
            "not_within_30s": len(highlighted) - 1 - len(coloured),
        },
        "scroll": {
            "pixels": scroll["height"],
            "ms": round(scroll["ms"], 1),
            "frames": len(gaps),
            "frame_ms": {
                "p50": round(percentile(gaps, 0.5), 1),
                "p95": round(percentile(gaps, 0.95), 1),
                "p99": round(percentile(gaps, 0.99), 1),
                "max": round(max(gaps), 1),
            },
            "frames_over_50ms": sum(1 for g in gaps if g > 50),
            "long_tasks": len(long),
            "long_task_ms": {"total": round(sum(long), 1), "max": round(max(long, default=0), 1)},
        },
    }


async def run() -> dict[str, Any]:
    if _dist_is_stale():
        _build_web_client()
    folder = Path(tempfile.mkdtemp(prefix="kandev-bench-diff-"))
    with (
        backends() as where,
        served(where.database_url, where.redis_url, where.folder) as (address, _pid),
        running_worker(settings_for(where.database_url, where.redis_url, where.folder)),
    ):
        task_id = await seed(address, folder)
        hunks = await asyncio.to_thread(server_hunks_ms, f"http://{address}", task_id)
        git_ms = await asyncio.to_thread(plain_git_ms, task_worktree(folder / "repo"))
        browser = await asyncio.to_thread(in_the_browser, f"http://{address}", task_id)
    return {
        "database": where.database,
        "machine": {"cpus": os.cpu_count(), "load_average": [round(x, 2) for x in os.getloadavg()]},
        "file_lines": LINES,
        "server_hunks_ms": {"median": round(statistics.median(hunks), 1), "max": round(max(hunks), 1)},
        "git_ms": git_ms,
        **browser,
        "targets": TARGETS,
    }


if __name__ == "__main__":
    import json

    print(json.dumps(asyncio.run(run()), indent=2))
