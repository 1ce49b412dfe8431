"""The one way Kandev runs git on a user-supplied repository: hardened so that adding, cloning or
launching a repository never runs code the repository (or its config) brings along.

- hooks and fsmonitor are off (`core.hooksPath=/dev/null`, `core.fsmonitor=false`);
- only the https, ssh and file transports are allowed (`ext::`, `fd::`, git://, http:// are refused), and
  file only when we asked for it, not when git follows a submodule URL; `-c` config reaches the git
  processes git itself starts, through GIT_CONFIG_PARAMETERS (GIT_ALLOW_PROTOCOL is not used: it would
  force file to `always`);
- submodules are never recursed into, and no automatic gc runs (it would prune worktrees through links);
- filter drivers the repository's config defines (clean/smudge/process, which a checkout or a status
  would run) are emptied, passed as GIT_CONFIG_KEY_n/VALUE_n so no driver name can smuggle a value;
- variables that would point git at another repository or inject config are dropped from its env, and it
  never prompts for credentials.

Config given with `-c` outranks every config file, so a repository's `.git/config` cannot undo these.
`core.sshCommand`/`credential.helper` from a repository's config only matter for network commands run
inside that repository: Kandev runs those (a contribution's fetch, the write preflight) only with
`credential_args`, whose empty `credential.helper` first resets every helper a config file named."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ALLOWED_PROTOCOLS = ("https", "ssh", "file")

HARDENING: tuple[str, ...] = (
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "submodule.recurse=false",
    "-c",
    "protocol.allow=never",
    "-c",
    "protocol.https.allow=always",
    "-c",
    "protocol.ssh.allow=always",
    # `user`: a file URL we were given may be cloned, but git itself following one (a submodule's URL)
    # may not, so a repository cannot pull another checkout on this machine in behind the source rules.
    "-c",
    "protocol.file.allow=user",
    # No automatic gc: it prunes worktrees, and git's own removal of a worktree's folder in the repository
    # follows a link its agent swapped in (kandev.domain.workspace.workdirs.prune_worktrees does it safely).
    "-c",
    "gc.auto=0",
    "-c",
    "maintenance.auto=false",
    "-c",
    "gc.worktreePruneExpire=never",
)

# Inherited variables that would redirect git to another repository or smuggle config past HARDENING.
_DROPPED_ENV = {
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_EXTERNAL_DIFF",
    "GIT_EXEC_PATH",
}


def git_env(config: dict[str, str] | None = None) -> dict[str, str]:
    """This process's env minus redirections, never prompting, plus `config` passed as
    GIT_CONFIG_KEY_n/VALUE_n (key and value apart, so no key can smuggle a value)."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in _DROPPED_ENV and not key.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))
    }
    env["GIT_TERMINAL_PROMPT"] = "0"
    for number, (key, value) in enumerate((config or {}).items()):
        env[f"GIT_CONFIG_KEY_{number}"] = key
        env[f"GIT_CONFIG_VALUE_{number}"] = value
    if config:
        env["GIT_CONFIG_COUNT"] = str(len(config))
    return env


def git_argv(*args: str) -> list[str]:
    return ["git", *HARDENING, *args]


def run_git(
    *args: str,
    cwd: str | Path | None = None,
    timeout: float = 60,
    credential_args: list[str] | None = None,
    credential_env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run hardened git without raising on a non-zero exit. `credential_args` (`-c` credential helper
    config, kandev.domain.workspace.git_credentials) and `credential_env` (the token the helper reads)
    reach this one git process only."""
    config = _filter_overrides(cwd) if cwd is not None else None
    env = git_env(config)
    env.update(credential_env or {})
    argv = git_argv(*args)
    argv[1:1] = credential_args or []
    return subprocess.run(
        argv,
        cwd=cwd,
        check=False,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def git(
    *args: str,
    cwd: str | Path | None = None,
    timeout: float = 60,
    credential_args: list[str] | None = None,
    credential_env: dict[str, str] | None = None,
) -> str:
    """Run hardened git and return its stdout; raises CalledProcessError with git's stderr."""
    done = run_git(*args, cwd=cwd, timeout=timeout, credential_args=credential_args, credential_env=credential_env)
    if done.returncode != 0:
        raise subprocess.CalledProcessError(done.returncode, done.args, done.stdout, done.stderr)
    return done.stdout.strip()


def _filter_overrides(cwd: str | Path) -> dict[str, str]:
    """Empty every filter driver the repository's config names (an empty command runs nothing), so a
    checkout runs none of them; listing config runs nothing."""
    listed = subprocess.run(
        git_argv("config", "-z", "--name-only", "--get-regexp", r"^filter\."),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=30,
        env=git_env(),
        check=False,
    )
    drivers = {name.rsplit(".", 1)[0] for name in listed.stdout.split("\0") if name.count(".") >= 2}
    overrides: dict[str, str] = {}
    for driver in sorted(drivers):
        for key, value in (("clean", ""), ("smudge", ""), ("process", ""), ("required", "false")):
            overrides[f"{driver}.{key}"] = value
    return overrides
