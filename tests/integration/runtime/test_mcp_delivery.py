"""Materializing a revision's MCP servers: npm packages installed once by the server into a cache agents only read,
kept by integrity, from a packed tarball, and failures that say what went wrong without a secret value in the error
or the log."""

from __future__ import annotations

import json
import logging
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from kandev.runtime.mcp_delivery import McpApplyError, deliverable, package_folder, tarball_name
from tests.support.fake_mcp import FIXTURE_NAME, FIXTURE_PACKAGE, FIXTURE_VERSION, pack_fixture

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
    [first] = deliverable([entry], {"TOKEN": SECRET}, cache, str(source))
    manifest = Path(first.command).parents[1] / FIXTURE_NAME / "package.json"
    installed_at = manifest.stat().st_mtime_ns
    (source / tarball_name(FIXTURE_NAME, FIXTURE_VERSION)).unlink()  # a second install would now fail
    [again] = deliverable([entry], {"TOKEN": SECRET}, cache, str(source))
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
        deliverable([npm_entry(FIXTURE_TOKEN="${secret:TOKEN}")], {"TOKEN": SECRET}, tmp_path / "cache", str(source))
    assert f"npm install of {FIXTURE_NAME}@{FIXTURE_VERSION} failed" in str(failed.value)
    assert SECRET not in str(failed.value)
    assert "npm install of" in caplog.text and SECRET not in caplog.text  # npm never sees the server's env


def test_an_unknown_secret_is_named_without_any_value(tmp_path: Path) -> None:
    remote = {"id": "d2", "name": "docs", "kind": "REMOTE", "url": "https://h/mcp", "headers": {"A": "${secret:GONE}"}}
    with pytest.raises(McpApplyError) as failed:
        deliverable([remote], {"OTHER": SECRET}, tmp_path, None)
    assert str(failed.value) == "MCP server 'docs' references unknown secrets: GONE"


def test_a_package_missing_from_the_configured_folder_is_refused_before_npm_runs(tmp_path: Path) -> None:
    with pytest.raises(McpApplyError, match="not in the configured package source"):
        deliverable([npm_entry()], {}, tmp_path / "cache", str(tmp_path))


def _as_agent(uid: int, script: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run a Python snippet as another identity (what an agent could do with its own rights)."""
    return subprocess.run(
        ["/usr/bin/python3", "-I", "-c", script, *args],
        user=uid,
        group=uid,
        extra_groups=[],
        cwd="/",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="another identity needs root (CI runs the suite as root)")


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A world-traversable folder (pytest's own temp dirs are private to their user)."""
    folder = Path(tempfile.mkdtemp(prefix="kandev-mcp-cache-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@needs_root
def test_a_cache_an_agent_owned_is_replaced_without_following_its_links_and_no_agent_can_change_it(
    open_dir: Path,
) -> None:
    tmp_path = open_dir
    agent = 61960
    victim = tmp_path / "root-only"
    victim.mkdir(mode=0o700)
    (victim / "keep").write_text("root's")
    elsewhere = tmp_path / "root-file"
    elsewhere.write_text("root's")
    # The cache as an earlier version left it: the agent's, with a package folder and the lock swapped for links.
    cache = tmp_path / "cache"
    cache.mkdir()
    versions = package_folder(cache, FIXTURE_NAME, FIXTURE_VERSION)
    versions.symlink_to(victim)
    (cache / ".lock").symlink_to(elsewhere)
    os.chown(cache, agent, agent)
    source = pack_fixture(tmp_path / "packages")
    [server] = deliverable([npm_entry()], {}, cache, str(source))
    assert (victim.stat().st_uid, stat.S_IMODE(victim.stat().st_mode)) == (0, 0o700)
    assert (victim / "keep").stat().st_uid == 0 and (victim / "keep").read_text() == "root's"
    assert elsewhere.stat().st_uid == 0 and elsewhere.read_text() == "root's"
    assert cache.lstat().st_uid == 0 and stat.S_IMODE(cache.stat().st_mode) == 0o755
    executable = Path(server.command).resolve()
    assert executable.is_relative_to(cache) and executable.stat().st_uid == 0
    attack = (
        "import os, sys, json\n"
        "out = {}\n"
        "for name, act in [('rewrite', lambda: open(sys.argv[1], 'a').write('x')),\n"
        "                  ('replace', lambda: os.rename(sys.argv[1], sys.argv[1] + '.gone')),\n"
        "                  ('plant', lambda: os.symlink('/etc/passwd', os.path.join(sys.argv[2], 'planted'))),\n"
        "                  ('run', lambda: os.access(sys.argv[1], os.R_OK) or 1/0)]:\n"
        "    try: act(); out[name] = 'ok'\n"
        "    except Exception as e: out[name] = type(e).__name__\n"
        "print(json.dumps(out))\n"
    )
    done = _as_agent(agent, attack, str(executable), str(executable.parent))
    assert json.loads(done.stdout) == {
        "rewrite": "PermissionError",
        "replace": "PermissionError",
        "plant": "PermissionError",
        "run": "ok",  # agents read and run what the server installed
    }


def test_the_same_version_from_another_source_is_kept_apart_by_its_integrity(tmp_path: Path) -> None:
    first = pack_fixture(tmp_path / "first")
    second = tmp_path / "second"
    changed = tmp_path / "changed-package"
    shutil.copytree(FIXTURE_PACKAGE, changed)
    (changed / "server.js").write_text((changed / "server.js").read_text() + "\n// another build\n")
    second.mkdir()
    subprocess.run(["npm", "pack", str(changed), "--pack-destination", str(second)], check=True, capture_output=True)
    cache = tmp_path / "cache"
    [one] = deliverable([npm_entry()], {}, cache, str(first))
    [two] = deliverable([npm_entry()], {}, cache, str(second))
    assert Path(one.command).parents[2] != Path(two.command).parents[2]
    assert "another build" in Path(two.command).resolve().read_text()
    assert "another build" not in Path(one.command).resolve().read_text()
    [again] = deliverable([npm_entry()], {}, cache, str(first))
    assert again.command == one.command
