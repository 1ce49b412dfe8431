"""The catalogue of ACP agents (data: agents.toml beside this module) and the install of npm-based ones into the
work dir: installed by the server with `npm install --ignore-scripts` into the package cache agents only read,
keyed by version and integrity hash (kandev.runtime.mcp_delivery), never globally."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from kandev.runtime.mcp_delivery import McpApplyError, materialize, tarball_name
from kandev.runtime.process import minimal_env

CACHE_FOLDER = "agent-packages"
_VIEW_TIMEOUT = 60.0
_SEMVER = re.compile(r"\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?")


class AgentInstallError(Exception):
    """An install or update that failed; the message is safe to show (names the package, never npm's output)."""


@dataclass(frozen=True)
class CatalogueEntry:
    id: str
    name: str
    command: tuple[str, ...]
    env_keys: tuple[str, ...]
    docs_url: str
    verified: str
    npm_package: str | None = None
    version: str | None = None
    binary_url: str | None = None


@cache
def catalogue() -> tuple[CatalogueEntry, ...]:
    """Every agent of agents.toml, in its order."""
    data = tomllib.loads(resources.files("kandev.runtime").joinpath("agents.toml").read_text())
    return tuple(
        CatalogueEntry(
            id=a["id"],
            name=a["name"],
            command=tuple(a["command"]),
            env_keys=tuple(a.get("env_keys", ())),
            docs_url=a["docs_url"],
            verified=a["verified"],
            npm_package=a.get("npm_package"),
            version=a.get("version"),
            binary_url=a.get("binary_url"),
        )
        for a in data["agent"]
    )


def entry(agent_id: str) -> CatalogueEntry | None:
    return next((e for e in catalogue() if e.id == agent_id), None)


def installed_command(item: CatalogueEntry, work_path: Path) -> list[str] | None:
    """The argv that runs the agent here: from the work dir's package cache (newest install), else from PATH."""
    if item.npm_package:
        folder = work_path / CACHE_FOLDER / f"{item.npm_package.replace('/', '+')}@"
        versions = sorted(folder.parent.glob(f"{folder.name}*/*/node_modules/.bin/{item.command[0]}"))
        if versions:
            return [str(versions[-1]), *item.command[1:]]
    found = shutil.which(item.command[0])
    return [found, *item.command[1:]] if found else None


def _version_key(version: str) -> tuple[tuple[int, ...], int, str]:
    """Semantic-version order: release numbers, then a release above its pre-releases."""
    release, _, pre = version.partition("-")
    numbers = tuple(int(part) if part.isdigit() else 0 for part in release.split("."))
    return numbers, 0 if pre else 1, pre


def _newest_packed(package: str, folder: Path) -> str | None:
    """The newest version of `package` among the folder's `npm pack` tarballs."""
    suffix = ".tgz"
    prefix = tarball_name(package, "").removesuffix(suffix)
    versions = [p.name[len(prefix) : -len(suffix)] for p in folder.glob(f"{prefix}*{suffix}")]
    versions = [v for v in versions if _SEMVER.fullmatch(v)]  # not a longer package name that shares the prefix
    return max(versions, key=_version_key) if versions else None


def latest_version(package: str, source: str | None = None) -> str:
    """The current version of `package` where installs come from: the newest tarball in a package folder, else the
    registry's (`npm view`, at the configured registry when there is one)."""
    if source and not source.startswith(("http://", "https://")):
        if newest := _newest_packed(package, Path(source)):
            return newest
        raise AgentInstallError(f"npm package {package} is not in the configured package source")
    registry = ["--registry", source] if source else []
    try:
        done = subprocess.run(
            ["npm", "view", package, "version", "--json", *registry],
            env=minimal_env(),
            capture_output=True,
            text=True,
            timeout=_VIEW_TIMEOUT,
            check=False,
        )
        version = json.loads(done.stdout) if done.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, ValueError):
        version = None
    if not isinstance(version, str) or not version:
        raise AgentInstallError(f"could not ask the npm registry for {package}'s current version")
    return version


def require_npm(item: CatalogueEntry) -> tuple[str, str]:
    """The agent's npm package and pinned version; AgentInstallError when it is installed another way."""
    if not item.npm_package or not item.version:
        raise AgentInstallError(
            f"{item.name} is not an npm package: install it from {item.binary_url or item.docs_url}"
        )
    return item.npm_package, item.version


def install(
    item: CatalogueEntry,
    work_path: Path,
    npm_source: str | None,
    *,
    update: bool = False,
    on_phase: Callable[[str], None] = lambda phase: None,
) -> list[str]:
    """Install the catalogue's pinned version (or, for an update, the package source's current one) into the work dir's
    agent package cache; the argv to run it. A failed install leaves nothing half-installed in use. `on_phase` hears
    RESOLVING (asking the package source for the current version) and INSTALLING (npm at work) as they begin."""
    package, pinned = require_npm(item)
    if update:
        on_phase("RESOLVING")
    version = latest_version(package, npm_source) if update else pinned
    on_phase("INSTALLING")
    try:
        binary = materialize(package, version, work_path / CACHE_FOLDER, npm_source)
    except McpApplyError as exc:
        raise AgentInstallError(str(exc).replace("MCP ", "")) from None
    return [binary, *item.command[1:]]
