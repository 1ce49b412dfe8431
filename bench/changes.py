"""A task's changes over GraphQL, beside plain `git diff --stat` on the same tree: the file list of a worktree with
1,000 changed files and about 50,000 changed lines, one 2,000-line file's hunks, and a board page of 500 tasks
with their change stats against the same page without them (on 10,000 tasks, every one with a repository and
stored stats).

Everything runs in one uvicorn server in this process, as bench.board does. Uses KANDEV_BENCH_DATABASE_URL /
KANDEV_BENCH_REDIS_URL when set, else SQLite and the embedded Redis-protocol server."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import select

from bench.backends import backends
from bench.board import served, side_by_side
from kandev.app import create_app
from kandev.models import Repository, Task, TaskRepository
from kandev.models.base import new_id
from kandev.platform.settings import Settings
from kandev.wiring import SYSTEM
from tests.support.board import add_tasks
from tests.support.changes import materialized_task
from tests.support.client_ops import client_operations
from tests.support.git_repos import git, make_repository

FILES = 1000
CHANGED_LINES_PER_FILE = 25  # changed in place: 25 added and 25 deleted
BIG_LINES = 2000
BOARD_TASKS = 10_000
RUNS = 30
TARGETS = {"file_list_p95_ms": 300, "hunks_p95_ms": 50, "board_ratio_p95": 1.2}
FILE_LIST = """query($id: ID!, $after: String) { task(id: $id) { changes { repositories {
  stats { files additions deletions }
  files(first: 500, after: $after) { totalCount pageInfo { hasNextPage endCursor }
    nodes { path oldPath status additions deletions binary tooLarge reviewed diffKey } } } } } }"""
HUNKS = """query($id: ID!, $paths: [String!]) { task(id: $id) { changes(paths: $paths) { repositories { files {
  nodes { path hunks { header oldStart oldLines newStart newLines lines { kind oldNumber newNumber text } } } }
  } } } }"""


def seed_repository(folder: Path) -> Path:
    """A repository whose `main` holds FILES files of 100 lines and one of BIG_LINES lines."""
    repository = make_repository(folder)
    for number in range(FILES - 1):
        path = repository / "src" / f"module_{number // 100}" / f"file_{number}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(f"value_{number}_{line} = {line}\n" for line in range(100)))
    (repository / "big.py").write_text("".join(f"big_{line} = {line}\n" for line in range(BIG_LINES)))
    git(repository, "add", "-A")
    git(repository, "commit", "-q", "-m", "seed")
    return repository


def change_worktree(folder: Path) -> int:
    """Change CHANGED_LINES_PER_FILE lines of each file and every other line of big.py; the lines changed."""
    changed = 0
    for path in sorted(folder.glob("src/*/*.py")):
        lines = path.read_text().splitlines(keepends=True)
        for line in range(0, CHANGED_LINES_PER_FILE * 4, 4):
            lines[line] = lines[line].replace(" = ", " = 10 * ")
        path.write_text("".join(lines))
        changed += 2 * CHANGED_LINES_PER_FILE
    big = (folder / "big.py").read_text().splitlines(keepends=True)
    for line in range(0, BIG_LINES, 2):
        big[line] = big[line].replace(" = ", " = -")
    (folder / "big.py").write_text("".join(big))
    return changed + BIG_LINES


def git_diff(folder: Path, *args: str) -> Any:
    """Plain git on the same tree, as anyone would run it (`git diff --stat main`), as a timed call."""

    async def call() -> None:
        await asyncio.to_thread(subprocess.run, ["git", "diff", *args], cwd=folder, check=True, capture_output=True)

    return call


async def beside(graphql: Any, git: Any) -> dict[str, Any]:
    """The GraphQL call and plain git, interleaved over the same runs (so both see the same machine)."""
    for _ in range(3):
        await graphql()
        await git()
    compared = await side_by_side(graphql, git)
    return {
        "graphql": compared["graphql"],
        "git": {k: v for k, v in compared["plain_json"].items() if not k.startswith("cpu")},
        "ratio_to_git_p95": compared["ratio_p95"],
        "ratio_to_git_median": compared["ratio_median"],
    }


async def seed_board(state: Any, workspace_id: str, repository_path: str) -> None:
    """BOARD_TASKS tasks, each on a repository with stored change stats."""
    task_ids = await add_tasks(state.db, workspace_id, BOARD_TASKS)
    async with state.db.transaction() as session:
        repository = Repository(id=new_id(), workspace_id=workspace_id, name="board", path=repository_path)
        session.add(repository)
        await session.flush()
        session.add_all(TaskRepository(task_id=t, repository_id=repository.id, base_branch="main") for t in task_ids)
        for number, task in enumerate(await session.scalars(select(Task).where(Task.id.in_(task_ids)))):
            task.change_files, task.change_additions, task.change_deletions = number % 7, number % 97, number % 13


def with_stats(operation: str) -> str:
    """The web client's Tasks operation, its nodes also selecting changeStats."""
    head, fragment, rest = operation.partition("fragment TaskFields")
    return head.replace("...TaskFields", "...TaskFields changeStats { files additions deletions }", 1) + fragment + rest


async def board(http: httpx.AsyncClient, workspace_id: str) -> dict[str, Any]:
    plain = client_operations()["TASKS"]
    stats = with_stats(plain)
    variables = {"w": workspace_id, "step": None, "first": 500, "after": None}

    def asking(document: str) -> Any:
        async def call() -> None:
            answer = (await http.post("/graphql", json={"query": document, "variables": variables})).json()
            assert len(answer["data"]["tasks"]["nodes"]) == 500, answer

        return call

    for _ in range(3):
        await asking(stats)()
        await asking(plain)()
    compared = await side_by_side(asking(stats), asking(plain))
    return {
        "page": 500,
        "with_change_stats": compared["graphql"],
        "without": compared["plain_json"],
        "ratio_p95": compared["ratio_p95"],
        "ratio_median": compared["ratio_median"],
    }


async def measure(settings: Settings, folder: Path) -> dict[str, Any]:
    app = create_app(settings)
    async with served(app) as address:
        state = app.state.kandev
        services = state.services(SYSTEM)
        workspace_id = (await services.workspaces.list())[0].id
        repository = await asyncio.to_thread(seed_repository, folder / "repository")
        task_id, worktree = await materialized_task(services, workspace_id, repository, "Bench")
        changed_lines = await asyncio.to_thread(change_worktree, worktree)
        await seed_board(state, workspace_id, str(repository))
        async with httpx.AsyncClient(base_url=f"http://{address}", timeout=120) as http:

            async def page(after: str | None) -> dict[str, Any]:
                variables = {"id": task_id, "after": after}
                answer = (await http.post("/graphql", json={"query": FILE_LIST, "variables": variables})).json()
                assert "errors" not in answer, answer["errors"]
                files: dict[str, Any] = answer["data"]["task"]["changes"]["repositories"][0]["files"]
                assert files["totalCount"] == FILES and len(files["nodes"]) == 500, files["totalCount"]
                return files

            async def first_page() -> None:
                await page(None)

            async def every_file() -> None:
                first = await page(None)
                await page(first["pageInfo"]["endCursor"])

            async def hunks() -> None:
                variables = {"id": task_id, "paths": ["big.py"]}
                answer = (await http.post("/graphql", json={"query": HUNKS, "variables": variables})).json()
                [node] = answer["data"]["task"]["changes"]["repositories"][0]["files"]["nodes"]
                assert len(node["hunks"]) == 1 and len(node["hunks"][0]["lines"]) == BIG_LINES * 3 // 2, node

            stat = git_diff(worktree, "--stat", "main")
            listed = await beside(first_page, stat)
            listed_all = await beside(every_file, stat)
            one_file = await beside(hunks, git_diff(worktree, "main", "--", "big.py"))
            board_page = await board(http, workspace_id)
    return {
        "changed_files": FILES,
        "changed_lines": changed_lines,
        "file_list_first_page_of_500_vs_git_diff_stat": listed,
        "file_list_all_1000_in_two_pages_vs_git_diff_stat": listed_all,
        "hunks_of_a_2000_line_file_vs_git_diff_of_it": one_file,
        "board": board_page,
        "targets": TARGETS,
        "met": {
            "file_list": listed["graphql"]["p95_ms"] <= TARGETS["file_list_p95_ms"],
            "file_list_all": listed_all["graphql"]["p95_ms"] <= TARGETS["file_list_p95_ms"],
            "hunks": one_file["graphql"]["p95_ms"] <= TARGETS["hunks_p95_ms"],
            "board": board_page["ratio_p95"] <= TARGETS["board_ratio_p95"],
        },
    }


async def run() -> dict[str, Any]:
    with backends() as found:
        settings = Settings(database_url=found.database_url, redis_url=found.redis_url, data_dir=found.folder / "data")
        result = await measure(settings, found.folder)
        result["database"] = found.database
        return result


if __name__ == "__main__":
    import json
    import sys

    json.dump(asyncio.run(run()), sys.stdout, indent=2)
    sys.stdout.write("\n")
