"""What the host gives an agent: the unprivileged OS user it runs as (KANDEV_AGENT_USER), the task's working
tree handed to that user, and the built-in scripted agent's command and what it reads. A root server keeps
its data dir (0700) and its processes' /proc/<pid>/environ out of the agent's reach this way. Standard library
only: the domain prepares working trees with it, the runtime launches with it."""

from __future__ import annotations

import os
import pwd
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

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
    root = str(Path(__file__).resolve().parent.parent)
    boot = _BUILTIN_BOOT.format(program=program)
    return [sys.executable, "-I", "-S", "-c", boot, root, *_installed_packages()]


def scripted_requirements() -> list[str]:
    """What the built-in scripted agent reads besides its interpreter: the kandev package, the stdlib, the
    installed packages (its `/tool` directives use the MCP client) and the virtualenv's config."""
    paths = [str(Path(__file__).resolve().parent), os.path.dirname(os.__file__), *_installed_packages()]
    venv_config = Path(sys.prefix) / "pyvenv.cfg"
    if venv_config.exists():
        paths.append(str(venv_config))
    return paths


def _installed_packages() -> list[str]:
    return list(dict.fromkeys(sysconfig.get_paths()[key] for key in ("purelib", "platlib")))


def hand_over(path: Path, user: AgentUser | None) -> None:
    """Give `path` and everything under it to `user` (symlinks themselves, never their targets)."""
    if user is None:
        return
    os.chown(path, user.uid, user.gid, follow_symlinks=False)
    for root, folders, files in os.walk(path):
        for name in folders + files:
            os.chown(os.path.join(root, name), user.uid, user.gid, follow_symlinks=False)
