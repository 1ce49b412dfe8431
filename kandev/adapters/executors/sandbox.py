"""The SANDBOX executor: the agent in Linux namespaces made by bubblewrap (`bwrap`), under the same keeper and OS
identity as a plain agent (kandev.runtime.process), so its whole tree dies with its worker.

The box is built from an empty root, not by hiding parts of the host: the system folders read-only (/usr and its
links, /etc with the password hashes masked), what the agent must read (a built-in agent's interpreter and package)
read-only, its task's folders read-write at their own paths, the session's MCP bridge folder at /run/kandev, a
private /tmp and HOME, a fresh /proc of its own PID namespace, a minimal /dev, no network unless the profile says
FULL, and no capabilities. The data dir, the work dir's other tasks, the server's processes and environment, the
Docker socket and every Unix socket of the host are simply not there."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

from kandev.domain.ports import Box, BoxRequest, BoxState, ExecutorError
from kandev.domain.workspace.executor_config import BRIDGE_DIR, FULL_NETWORK
from kandev.platform.agent_host import AgentUser
from kandev.runtime.confinement import blocked_path
from kandev.runtime.process import AgentProcess, minimal_env

_R, _W = 4, 2

BWRAP = "bwrap"
HOME = "/home/agent"
# The host's system folders the box sees read-only (those that exist; a merged /usr makes /bin etc. links).
_SYSTEM = ("/usr", "/etc", "/opt")
_SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32")
_MASKED = ("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-")
_PROBE_SECONDS = 10.0


class SandboxExecutor:
    """Executor port over bubblewrap: one sandbox per session, its pid the box id."""

    kind = "sandbox"

    async def launch(self, request: BoxRequest) -> Box:
        argv = self.command(request)
        env = minimal_env(request.env, request.run_as)
        env.update(HOME=self.home(request), TMPDIR="/tmp")
        # Enforced by the kernel per process (address space) and per identity (processes; not for root).
        limits = {}
        if request.config.memory_mb:
            limits["as"] = request.config.memory_mb << 20
        if request.config.pids:
            limits["nproc"] = request.config.pids
        try:
            box = await AgentProcess.spawn(argv, env, "/", user=request.run_as, limits=limits)
        except (OSError, ValueError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc)
            raise ExecutorError(f"the sandbox could not be started: {reason}", reason="start_failed") from None
        box.kind, box.cwd = self.kind, request.workdir
        return box

    def home(self, request: BoxRequest) -> str:
        """A numeric identity keeps its own HOME under the work dir (a signed-in agent stays signed in); anyone
        else gets a fresh one."""
        user = request.run_as
        return user.home if user is not None and user.tmpdir is not None else HOME

    def command(self, request: BoxRequest) -> list[str]:
        """The bwrap argv that runs `request.argv` in the box; ExecutorError when a path may not be given to it."""
        binary = shutil.which(BWRAP)
        if binary is None:
            raise ExecutorError("bubblewrap (bwrap) is not installed on this worker", reason="unavailable")
        args = [binary, "--die-with-parent", "--new-session", "--unshare-all", "--cap-drop", "ALL"]
        if request.config.network == FULL_NETWORK:
            args.append("--share-net")
        args += ["--hostname", "kandev-box", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/run"]
        for folder in _SYSTEM:
            if os.path.isdir(folder):
                args += ["--ro-bind", folder, folder]
        for link in _SYSTEM_LINKS:
            if os.path.islink(link):
                args += ["--symlink", os.readlink(link), link]
            elif os.path.isdir(link):
                args += ["--ro-bind", link, link]
        for masked in _MASKED:
            if os.path.exists(masked):
                args += ["--ro-bind", "/dev/null", masked]
        home = self.home(request)
        if home == HOME:
            args += ["--tmpfs", HOME]
        # What the agent's identity could not reach outside the box it does not get inside either (and bwrap,
        # running as that identity, could not bind it).
        readable = [p for p in request.readable if os.path.exists(p) and _reachable(p, request.run_as, _R)]
        writable = [request.workdir, *(p for p in request.writable if _reachable(p, request.run_as, _R | _W))]
        if home != HOME:
            writable.append(home)
        for path in [*readable, *writable]:
            _check_bindable(path, request.hidden)
        # Parents before children: a folder bound inside another bound one must come after it.
        for path in sorted(set(readable) - set(writable), key=_depth):
            args += ["--ro-bind", path, path]
        for path in sorted(set(writable), key=_depth):
            args += ["--bind", path, path]
        if request.bridge_dir is not None:
            args += ["--ro-bind", request.bridge_dir, BRIDGE_DIR]
        # Last: the box's own root is read-only too (its binds, /tmp and HOME keep their own modes).
        args += ["--remount-ro", "/", "--chdir", request.workdir]
        return [*args, "--setenv", "HOME", home, "--setenv", "TMPDIR", "/tmp", "--", *request.argv]

    def seen_inside(self, request: BoxRequest, arg: str) -> str:
        return arg  # every host path the sandbox binds is bound at its own path

    async def stop(self, box_id: str) -> None:
        return None  # a sandbox is a process tree under its keeper: its runtime ends it (kill_group)

    async def inspect(self, box_id: str) -> BoxState | None:
        pid = box_id.removeprefix("sandbox:")
        if not pid.isdigit() or not os.path.exists(f"/proc/{pid}"):
            return None
        return BoxState(box_id, running=True)

    async def remove(self, box_id: str) -> None:
        return None  # nothing outlives the keeper: no box to remove

    async def boxes(self, labels: dict[str, str]) -> list[BoxState]:
        return []  # a dead worker's keepers took their sandboxes with them

    async def available(self) -> str | None:
        """Whether bwrap can make a box here: it is run once with every namespace this executor asks for."""
        binary = shutil.which(BWRAP)
        if binary is None:
            return "bubblewrap (bwrap) is not installed"
        probe = [binary, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "--cap-drop", "ALL", "true"]
        try:
            process = await asyncio.create_subprocess_exec(
                *probe, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE, env={"PATH": "/usr/bin"}
            )
            async with asyncio.timeout(_PROBE_SECONDS):
                _, stderr = await process.communicate()
        except (OSError, TimeoutError) as exc:
            return f"bubblewrap could not be run: {exc}"
        if process.returncode != 0:
            said = stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no message"]
            return f"bubblewrap cannot make namespaces here: {said[0]}"
        return None


def _reachable(path: str, user: AgentUser | None, bits: int) -> bool:
    return user is None or blocked_path(path, user, bits) is None


def _check_bindable(path: str, hidden: tuple[str, ...]) -> None:
    real = Path(os.path.realpath(path))
    for folder in hidden:
        if Path(os.path.realpath(folder)).is_relative_to(real):
            raise ExecutorError(
                "the sandbox would have to show the data or work dir to the agent: a folder it needs contains one "
                "of them",
                reason="mount_refused",
            )


def _depth(path: str) -> tuple[int, str]:
    return (len(Path(path).parts), path)
