"""Turn a session's MCP revision (definitions with secret references) into what the agent receives: secrets
resolved, npm packages materialized lazily in a Kandev-owned cache with `npm install --ignore-scripts` (as the
agent user when one is set), never in a repository. Errors name the server, never a secret value or npm's output."""

from __future__ import annotations

import fcntl
import json
import logging
import os
import re
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kandev.agent_host import AgentUser, hand_over
from kandev.runtime.base import McpServerEntry
from kandev.runtime.process import minimal_env

log = logging.getLogger(__name__)

SECRET_REFERENCE = re.compile(r"\$\{secret:([A-Za-z_][A-Za-z0-9_]*)\}")
NPM_TIMEOUT = 300.0


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


def materialize(name: str, version: str, cache_root: Path, source: str | None, owner: AgentUser | None) -> str:
    """The path of the package's executable, installing `name@version` into the cache first when needed."""
    folder = package_folder(cache_root, name, version)
    if (found := _installed_bin(folder, name, version)) is not None:
        return found
    cache_root.mkdir(parents=True, exist_ok=True)
    if owner is not None and cache_root.stat().st_uid != owner.uid:
        os.chown(cache_root, owner.uid, owner.gid)
    lock_path = cache_root / f".{folder.name}.lock"
    with open(lock_path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two workers materializing the same package wait for each other
        if (found := _installed_bin(folder, name, version)) is not None:
            return found
        folder.mkdir(exist_ok=True)
        hand_over(folder, owner)
        target, extra = f"{name}@{version}", []
        if source and source.startswith(("http://", "https://")):
            extra = ["--registry", source]
        elif source:
            tarball = Path(source) / tarball_name(name, version)
            if not tarball.is_file():
                raise McpApplyError(f"npm package {name}@{version} is not in the configured package source")
            target = str(tarball)
        argv = [
            "npm",
            "install",
            "--ignore-scripts",
            "--no-audit",
            "--no-fund",
            *extra,
            "--prefix",
            str(folder),
            target,
        ]
        env = minimal_env({"npm_config_cache": str(cache_root / ".npm"), "npm_config_update_notifier": "false"}, owner)
        try:
            done = subprocess.run(
                argv,
                cwd=folder,
                env=env,
                capture_output=True,
                text=True,
                timeout=NPM_TIMEOUT,
                user=owner.uid if owner else None,
                group=owner.gid if owner else None,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise McpApplyError(f"npm install of {name}@{version} did not run: {type(exc).__name__}") from None
        if done.returncode != 0:
            log.warning("npm install of %s@%s failed (%s): %s", name, version, done.returncode, done.stderr[-2000:])
            raise McpApplyError(f"npm install of {name}@{version} failed (exit {done.returncode})")
    found = _installed_bin(folder, name, version)
    if found is None:
        raise McpApplyError(f"npm package {name}@{version} installed no executable of that name and version")
    return found


def deliverable(
    entries: list[dict[str, Any]],
    secrets: Mapping[str, str],
    cache_root: Path,
    npm_source: str | None,
    owner: AgentUser | None,
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
            command = materialize(entry["package"], entry["version"], cache_root, npm_source, owner)
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
