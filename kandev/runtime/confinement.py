"""Whether the agent's OS user (kandev.platform.agent_host.AgentUser) can run its command: checked before launch,
so a permission problem names the path to fix instead of failing inside the agent."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from kandev.platform.agent_host import AgentUser
from kandev.runtime.base import AgentLaunchError

_R, _W, _X = 4, 2, 1


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
