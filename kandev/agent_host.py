"""Running agents as an unprivileged OS user (KANDEV_AGENT_USER): who that is, whether it can run the
agent's command, and handing it the task's working tree. A root server keeps its data dir (0700) and
its processes' /proc/<pid>/environ out of the agent's reach this way."""

from __future__ import annotations

import importlib.util
import os
import pwd
import shutil
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

from kandev.runtime.base import AgentLaunchError

_R, _W, _X = 4, 2, 1
_NO_LOGIN = ("nologin", "false")


@dataclass(frozen=True, slots=True)
class AgentUser:
    """An OS account agents run as; resolved once per launch so a renamed account is noticed."""

    name: str
    uid: int
    gid: int
    groups: tuple[int, ...]
    home: str
    shell: str

    def env(self) -> dict[str, str]:
        """The identity variables of this user (a child must not believe it is still the server's user);
        a service account's nologin shell becomes /bin/sh, since agents run their commands through $SHELL."""
        usable = self.shell and os.path.basename(self.shell) not in _NO_LOGIN
        return {
            "HOME": self.home,
            "USER": self.name,
            "LOGNAME": self.name,
            "SHELL": self.shell if usable else "/bin/sh",
        }


class AgentUserError(AgentLaunchError):
    """KANDEV_AGENT_USER names no usable account, or this process cannot switch to it."""


def resolve_agent_user(name: str | None, *, euid: int | None = None) -> AgentUser | None:
    """The account named by KANDEV_AGENT_USER (None when unset); AgentUserError when it can't be used."""
    if not name:
        return None
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        raise AgentUserError(f"KANDEV_AGENT_USER names '{name}', which is not a user on this machine") from None
    if (os.geteuid() if euid is None else euid) != 0:
        raise AgentUserError(
            f"KANDEV_AGENT_USER='{name}' needs the server and its workers to run as root to switch to that user"
        )
    if entry.pw_uid == 0:
        raise AgentUserError(f"KANDEV_AGENT_USER names '{name}', which is root: agents would keep the server's rights")
    groups = tuple(g for g in os.getgrouplist(name, entry.pw_gid) if g != entry.pw_gid)
    return AgentUser(name, entry.pw_uid, entry.pw_gid, groups, entry.pw_dir, entry.pw_shell)


def _allows(info: os.stat_result, user: AgentUser, bits: int) -> bool:
    if info.st_uid == user.uid:
        return (info.st_mode >> 6) & bits == bits
    if info.st_gid == user.gid or info.st_gid in user.groups:
        return (info.st_mode >> 3) & bits == bits
    return info.st_mode & bits == bits


def blocked_path(path: str | Path, user: AgentUser, bits: int) -> Path | None:
    """The first component of `path` (its folders need search, the path itself `bits`) that `user`'s
    permission bits refuse, checking both the path as written and with its symlinks resolved."""
    written = Path(os.path.abspath(path))
    for candidate in dict.fromkeys([written, written.resolve()]):
        for folder in reversed(candidate.parents):
            try:
                if not _allows(folder.stat(), user, _X):
                    return folder
            except FileNotFoundError:
                return folder
        try:
            info = candidate.stat()
        except FileNotFoundError:
            return candidate
        if not _allows(info, user, bits | (_X if stat.S_ISDIR(info.st_mode) else 0)):
            return candidate
    return None


def scripted_requirements() -> list[str]:
    """What the built-in scripted agent reads besides its interpreter: the kandev package, the acp
    package it imports, the stdlib and the virtualenv's config."""
    paths = [str(Path(__file__).resolve().parents[1]), os.path.dirname(os.__file__)]
    spec = importlib.util.find_spec("acp")
    if spec is not None and spec.submodule_search_locations:
        paths.extend(spec.submodule_search_locations)
    venv_config = Path(sys.prefix) / "pyvenv.cfg"
    if venv_config.exists():
        paths.append(str(venv_config))
    return paths


def check_can_run(user: AgentUser, argv: list[str], cwd: str, readable: list[str]) -> None:
    """AgentLaunchError naming the path to fix when `user` cannot run `argv` in `cwd`."""
    executable = shutil.which(argv[0]) if argv else None
    checks = [(cwd, _R | _W | _X, "its working directory")]
    if executable is not None:
        checks.append((executable, _X, "the agent's command"))
    checks.extend((path, _R, "what the agent reads") for path in readable)
    for path, bits, role in checks:
        blocked = blocked_path(path, user, bits)
        if blocked is not None:
            raise AgentLaunchError(
                f"agent user '{user.name}' cannot reach {path} ({role}): the permissions of {blocked} "
                "keep it out; make that path accessible to it or install the agent where it can reach it"
            )


def hand_over(path: Path, user: AgentUser | None) -> None:
    """Give `path` and everything under it to `user` (symlinks themselves, never their targets)."""
    if user is None:
        return
    os.chown(path, user.uid, user.gid, follow_symlinks=False)
    for root, folders, files in os.walk(path):
        for name in folders + files:
            os.chown(os.path.join(root, name), user.uid, user.gid, follow_symlinks=False)
