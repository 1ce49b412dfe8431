"""Git credentials for a connected workspace: git fetch and push reach a code host with the workspace
connection's token through a credential helper, never through the remote URL, a command line, a log line
or an error text.

The helper is a one-line shell function configured (on the command line for Kandev's own git, in the
repository's config for the agent's git) for the exact origins (`scheme://host[:port]`) a task's remotes
live on. It prints the username and `$KANDEV_GIT_TOKEN_<HOST>`: the token itself travels only in the
environment of the git process (or agent process) that needs it. An empty `credential.helper` before it
resets every helper a global or system config named, so no other helper answers (or stores) for it.

Each registered code host (kandev.domain.ports.CodeHost.credential) answers `(workspace, host) -> token`
(GitHub: the workspace's GitHub connection, username x-access-token; GitLab: its GitLab connection, username
oauth2)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit

from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.ports import CODE_HOSTS, GitCredential
from kandev.domain.workspace.git import run_git
from kandev.platform.log_redaction import scrub
from kandev.platform.settings import Settings


async def credential_for(
    db: AsyncSession, settings: Settings, workspace_id: str, host: str, provider: str | None = None
) -> GitCredential | None:
    """The workspace's token for `host` (lower-case, no port), from the first provider that has one (`provider`
    asked first: a contribution's host is its provider's, even when another connection shares the host)."""
    for code_host in sorted(CODE_HOSTS, key=lambda code_host: code_host.provider != provider):
        found = await code_host.credential(db, settings, workspace_id, host.lower())
        if found is not None:
            return found
    return None


def origin_of(url: str) -> str | None:
    """`https://host[:port]` of an https remote URL (the only transport a token goes over), else None."""
    split = urlsplit(url)
    if split.scheme != "https" or not split.hostname:
        return None
    return f"https://{split.netloc.rpartition('@')[2]}"


def host_of(url: str) -> str | None:
    split = urlsplit(url)
    return split.hostname.lower() if split.scheme == "https" and split.hostname else None


def helper(credential: GitCredential) -> str:
    """The helper: answers `get` with the username and the token read from the environment."""
    return (
        f"!f() {{ test \"$1\" = get && printf 'username=%s\\npassword=%s\\n' "
        f"'{credential.username}' \"${credential.env_name}\"; }}; f"
    )


def config_entries(credential: GitCredential, origins: Iterable[str]) -> list[tuple[str, str]]:
    """(key, value) pairs, in order: per origin a reset then the helper."""
    entries: list[tuple[str, str]] = []
    for origin in sorted(set(origins)):
        entries.append((f"credential.{origin}.helper", ""))
        entries.append((f"credential.{origin}.helper", helper(credential)))
    return entries


def command_args(credential: GitCredential | None, origins: Iterable[str]) -> list[str]:
    """`-c` arguments for Kandev's own git run (no token in them: only the helper, which reads the env)."""
    if credential is None:
        return []
    args = ["-c", "credential.helper="]
    for key, value in config_entries(credential, origins):
        args += ["-c", f"{key}={value}"]
    return args


def configure_repository(path: str, credential: GitCredential, urls: Iterable[str]) -> bool:
    """The helper in a repository's own config (the agent's git reads it, with the token from the agent's
    env): per https origin of `urls`, a reset of other helpers and then ours. False when git refused."""
    origins = sorted({origin for origin in (origin_of(url) for url in urls) if origin})
    for origin in origins:
        run_git("config", "--local", "--unset-all", f"credential.{origin}.helper", cwd=path)
    for key, value in config_entries(credential, origins):
        if run_git("config", "--local", "--add", key, value, cwd=path).returncode != 0:
            return False
    return True


def has_helper(path: str, url: str, credential: GitCredential) -> bool:
    """Whether the repository's config gives `url` Kandev's helper for this credential."""
    origin = origin_of(url)
    if origin is None:
        return False
    listed = run_git("config", "--local", "--get-all", f"credential.{origin}.helper", cwd=path)
    return listed.returncode == 0 and helper(credential) in listed.stdout.splitlines()


def redact(text: str, credential: GitCredential | None = None) -> str:
    """Git output made safe to show: known secrets scrubbed, and any `user:password@` in a URL removed."""
    text = scrub(text)
    if credential is not None:
        text = text.replace(credential.token, "[redacted]")
    return re.sub(r"(https?://)[^/@\s]+@", r"\1", text)
