"""`kandev serve` in a checkout without frontend/dist builds the web client beside it and renames it into place,
so a dist/ that another process built (and may be serving) meanwhile is never emptied or replaced."""

from __future__ import annotations

from pathlib import Path

import pytest

import kandev.app
from kandev import cli

# A stand-in npm: `run build -- --outDir X --emptyOutDir` writes X/index.html. With RACE set, another process
# finishes its own dist/ while this build runs.
FAKE_NPM = """#!/bin/sh
echo "$*" >> "$NPM_LOG"
out=""
while [ $# -gt 0 ]; do [ "$1" = "--outDir" ] && out="$2"; shift; done
[ -n "$out" ] || exit 0
mkdir -p "$out" && echo ours > "$out/index.html"
if [ -n "$RACE" ]; then mkdir -p dist && echo theirs > dist/index.html; fi
"""


@pytest.fixture
def frontend(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    source = tmp_path / "frontend"
    (source / "node_modules").mkdir(parents=True)
    (source / "package.json").write_text("{}")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "npm").write_text(FAKE_NPM)
    (bin_dir / "npm").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.setenv("NPM_LOG", str(tmp_path / "npm.log"))
    monkeypatch.setattr(kandev.app, "FRONTEND_DIST", source / "dist")
    return source


def test_a_missing_web_client_is_built_beside_dist_and_renamed_into_place(frontend: Path) -> None:
    cli._ensure_web_client()

    assert (frontend / "dist" / "index.html").read_text() == "ours\n"
    assert sorted(p.name for p in frontend.iterdir()) == ["dist", "node_modules", "package.json"]
    assert "--outDir" in (frontend.parent / "npm.log").read_text()


def test_a_web_client_built_by_another_process_meanwhile_is_kept_and_the_staging_folder_removed(
    frontend: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RACE", "1")

    cli._ensure_web_client()

    assert (frontend / "dist" / "index.html").read_text() == "theirs\n"
    assert sorted(p.name for p in frontend.iterdir()) == ["dist", "node_modules", "package.json"]


def test_a_built_web_client_is_not_built_again(frontend: Path) -> None:
    (frontend / "dist").mkdir()
    (frontend / "dist" / "index.html").write_text("built")

    cli._ensure_web_client()

    assert not (frontend.parent / "npm.log").exists()
    assert (frontend / "dist" / "index.html").read_text() == "built"
