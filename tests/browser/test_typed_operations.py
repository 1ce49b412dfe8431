"""The web client's operations are checked against schema.graphql and its types are generated from it.

`npm run check` (which `npm run build` runs first) validates every `graphql(...)` document in
frontend/src against the committed SDL, fails when frontend/src/gql is not what codegen makes of
them, then type-checks the client against those generated types.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.browser.conftest import FRONTEND, ROOT, install_web_dependencies, npm_output, run_npm

pytestmark = pytest.mark.slow

# What `npm run check` reads, copied so a test can break one thing without touching the checkout.
CHECKED_FILES = ("package.json", "codegen.ts", "tsconfig.json")


@pytest.fixture(scope="module")
def web_dependencies() -> None:
    install_web_dependencies()


@pytest.fixture
def frontend_copy(web_dependencies: None, tmp_path: Path) -> Path:
    """frontend/ (sources, config, the installed node_modules by link) and schema.graphql beside it, in tmp."""
    shutil.copy(ROOT / "schema.graphql", tmp_path / "schema.graphql")
    copy = tmp_path / "frontend"
    shutil.copytree(FRONTEND / "src", copy / "src")
    for name in CHECKED_FILES:
        shutil.copy(FRONTEND / name, copy / name)
    (copy / "node_modules").symlink_to(FRONTEND / "node_modules", target_is_directory=True)
    return copy


def test_the_web_clients_operations_and_generated_types_match_the_committed_schema(web_dependencies: None) -> None:
    done = run_npm("run", "check")
    assert done.returncode == 0, (
        "`npm run check` failed: an operation no longer matches schema.graphql, or frontend/src/gql is stale "
        f"(run `make schema`):\n{npm_output(done)}"
    )


def test_the_check_fails_on_an_operation_that_asks_for_a_field_the_schema_lacks(frontend_copy: Path) -> None:
    probe = frontend_copy / "src" / "api" / "probe.ts"
    probe.write_text(
        'import { graphql } from "../gql";\n\n'
        "export const PROBE = graphql(`\n  query Probe {\n    workspaces {\n      id\n      colour\n    }\n  }\n`);\n",
        encoding="utf-8",
    )

    done = run_npm("run", "check", cwd=frontend_copy)

    assert done.returncode != 0
    assert 'Cannot query field "colour" on type "Workspace"' in npm_output(done)


def test_the_check_fails_when_the_schema_changed_and_the_types_were_not_regenerated(frontend_copy: Path) -> None:
    schema = frontend_copy.parent / "schema.graphql"
    sdl = schema.read_text(encoding="utf-8")
    assert "enum TaskState {\n" in sdl
    schema.write_text(sdl.replace("enum TaskState {\n", "enum TaskState {\n  PAUSED\n"), encoding="utf-8")

    done = run_npm("run", "check", cwd=frontend_copy)

    assert done.returncode != 0
    assert "src/gql/graphql.ts" in npm_output(done)
