"""Materializing a revision's MCP servers: npm packages installed once into the cache from a packed tarball, and
failures that say what went wrong without a secret value in the error or the log."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from kandev.runtime.mcp_delivery import McpApplyError, deliverable, package_folder, tarball_name
from tests.support.fake_mcp import FIXTURE_NAME, FIXTURE_VERSION, pack_fixture

pytestmark = pytest.mark.slow

SECRET = "tok-6f2a9c0e4b7d"


def npm_entry(**env: str) -> dict[str, object]:
    return {
        "id": "d1",
        "name": "fixture",
        "kind": "NPM",
        "package": FIXTURE_NAME,
        "version": FIXTURE_VERSION,
        "args": ["--flag"],
        "env": env,
        "origins": [{"scope": "TASK", "id": "t1"}],
    }


def test_an_npm_package_is_installed_once_and_reused_from_the_cache(tmp_path: Path) -> None:
    source, cache = pack_fixture(tmp_path / "packages"), tmp_path / "cache"
    entry = npm_entry(FIXTURE_TOKEN="${secret:TOKEN}")
    [first] = deliverable([entry], {"TOKEN": SECRET}, cache, str(source), None)
    manifest = package_folder(cache, FIXTURE_NAME, FIXTURE_VERSION) / "node_modules" / FIXTURE_NAME / "package.json"
    installed_at = manifest.stat().st_mtime_ns
    (source / tarball_name(FIXTURE_NAME, FIXTURE_VERSION)).unlink()  # a second install would now fail
    [again] = deliverable([entry], {"TOKEN": SECRET}, cache, str(source), None)
    assert first == again and manifest.stat().st_mtime_ns == installed_at
    assert first.transport == "stdio" and first.args == ["--flag"] and first.env == {"FIXTURE_TOKEN": SECRET}
    assert first.meta == {"kandev": {"definitionId": "d1", "origins": [{"scope": "TASK", "id": "t1"}]}}
    assert Path(first.command).is_relative_to(cache)


def test_a_failed_install_names_the_package_and_keeps_the_secret_out_of_the_error_and_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    source = tmp_path / "packages"
    source.mkdir()
    (source / tarball_name(FIXTURE_NAME, FIXTURE_VERSION)).write_bytes(b"not a tarball")
    with caplog.at_level(logging.DEBUG), pytest.raises(McpApplyError) as failed:
        deliverable(
            [npm_entry(FIXTURE_TOKEN="${secret:TOKEN}")], {"TOKEN": SECRET}, tmp_path / "cache", str(source), None
        )
    assert f"npm install of {FIXTURE_NAME}@{FIXTURE_VERSION} failed" in str(failed.value)
    assert SECRET not in str(failed.value)
    assert "npm install of" in caplog.text and SECRET not in caplog.text  # npm never sees the server's env


def test_an_unknown_secret_is_named_without_any_value(tmp_path: Path) -> None:
    remote = {"id": "d2", "name": "docs", "kind": "REMOTE", "url": "https://h/mcp", "headers": {"A": "${secret:GONE}"}}
    with pytest.raises(McpApplyError) as failed:
        deliverable([remote], {"OTHER": SECRET}, tmp_path, None, None)
    assert str(failed.value) == "MCP server 'docs' references unknown secrets: GONE"


def test_a_package_missing_from_the_configured_folder_is_refused_before_npm_runs(tmp_path: Path) -> None:
    with pytest.raises(McpApplyError, match="not in the configured package source"):
        deliverable([npm_entry()], {}, tmp_path / "cache", str(tmp_path), None)
