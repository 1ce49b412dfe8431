"""The web client: its bundle's size (gzip, as served to a first visit) and the time to an interactive board
over 1,000 tasks in a real headless Chromium.

`kandev serve` runs in its own process with the built client (frontend/dist, built first when missing or
stale); 1,000 tasks are made through createTask. Each visit is a fresh browser context (nothing cached) that
opens "/" and waits until the task list is live (the connection badge's data-tasks is "ready") and the first
column shows its cards; the figure is that moment on the page's own clock (performance.now(), from the start
of navigation). Needs Debian's Chromium and Playwright, as the browser tests do. KANDEV_BENCH_DATABASE_URL /
KANDEV_BENCH_REDIS_URL when set, else SQLite and the embedded Redis-protocol server.
"""

from __future__ import annotations

import asyncio
import gzip
import statistics
from typing import Any

import httpx

from bench.backends import backends
from bench.fanout import served
from tests.browser.conftest import CHROMIUM_ARGS, DIST, _build_web_client, _dist_is_stale, chromium_path

TASKS = 1_000
VISITS = 5
CONCURRENCY = 8
CREATE = "mutation($i: CreateTaskInput!) { createTask(input: $i) { __typename } }"
READY = """() => document.querySelector('[data-testid="connection"]')?.dataset.tasks === "ready"
  && document.querySelectorAll('[data-testid="task-card"]').length > 0"""


def bundle() -> dict[str, Any]:
    """What a first visit downloads before it can draw: index.html, the entry script and the styles (the
    Markdown renderer is a chunk of its own, loaded with the first transcript)."""
    assets = sorted((DIST / "assets").iterdir())
    sizes = {p.name: {"bytes": p.stat().st_size, "gzip": len(gzip.compress(p.read_bytes(), 9))} for p in assets}
    entry = [p.name for p in assets if p.name.startswith("index-")]
    return {
        "files": sizes,
        "first_visit_gzip_bytes": sum(sizes[name]["gzip"] for name in entry)
        + len(gzip.compress((DIST / "index.html").read_bytes(), 9)),
    }


async def seed(address: str) -> str:
    async with httpx.AsyncClient(base_url=f"http://{address}", timeout=60) as http:
        workspaces = (await http.post("/graphql", json={"query": "{ workspaces { id } }"})).json()
        workspace_id = workspaces["data"]["workspaces"][0]["id"]
        numbers = iter(range(TASKS))

        async def creator() -> None:
            for n in numbers:
                variables = {"i": {"workspaceId": workspace_id, "title": f"Board task {n}"}}
                answer = (await http.post("/graphql", json={"query": CREATE, "variables": variables})).json()
                assert answer["data"]["createTask"]["__typename"] == "CreateTaskPayload", answer

        await asyncio.gather(*(creator() for _ in range(CONCURRENCY)))
    return workspace_id


def visit_times(base: str) -> list[float]:
    from playwright.sync_api import sync_playwright

    chromium = chromium_path()
    if chromium is None:
        raise RuntimeError("Chromium is not installed (Debian: apt-get install -y chromium)")
    times = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            for _ in range(VISITS + 1):  # the first visit warms the server, unmeasured
                context = browser.new_context(viewport={"width": 1280, "height": 800})
                page = context.new_page()
                page.goto(base + "/")
                page.wait_for_function(READY, timeout=60_000)
                times.append(page.evaluate("() => performance.now()"))
                context.close()
        finally:
            browser.close()
    return times[1:]


async def run() -> dict[str, Any]:
    if _dist_is_stale():
        _build_web_client()
    with backends() as where, served(where.database_url, where.redis_url, where.folder) as (address, _pid):
        await seed(address)
        times = await asyncio.to_thread(visit_times, f"http://{address}")
    return {
        "database": where.database,
        "tasks": TASKS,
        "bundle": bundle(),
        "board_interactive_ms": {
            "median": round(statistics.median(times), 1),
            "max": round(max(times), 1),
            "visits": [round(t, 1) for t in times],
        },
    }


if __name__ == "__main__":
    import json

    print(json.dumps(asyncio.run(run()), indent=2))
