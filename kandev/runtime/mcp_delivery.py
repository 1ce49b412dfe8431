"""Turn a session's MCP revision (definitions with secret references) into what the agent receives: secrets
resolved, npm packages materialized lazily in a cache the server owns and agents only read, installed by the
server with `npm install --ignore-scripts` and kept by name, version and integrity hash, never in a repository.
Errors name the server, never a secret value or npm's output."""

from __future__ import annotations

import base64
import fcntl
import hashlib
import json
import logging
import os
import re
import stat
import subprocess
from collections.abc import Mapping
from pathlib import Path
from secrets import token_hex
from typing import Any

from kandev.platform.handover import ensure_dir, remove_tree
from kandev.runtime.base import McpServerEntry
from kandev.runtime.process import minimal_env

log = logging.getLogger(__name__)

SECRET_REFERENCE = re.compile(r"\$\{secret:([A-Za-z_][A-Za-z0-9_]*)\}")
NPM_TIMEOUT = 300.0
CACHE_MODE = 0o755  # agents read and run the packages; only the server writes


class McpApplyError(Exception):
    """A revision that can't be delivered; the message is safe for the transcript."""


def _resolve(values: Mapping[str, str], secrets: Mapping[str, str], server: str) -> dict[str, str]:
    missing = sorted({n for v in values.values() for n in SECRET_REFERENCE.findall(v)} - secrets.keys())
    if missing:
        raise McpApplyError(f"MCP server '{server}' references unknown secrets: {', '.join(missing)}")
    return {k: SECRET_REFERENCE.sub(lambda m: secrets[m.group(1)], v) for k, v in values.items()}


def _meta(entry: Mapping[str, Any]) -> dict[str, Any]:
    return {"kandev": {"definitionId": entry["id"], "origins": list(entry.get("origins") or [])}}


def package_folder(cache_root: Path, name: str, version: str) -> Path:
    """The folder holding every install of `name@version`, one per integrity hash."""
    return cache_root / f"{name.replace('/', '+')}@{version}"


def tarball_name(name: str, version: str) -> str:
    """What `npm pack` calls the package's tarball (@scope/pkg -> scope-pkg-x.y.z.tgz)."""
    return f"{name.lstrip('@').replace('/', '-')}-{version}.tgz"


def _installed_bin(folder: Path, name: str, version: str) -> str | None:
    """The package's executable in the cache when the exact version is installed there."""
    try:
        manifest = json.loads((folder / "node_modules" / name / "package.json").read_text())
    except (OSError, ValueError):
        return None
    if manifest.get("name") != name or manifest.get("version") != version:
        return None
    bins = manifest.get("bin")
    if isinstance(bins, str):
        command = name.rsplit("/", 1)[-1]
    elif isinstance(bins, dict) and bins:
        command = next(iter(bins)) if len(bins) == 1 else name.rsplit("/", 1)[-1]
        if command not in bins:
            return None
    else:
        return None
    path = folder / "node_modules" / ".bin" / command
    return str(path) if path.exists() else None


def _trusted_cache(cache_root: Path) -> Path:
    """The cache folder, the server's and writable by nobody else; a cache an earlier version gave the agent
    user is removed (its packages may have been changed) and made again."""
    try:
        info = cache_root.lstat()
    except FileNotFoundError:
        info = None
    if info is not None and not (
        stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and info.st_mode & 0o022 == 0
    ):
        log.warning(
            "the MCP package cache %s was writable by others: removed, its packages are installed again", cache_root
        )
        remove_tree(cache_root)
    cache_root.parent.mkdir(parents=True, exist_ok=True)
    return ensure_dir(cache_root, CACHE_MODE)


def _source_key(source: str | None) -> str:
    """Which install of a version a source gave: the same version from another source may differ."""
    return hashlib.sha256((source or "npm registry").encode()).hexdigest()[:16]


def _current(versions: Path, source: str | None) -> Path | None:
    """The install this source gave, as recorded when it was installed."""
    try:
        digest = (versions / f"current-{_source_key(source)}").read_text().strip()
    except OSError:
        return None
    return versions / digest if re.fullmatch(r"[0-9a-f]{64}", digest) else None


def materialize(name: str, version: str, cache_root: Path, source: str | None) -> str:
    """The path of the package's executable, installing `name@version` into the cache first when needed. The
    server installs it (`npm install --ignore-scripts`: nothing of the package runs), into a folder named by
    the install's integrity hash, readable by agents and writable by nobody else: no agent can change code
    another agent later runs."""
    root = _trusted_cache(cache_root)
    versions = package_folder(root, name, version)
    if (folder := _current(versions, source)) is not None and (found := _installed_bin(folder, name, version)):
        return found
    ensure_dir(versions, CACHE_MODE)
    lock = os.open(versions / ".lock", os.O_CREAT | os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two workers materializing the same package wait for each other
        if (folder := _current(versions, source)) is not None and (found := _installed_bin(folder, name, version)):
            return found
        folder = _install(name, version, versions, source)
    finally:
        os.close(lock)
    found = _installed_bin(folder, name, version)
    if found is None:
        raise McpApplyError(f"npm package {name}@{version} installed no executable of that name and version")
    return found


def _install(name: str, version: str, versions: Path, source: str | None) -> Path:
    """Install into a staging folder, then keep it under its integrity hash and record it as this source's."""
    target, extra, expected = f"{name}@{version}", [], None
    if source and source.startswith(("http://", "https://")):
        extra = ["--registry", source]
    elif source:
        tarball = Path(source) / tarball_name(name, version)
        if not tarball.is_file():
            raise McpApplyError(f"npm package {name}@{version} is not in the configured package source")
        target, expected = str(tarball), _integrity_of(tarball)
    staging = versions / f".staging-{token_hex(8)}"
    staging.mkdir()
    staging.chmod(CACHE_MODE)
    try:
        _npm_install(name, version, [*extra, "--prefix", str(staging), target], staging, versions.parent)
        integrity = _lock_integrity(staging, name)
        if integrity is None or (expected is not None and integrity != expected):
            raise McpApplyError(f"npm package {name}@{version} did not install with the integrity of its source")
        digest = hashlib.sha256(integrity.encode()).hexdigest()
        folder = versions / digest
        if os.path.lexists(folder):
            remove_tree(staging)
        else:
            staging.rename(folder)
    except BaseException:
        remove_tree(staging)
        raise
    record = versions / f".current-{token_hex(8)}"
    record.write_text(digest)
    record.replace(versions / f"current-{_source_key(source)}")
    return folder


def _npm_install(name: str, version: str, args: list[str], cwd: Path, cache_root: Path) -> None:
    argv = ["npm", "install", "--ignore-scripts", "--no-audit", "--no-fund", *args]
    env = minimal_env({"npm_config_cache": str(cache_root / ".npm"), "npm_config_update_notifier": "false"})
    try:
        done = subprocess.run(
            argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=NPM_TIMEOUT, umask=0o022, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise McpApplyError(f"npm install of {name}@{version} did not run: {type(exc).__name__}") from None
    if done.returncode != 0:
        log.warning("npm install of %s@%s failed (%s): %s", name, version, done.returncode, done.stderr[-2000:])
        raise McpApplyError(f"npm install of {name}@{version} failed (exit {done.returncode})")


def _integrity_of(tarball: Path) -> str:
    """npm's integrity string of a tarball (sha512, base64)."""
    digest = hashlib.sha512()
    with tarball.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return "sha512-" + base64.b64encode(digest.digest()).decode()


def _lock_integrity(prefix: Path, name: str) -> str | None:
    """The integrity npm recorded for the installed package (its hidden lockfile)."""
    try:
        lock = json.loads((prefix / "node_modules" / ".package-lock.json").read_text())
    except (OSError, ValueError):
        return None
    entry = (lock.get("packages") or {}).get(f"node_modules/{name}") or {}
    integrity = entry.get("integrity")
    return integrity if isinstance(integrity, str) and integrity else None


def deliverable(
    entries: list[dict[str, Any]],
    secrets: Mapping[str, str],
    cache_root: Path,
    npm_source: str | None,
) -> list[McpServerEntry]:
    """Every entry of a revision as the agent receives it; McpApplyError when any can't be."""
    servers = []
    for entry in entries:
        name, kind = entry["name"], entry["kind"]
        if kind == "REMOTE":
            headers = _resolve(entry.get("headers") or {}, secrets, name)
            servers.append(McpServerEntry(name, "http", url=entry["url"], headers=headers, meta=_meta(entry)))
            continue
        env = _resolve(entry.get("env") or {}, secrets, name)
        if kind == "NPM":
            command = materialize(entry["package"], entry["version"], cache_root, npm_source)
        else:
            command = entry["command"]
            if not (os.path.isfile(command) and os.access(command, os.X_OK)):
                raise McpApplyError(f"MCP server '{name}': its command is no longer an executable file")
        servers.append(
            McpServerEntry(
                name, "stdio", command=command, args=list(entry.get("args") or []), env=env, meta=_meta(entry)
            )
        )
    return servers
