"""What the host gives an agent: the unprivileged OS identity it runs as (one account, KANDEV_AGENT_USER, or one
numeric id per Kandev user from KANDEV_AGENT_UIDS) and the built-in scripted agent's command and what it reads.
A root server keeps its data dir (0700), its processes' /proc/<pid>/environ and other users' agents out of an
agent's reach this way. Standard library only: the domain prepares working trees with it, the runtime launches
with it."""

from __future__ import annotations

import grp
import os
import pwd
import re
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

_NO_LOGIN = ("nologin", "false")
_UID_RANGE = re.compile(r"^\s*(\d{1,10})\s*-\s*(\d{1,10})\s*$")
# Below this are the system's own accounts; above it (2^31 - 1 and up) ids are not portable.
_LOWEST_AGENT_UID, _HIGHEST_AGENT_UID = 1000, 2**31 - 2
# Where each numeric identity's HOME lives, under the work dir (its TMPDIR is inside it).
HOMES = "homes"


@dataclass(frozen=True, slots=True)
class AgentUser:
    """An OS account agents run as; resolved once per launch so a renamed account is noticed."""

    name: str
    uid: int
    gid: int
    groups: tuple[int, ...]
    home: str
    shell: str
    # A numeric identity's own temp dir (inside its HOME): nothing it writes there is anyone else's to read.
    tmpdir: str | None = None

    def env(self) -> dict[str, str]:
        """The identity variables of this user (a child must not believe it is still the server's user);
        a service account's nologin shell becomes /bin/sh, since agents run their commands through $SHELL."""
        usable = self.shell and os.path.basename(self.shell) not in _NO_LOGIN
        env = {
            "HOME": self.home,
            "USER": self.name,
            "LOGNAME": self.name,
            "SHELL": self.shell if usable else "/bin/sh",
        }
        if self.tmpdir is not None:
            env["TMPDIR"] = self.tmpdir
        return env


class AgentUserError(Exception):
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


def parse_uid_range(text: str) -> tuple[int, int]:
    """`FIRST-LAST` (KANDEV_AGENT_UIDS) as two ids; ValueError saying what is expected."""
    match = _UID_RANGE.match(text)
    first, last = (int(match.group(1)), int(match.group(2))) if match else (0, -1)
    if not match or not _LOWEST_AGENT_UID <= first <= last <= _HIGHEST_AGENT_UID:
        raise ValueError(
            f"expected a range of numeric ids FIRST-LAST between {_LOWEST_AGENT_UID} and {_HIGHEST_AGENT_UID}, "
            "e.g. 61000-61999"
        )
    return first, last


def numeric_identity(uid: int, work_path: Path) -> AgentUser:
    """The agent identity of one id of KANDEV_AGENT_UIDS: its own group of the same number, no other groups,
    and a HOME of its own under the work dir."""
    home = work_path / HOMES / str(uid)
    return AgentUser(f"kandev-agent-{uid}", uid, uid, (), str(home), "/bin/sh", str(home / ".tmp"))


def check_uid_range(ids: range, *, euid: int | None = None) -> None:
    """AgentUserError unless this process can switch to ids of `ids` and none of them is an account or a group
    of this machine (an agent would get that account's files)."""
    if (os.geteuid() if euid is None else euid) != 0:
        raise AgentUserError("KANDEV_AGENT_UIDS needs the server and its workers to run as root to switch to them")
    taken = sorted(
        {entry.pw_uid for entry in pwd.getpwall() if entry.pw_uid in ids}
        | {entry.gr_gid for entry in grp.getgrall() if entry.gr_gid in ids}
    )
    if taken:
        raise AgentUserError(
            f"KANDEV_AGENT_UIDS {ids.start}-{ids.stop - 1} includes {taken[0]}, an account or group of this machine: "
            "choose a range no account or group uses"
        )


# The scripted agent starts without `site` (-S): processing the virtualenv's .pth import hooks was a third
# of its start-up. It finds kandev on the first path given; the installed packages (the MCP client, for
# `/tool` directives only) stay reachable, after the stdlib.
_BUILTIN_BOOT = (
    "import sys; sys.path.insert(0, sys.argv[1]); sys.path.extend(sys.argv[2:]); "
    "from kandev.runtime.{program} import main; main()"
)


def scripted_command(program: str = "scripted") -> list[str]:
    """The argv of a built-in agent (kandev.runtime.scripted, or .author) on this interpreter; isolated (-I),
    because it runs in the task's worktree and a repository with a `kandev/` folder would otherwise shadow
    the package."""
    root = str(Path(__file__).resolve().parents[2])
    boot = _BUILTIN_BOOT.format(program=program)
    return [sys.executable, "-I", "-S", "-c", boot, root, *_installed_packages()]


def scripted_requirements() -> list[str]:
    """What the built-in scripted agent reads besides its interpreter: the kandev package, the stdlib, the
    installed packages (its `/tool` directives use the MCP client) and the virtualenv's config."""
    paths = [str(Path(__file__).resolve().parents[1]), os.path.dirname(os.__file__), *_installed_packages()]
    venv_config = Path(sys.prefix) / "pyvenv.cfg"
    if venv_config.exists():
        paths.append(str(venv_config))
    return paths


def _installed_packages() -> list[str]:
    return list(dict.fromkeys(sysconfig.get_paths()[key] for key in ("purelib", "platlib")))
