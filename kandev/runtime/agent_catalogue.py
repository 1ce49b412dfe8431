"""The catalogue of ACP agents (data: agents.toml beside this module) and the install of npm-based ones into the
work dir: installed by the server with `npm install --ignore-scripts` into the package cache agents only read,
keyed by version and integrity hash (kandev.runtime.mcp_delivery), never globally."""

from __future__ import annotations

import json
import shutil
import subprocess
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from kandev.runtime.mcp_delivery import McpApplyError, materialize
from kandev.runtime.process import minimal_env

CACHE_FOLDER = "agent-packages"
_VIEW_TIMEOUT = 60.0


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


def latest_version(package: str) -> str:
    """The registry's current version of `package` (`npm view`)."""
    try:
        done = subprocess.run(
            ["npm", "view", package, "version", "--json"],
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


def install(item: CatalogueEntry, work_path: Path, npm_source: str | None, *, update: bool = False) -> list[str]:
    """Install the catalogue's pinned version (or, for an update, the registry's current one) into the work dir's
    agent package cache; the argv to run it. A failed install leaves nothing half-installed in use."""
    if not item.npm_package or not item.version:
        raise AgentInstallError(
            f"{item.name} is not an npm package: install it from {item.binary_url or item.docs_url}"
        )
    version = latest_version(item.npm_package) if update else item.version
    try:
        binary = materialize(item.npm_package, version, work_path / CACHE_FOLDER, npm_source)
    except McpApplyError as exc:
        raise AgentInstallError(str(exc).replace("MCP ", "")) from None
    return [binary, *item.command[1:]]
