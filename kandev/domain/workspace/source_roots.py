"""Where local sources (repositories, folders, `file://` or plain-path remotes) may come from.

A path is judged after resolving symlinks: it must lie under an allowed root (KANDEV_SOURCE_ROOTS; by
default, with auth off, the server user's home and the system temp dir; with auth on, none until an admin
sets it), and it is never `/`, inside `/etc`, `/proc` or `/sys`, inside or around the data or work dir
(which hold the server's key, database and every task's worktrees), nor inside or around a repository
registered in a workspace of another user or a folder attached to another user's task (that would hand their
files to the caller's agent), whichever was there first. An ssh remote naming this machine is such a path too.
For a repository the same holds for where git really reads it from: its git dir (a `.git` file can point
anywhere), its common dir and its object alternates."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain import outbound
from kandev.domain.context import Principal
from kandev.domain.errors import ValidationError
from kandev.domain.outbound import OutboundPolicy, Target
from kandev.domain.workspace.git import run_git
from kandev.domain.workspace.remote_hosts import ssh_host, ssh_target, this_machine
from kandev.models import Repository, Task, TaskFolder, Workspace
from kandev.platform.settings import Settings

SETTING = "KANDEV_SOURCE_ROOTS"
_SYSTEM = ("/etc", "/proc", "/sys")
_ALTERNATES_DEPTH = 5  # git's own limit on chained alternates


def _real(path: str | Path) -> Path:
    return Path(os.path.realpath(os.path.expanduser(path)))


def allowed_roots(settings: Settings) -> list[Path]:
    if settings.source_roots is not None:
        return [_real(root) for root in settings.source_roots.split(os.pathsep) if root.strip()]
    if settings.auth == "on":
        return []
    return [_real(Path.home()), _real(tempfile.gettempdir())]


def _related(a: Path, b: Path) -> bool:
    """One lies inside the other (or they are the same folder)."""
    return a.is_relative_to(b) or b.is_relative_to(a)


def confine_path(settings: Settings, path: str, field: str) -> Path:
    """The resolved path when it may be a source; a ValidationError naming `field` otherwise."""
    if not os.path.isabs(os.path.expanduser(path)):
        raise ValidationError(f"{_leaf(field)} must be an absolute path", field=field)
    roots = allowed_roots(settings)
    if not roots:
        raise ValidationError(
            f"local sources are disabled on this server until an admin sets {SETTING}", field=field, setting=SETTING
        )
    real = _real(path)
    refused = ValidationError(f"{_leaf(field)} is not an allowed source location", field=field)
    if real == Path(real.anchor) or any(real.is_relative_to(_real(system)) for system in _SYSTEM):
        raise refused
    if any(_related(real, _real(own)) for own in (settings.data_path, settings.work_path)):
        raise refused
    if not any(real.is_relative_to(root) for root in roots):
        raise ValidationError(
            f"{_leaf(field)} must lie under an allowed source root ({SETTING})", field=field, setting=SETTING
        )
    return real


def confine_repository(settings: Settings, path: str, field: str) -> list[Path]:
    """confine_path for a repository: the checkout, then every place git reads it from, all confined
    (blocking: runs git)."""
    checkout = confine_path(settings, path, field)
    locations = [checkout]
    for location in git_locations(checkout):
        if location not in locations:
            locations.append(confine_path(settings, str(location), field))
    return locations


def git_locations(checkout: Path) -> list[Path]:
    """The git dir, common dir and (chained) object alternates git would read for `checkout`; none when
    it is no repository. Reading them runs nothing."""
    if not checkout.is_dir():
        return []
    done = run_git("rev-parse", "--absolute-git-dir", "--git-common-dir", cwd=checkout)
    lines = done.stdout.splitlines()
    if done.returncode != 0 or len(lines) < 2:
        return []
    git_dir = _real(lines[0])
    common = _real(checkout / lines[1]) if not os.path.isabs(lines[1]) else _real(lines[1])
    found = [git_dir, common]
    pending = [common / "objects"]
    for _ in range(_ALTERNATES_DEPTH):
        following = []
        for objects in pending:
            try:
                listed = (objects / "info" / "alternates").read_text().splitlines()
            except (OSError, UnicodeDecodeError):
                continue
            for line in listed:
                entry = line.strip().strip('"')
                if entry and not entry.startswith("#"):
                    alternate = _real(objects / entry)
                    found.append(alternate)
                    following.append(alternate)
        pending = following
    return found


def local_remote(url: str) -> str | None:
    """The local path a remote URL names (`file://…` or a plain absolute path), or None for a network URL."""
    if url.startswith("/"):
        return url
    if url[:7].lower() == "file://":
        return unquote(urlsplit(url).path) or "/"
    return None


@dataclass(frozen=True)
class CheckedRemote:
    """A remote as checked: the local locations git would read (all confined), and the address its clone must
    connect to (None: wherever DNS says, for an admin's network remote)."""

    locations: list[Path]
    pin: Target | None = None
    key_alias: str | None = None


def confine_remote(settings: Settings, url: str, field: str, outward: OutboundPolicy | None = None) -> CheckedRemote:
    """A `file://` or plain-path remote passes the repository check, both as written and as git may decode it,
    and so does an ssh remote naming this machine; a non-admin's other network remote (`outward` given) passes
    the outbound rule. Blocking: runs git and ssh -G, resolves hosts."""
    path = local_remote(url)
    if path is not None:
        if url[:7].lower() == "file://" and urlsplit(url).netloc not in ("", "localhost"):
            raise ValidationError(f"{_leaf(field)} must name a path on this machine", field=field)
        raw = url[7:].split("?", 1)[0].split("#", 1)[0] if url[:7].lower() == "file://" else url
        confine_path(settings, raw.removeprefix("localhost") or "/", field)
        return CheckedRemote(confine_repository(settings, path, field))
    resolver = outward.resolver if outward is not None else outbound.system_resolver
    ssh = ssh_target(url)
    if ssh is not None:
        host, key_alias = ssh_host(ssh[0])
        local = this_machine(host, resolver)
        if local is not None:  # a local path in disguise, which ssh would read as whoever it logs in as
            if not ssh[1].startswith("/"):
                raise ValidationError(f"{_leaf(field)} must name an absolute path on this machine", field=field)
            return CheckedRemote(confine_repository(settings, ssh[1], field), Target(host, 22, local), key_alias)
        if outward is None:
            return CheckedRemote([])
        return CheckedRemote([], outward.check_host(host, 22, field), key_alias)
    return CheckedRemote([], outward.check_url(url, field, ("https",)) if outward is not None else None)


async def refuse_foreign(db: AsyncSession, principal: Principal, path: Path, field: str) -> None:
    """Refuse a path inside or around another user's registered repository or attached folder (of a task not
    deleted); the refusal names neither them nor their path."""
    if principal.sees_everything:
        return
    foreign = Workspace.owner_id != principal.user_id
    repositories = await db.scalars(
        select(Repository.path).join(Workspace, Workspace.id == Repository.workspace_id).where(foreign)
    )
    folders = await db.scalars(
        select(TaskFolder.path)
        .join(Task, Task.id == TaskFolder.task_id)
        .join(Workspace, Workspace.id == Task.workspace_id)
        .where(foreign, Task.deleted_at.is_(None))
    )
    for taken in (*repositories, *folders):
        if _related(path, Path(taken)) or _related(path, _real(taken)):
            raise ValidationError(f"{_leaf(field)} is not an allowed source location", field=field)


def _leaf(field: str) -> str:
    return field.split(".")[-1]
