"""Running git on a worktree an agent controls, to read (or discard) its changes, without ever running anything
the worktree brings along and without reading outside it.

The agent owns its worktree, the `.git` file in it, the worktree's folder in the repository that file points at
(HEAD, index, `commondir`) and, with the local executor, the repository's config. So:

- git is told where everything is (GIT_DIR, GIT_COMMON_DIR, GIT_WORK_TREE), never left to follow the `.git`
  file or `commondir`: the common dir is the registered repository's own, found by the server;
- when agents run as another OS identity, git runs as that identity (its groups dropped), from `/`: whatever a
  planted pointer, config or index made it read, the agent could have read itself;
- in every case nothing configurable runs: no external diff or textconv (`--no-ext-diff --no-textconv` at each
  call), no fsmonitor, hooks, pager, credential helper or network (`protocol.allow=never`, so a promisor remote
  is never fetched from), every filter driver any config names emptied (as kandev.domain.workspace.git does), no
  system or global config, no prompt, no optional index writes; submodules are compared by commit only;
- each call is bounded in time and in the bytes it may print.

Standard library only, blocking: callers run it in a thread."""

from __future__ import annotations

import os
import selectors
import subprocess
import time
from dataclasses import dataclass, field

# Config given with -c outranks every config file, the repository's and the worktree's included.
_SAFE_CONFIG = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.pager=cat",
    "core.untrackedCache=false",
    "core.quotePath=false",
    "core.symlinks=true",
    "core.fileMode=true",
    "core.excludesFile=/dev/null",
    "core.attributesFile=/dev/null",
    "credential.helper=",
    "protocol.allow=never",
    "submodule.recurse=false",
    "diff.external=",
    "diff.noprefix=false",
    "diff.mnemonicPrefix=false",
    "diff.relative=false",
    "diff.srcPrefix=a/",
    "diff.dstPrefix=b/",
    "diff.orderFile=/dev/null",
    "diff.ignoreSubmodules=dirty",
    "color.ui=never",
    "log.showSignature=false",
    "gc.auto=0",
    "maintenance.auto=false",
    # The repository and its worktree folder belong to the agent's identity or the user: reading them is the
    # point, and nothing configurable runs.
    "safe.directory=*",
)
SAFE_OPTIONS = tuple(part for setting in _SAFE_CONFIG for part in ("-c", setting))
DEFAULT_TIMEOUT = 20.0
DEFAULT_LIMIT = 64 * 1024 * 1024


class GitReadError(Exception):
    """git failed, ran out of time or printed more than allowed; the text is safe to show (no file content)."""


@dataclass(frozen=True)
class RunAs:
    """The OS identity git runs as (the agents' own), when they run as another one."""

    uid: int
    gid: int


@dataclass(frozen=True)
class GitPlace:
    """Where one checkout is, as git is told it: the working tree, its git folder (a worktree's own folder in
    the repository) and the repository's common folder."""

    work_tree: str
    git_dir: str
    common_dir: str
    run_as: RunAs | None = None
    # Filter drivers the place's config names, emptied on every call (looked up once per place).
    filters: dict[str, str] = field(default_factory=dict, compare=False)


def base_env(place: GitPlace) -> dict[str, str]:
    """Nothing of this process's environment but PATH: no GIT_* variable, no HOME config, no trace target."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LC_ALL": "C",
        "HOME": "/nonexistent",
        "XDG_CONFIG_HOME": "/nonexistent",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_ATTR_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_NO_LAZY_FETCH": "1",
        "GIT_NO_REPLACE_OBJECTS": "1",
        "GIT_PROTOCOL_FROM_USER": "0",
        "GIT_PAGER": "cat",
        "GIT_DIR": place.git_dir,
        "GIT_COMMON_DIR": place.common_dir,
        "GIT_WORK_TREE": place.work_tree,
    }


def _env(place: GitPlace) -> dict[str, str]:
    env = base_env(place)
    for number, (key, value) in enumerate(place.filters.items()):
        env[f"GIT_CONFIG_KEY_{number}"] = key
        env[f"GIT_CONFIG_VALUE_{number}"] = value
    if place.filters:
        env["GIT_CONFIG_COUNT"] = str(len(place.filters))
    return env


def with_filters_emptied(place: GitPlace) -> GitPlace:
    """The place with every filter driver its config names emptied (an empty command runs nothing); listing
    config runs nothing. Looked up again only when a config file of the place changed (by size and time)."""
    version = _config_version(place)
    cached = _FILTERS.get((place.git_dir, place.common_dir))
    if cached is not None and cached[0] == version:
        overrides = cached[1]
    else:
        overrides, includes = _filter_overrides(place)
        if len(_FILTERS) > 1024:
            _FILTERS.clear()
        if not includes:  # a file a config includes may change unseen: looked up on every read then
            _FILTERS[(place.git_dir, place.common_dir)] = (version, overrides)
    return GitPlace(place.work_tree, place.git_dir, place.common_dir, place.run_as, dict(overrides))


_FILTERS: dict[tuple[str, str], tuple[tuple[tuple[int, int] | None, ...], dict[str, str]]] = {}


def _config_version(place: GitPlace) -> tuple[tuple[int, int] | None, ...]:
    """What the place's own config files look like now (the system's and the user's are never read)."""
    found: list[tuple[int, int] | None] = []
    for path in (os.path.join(place.common_dir, "config"), os.path.join(place.git_dir, "config.worktree")):
        try:
            info = os.stat(path)
            found.append((info.st_size, info.st_mtime_ns))
        except OSError:
            found.append(None)
    return tuple(found)


def _filter_overrides(place: GitPlace) -> tuple[dict[str, str], bool]:
    """The overrides emptying every filter driver configured, and whether the config includes other files."""
    pattern = r"^(filter|include|includeif)\."
    listed = run(place, "config", "-z", "--name-only", "--get-regexp", pattern, check=False, limit=1 << 20)
    names = listed.decode("utf-8", "replace").split("\0")
    includes = any(name.startswith(("include.", "includeif.")) for name in names)
    drivers = {name.rsplit(".", 1)[0] for name in names if name.startswith("filter.") and name.count(".") >= 2}
    overrides: dict[str, str] = {}
    for driver in sorted(drivers):
        for key, value in (("clean", ""), ("smudge", ""), ("process", ""), ("required", "false")):
            overrides[f"{driver}.{key}"] = value
    return overrides, includes


def run(
    place: GitPlace,
    *args: str,
    check: bool = True,
    limit: int = DEFAULT_LIMIT,
    timeout: float = DEFAULT_TIMEOUT,
    stdin: bytes | None = None,
) -> bytes:
    """git's stdout for `args` at `place`; GitReadError when it fails (with `check`), runs longer than `timeout`
    or prints more than `limit` bytes."""
    code, out, err = run_result(place, *args, limit=limit, timeout=timeout, stdin=stdin)
    if check and code != 0:
        first = err.decode("utf-8", "replace").strip().splitlines()[:1]
        raise GitReadError(f"git {args[0]} failed: {first[0][:300] if first else f'exit {code}'}")
    return out


def run_result(
    place: GitPlace,
    *args: str,
    limit: int = DEFAULT_LIMIT,
    timeout: float = DEFAULT_TIMEOUT,
    stdin: bytes | None = None,
) -> tuple[int, bytes, bytes]:
    """git's exit status, stdout and (the tail of) stderr for `args` at `place`, within the same bounds as run."""
    who = place.run_as
    process = subprocess.Popen(
        ["git", "--no-pager", *SAFE_OPTIONS, *args],
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(place),
        # From `/`: the working tree is reached by git itself, as the identity, never by a chdir as the server.
        cwd="/",
        close_fds=True,
        user=None if who is None else who.uid,
        group=None if who is None else who.gid,
        extra_groups=None if who is None else [],
    )
    try:
        out, err = _collect(process, stdin, limit, timeout)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
    return process.returncode, out, err


def _collect(process: subprocess.Popen[bytes], stdin: bytes | None, limit: int, timeout: float) -> tuple[bytes, bytes]:
    """Both outputs, feeding `stdin`, within the bounds (the process is killed by the caller past one)."""
    assert process.stdout is not None and process.stderr is not None
    deadline = time.monotonic() + timeout
    out: list[bytes] = []
    err: list[bytes] = []
    size = 0
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ, out)
        selector.register(process.stderr, selectors.EVENT_READ, err)
        if stdin is not None:
            assert process.stdin is not None
            os.set_blocking(process.stdin.fileno(), False)
            selector.register(process.stdin, selectors.EVENT_WRITE, None)
        pending = memoryview(stdin or b"")
        while len(selector.get_map()) > 0:
            left = deadline - time.monotonic()
            if left <= 0:
                raise GitReadError(f"git ran longer than {timeout:g} s")
            for key, _ in selector.select(left):
                if key.data is None:  # stdin
                    try:
                        written = os.write(key.fd, pending[:65536])
                    except BrokenPipeError:
                        written = len(pending)
                    pending = pending[written:]
                    if not pending:
                        selector.unregister(key.fileobj)
                        key.fileobj.close()  # type: ignore[union-attr]
                    continue
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    selector.unregister(key.fileobj)
                    continue
                key.data.append(chunk)
                if key.data is out:
                    size += len(chunk)
                    if size > limit:
                        raise GitReadError(f"git printed more than {limit // (1024 * 1024)} MiB")
                elif sum(map(len, err)) > 65536:
                    err[:] = err[-4:]
    try:
        process.wait(max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        raise GitReadError(f"git ran longer than {timeout:g} s") from None
    return b"".join(out), b"".join(err)
