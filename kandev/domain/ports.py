"""What the domain needs from the outside world, named as protocols that adapters implement and the composition
root registers (kandev.wiring): code hosts, executors and the notifier. A new code host (Gitea, Bitbucket, ...)
or executor (Kubernetes) is one more adapter registered here, and no domain module changes."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.code_requests import (
    CheckLog,
    HostedRepository,
    HostReviewComment,
    MergeMethod,
    NewRequest,
    RequestCheck,
    RequestStatus,
)
from kandev.domain.errors import UnprocessableError
from kandev.domain.outbound import OutboundPolicy
from kandev.domain.workspace.executor_config import BoxConfig
from kandev.models.enums import TriggerType
from kandev.platform.agent_host import AgentUser
from kandev.platform.log_redaction import remember_secrets
from kandev.platform.settings import Settings

# --- code hosts ---------------------------------------------------------------------------------------------


class ContributionError(UnprocessableError):
    """A PR/MR URL that can't become a task; `reason` says why (not_connected, host_mismatch, not_found,
    not_open, no_head, no_push_permission, untrusted_remote, unreachable, executor_unsupported, git_failed,
    write_check_failed);
    code UNPROCESSABLE on every edge."""

    def __init__(self, message: str, reason: str, **fields: object) -> None:
        super().__init__(message, reason=reason, **fields)
        self.reason = reason


@dataclass(frozen=True)
class ContributionRef:
    """A canonical PR/MR URL, parsed: nothing asked of the provider yet."""

    provider: str
    host: str
    target: str  # owner/name (GitLab: the project path)
    number: int  # PR number / MR iid
    url: str


@dataclass(frozen=True)
class Contribution:
    """A resolved, open, pushable contribution: what git needs, nothing the provider's authors wrote."""

    provider: str
    host: str
    target: str
    number: int
    url: str
    target_clone_url: str
    source_clone_url: str
    source_branch: str
    head_sha: str
    base_branch: str
    # The instance's path prefix (a GitLab served under e.g. /gitlab); "" on GitHub.
    base_path: str = ""


# resolve_event's reason when the workspace has no connection to the event's code host.
NO_CONNECTION = "no_connection"


@dataclass(frozen=True)
class EventCheckout:
    """What a provider event names to work on: a pull request (`number`) or a branch at a commit."""

    provider: str
    repository: str  # owner/name (GitLab: the project path)
    branch: str
    sha: str | None = None
    number: int | None = None
    base_branch: str = ""  # a branch's diff base ("": the repository's default); a pull request has its own

    @property
    def key(self) -> str:
        """Two events with one key name the same checkout (a continued session may stay on it)."""
        where = f"#{self.number}" if self.number else f"@{self.branch}"
        return f"{self.provider}:{self.repository.lower()}{where}"


@dataclass(frozen=True)
class GitCredential:
    """A token for one code host; `username` is what the host expects beside a token."""

    host: str
    username: str
    token: str

    def __post_init__(self) -> None:
        remember_secrets([self.token])

    def __repr__(self) -> str:  # never the token, whatever prints this
        return f"GitCredential(host={self.host!r}, username={self.username!r})"

    @property
    def env_name(self) -> str:
        return env_name(self.host)

    def env(self) -> dict[str, str]:
        """What the git (or agent) process needs in its environment."""
        return {self.env_name: self.token}


def env_name(host: str) -> str:
    return "KANDEV_GIT_TOKEN_" + re.sub(r"[^A-Z0-9]", "_", host.upper())


class RequestApi(Protocol):
    """One repository's pull or merge requests on a code host, with the workspace connection's token; an async
    context manager. Every refusal is a CodeHostRefused (kandev.domain.code_requests) with its reason; nothing
    is retried here, so a call reaches the host once."""

    async def __aenter__(self) -> RequestApi: ...

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None: ...

    async def open(self, new: NewRequest) -> RequestStatus:
        """Open a request from `new.head_branch` into `new.base_branch` (reason duplicate_request when one is
        open already, base_missing when the base is gone)."""

    async def open_from(self, head_branch: str) -> list[RequestStatus]:
        """The open requests whose head is `head_branch` of this repository (a check before opening again)."""

    async def status(self, number: int) -> RequestStatus:
        """The request now: state, draft, review decision, mergeability, its head commit's checks."""

    async def merge(self, number: int, method: MergeMethod, head_sha: str) -> RequestStatus:
        """Merge it if its head is still `head_sha` (reason not_mergeable with the host's word, head_moved,
        closed or merged otherwise)."""

    async def check_logs(self, head_sha: str, checks: Sequence[RequestCheck], limit: int) -> list[CheckLog]:
        """The last `limit` bytes (at most) of the log of each of these checks of the commit `head_sha`."""

    async def review_comments(self, number: int) -> list[HostReviewComment]:
        """The review comments people made on the request, oldest first."""

    async def protected(self, branch: str) -> bool:
        """Whether the host protects `branch` (pushes to it are refused from Kandev)."""


@dataclass(frozen=True)
class HostDelivery:
    """A code host's webhook delivery, verified and read: the trigger it may fire, the host's routing key for it
    (a GitHub App installation), the repository it concerns (owner/name), the key that fires it once per
    repository, and what the runs it starts see."""

    trigger_type: TriggerType
    route: int
    repository: str
    dedup_key: str
    data: dict[str, Any]


class DeliveryReader(Protocol):
    """How a code host's webhook deliveries are checked and read. Nothing here touches the database: the domain
    routes, deduplicates and fires what `read` returns (kandev.domain.github.webhooks)."""

    def signed(self, secret: str, body: bytes, signature: str | None) -> bool:
        """Whether `signature` (the delivery's signature header, None when missing) proves the raw `body` was
        sent by someone holding `secret`; in constant time."""

    def read(self, event: str, payload: Mapping[str, Any]) -> HostDelivery | str:
        """The delivery of kind `event` (the host's event header) with its JSON object `payload`, or why it
        fires nothing (an event no trigger listens for, a branch deletion, an unfinished check, ...)."""


class CodeHost(Protocol):
    """A code host (GitHub, GitLab, ...): a task made from one of its pull or merge requests is resolved, linked
    and pushed through it, the agent's and Kandev's git reach it with the workspace's credential, and a task's
    changes are shipped through its pull or merge requests."""

    provider: str
    # The local branch's prefix: pr-<n>-<task> on GitHub, mr-<iid>-<task> on GitLab.
    branch_prefix: str
    # Its webhook deliveries, when Kandev acts on them (GitHub's App deliveries); None: none are read.
    deliveries: DeliveryReader | None

    def remote_target(self, remote_url: str | None, contribution: Contribution) -> tuple[str, str] | None:
        """(host, owner/name or project path) of a repository's remote on this provider, else None."""

    def parse(self, url: str) -> ContributionRef | None:
        """The URL's parts when it is this provider's canonical PR/MR URL form, else None."""

    async def resolve(
        self, db: AsyncSession, settings: Settings, workspace_id: str, ref: ContributionRef
    ) -> Contribution:
        """Ask the provider (the workspace connection's token); ContributionError when unusable."""

    async def resolve_event(
        self, db: AsyncSession, settings: Settings, workspace_id: str, checkout: EventCheckout
    ) -> Contribution:
        """The contribution a provider event names, with the workspace connection's token; ContributionError
        (not_connected without a connection) when unusable."""

    async def link(self, db: AsyncSession, task_id: str, contribution: Contribution) -> None:
        """Link the existing PR/MR to the new task (in the create's transaction), so it is reused, not reopened."""

    async def credential(
        self, db: AsyncSession, settings: Settings, workspace_id: str, host: str
    ) -> GitCredential | None:
        """The workspace connection's token for `host` (lower-case, no port), when this host has one."""

    async def hosted(
        self, db: AsyncSession, settings: Settings, workspace_id: str, remote_url: str | None
    ) -> HostedRepository | None:
        """The repository a remote URL names on this host, when the workspace is connected to it; else None."""

    async def requests(
        self, db: AsyncSession, settings: Settings, workspace_id: str, repository: HostedRepository
    ) -> RequestApi:
        """The repository's requests with the workspace connection's token (ProviderNotConnectedError without
        one)."""


class CodeHosts:
    """The code hosts this process knows, by provider name, in registration order."""

    def __init__(self) -> None:
        self._hosts: dict[str, CodeHost] = {}

    def register(self, host: CodeHost) -> None:
        self._hosts[host.provider] = host

    def unregister(self, provider: str) -> None:
        self._hosts.pop(provider, None)

    def get(self, provider: str) -> CodeHost | None:
        return self._hosts.get(provider)

    def __iter__(self) -> Iterator[CodeHost]:
        return iter(list(self._hosts.values()))


CODE_HOSTS = CodeHosts()


# --- executors ----------------------------------------------------------------------------------------------


class ExecutorError(UnprocessableError):
    """A box that could not be made or run; `reason` names the cause (unavailable, daemon_unavailable,
    image_missing, build_failed, prepare_failed, mount_refused, no_user, start_failed); code UNPROCESSABLE on
    every edge. Nothing the failed attempt started is left running."""

    def __init__(self, message: str, reason: str, **fields: object) -> None:
        super().__init__(message, reason=reason, **fields)
        self.reason = reason


@dataclass(frozen=True)
class BoxRequest:
    """One session's box: the agent's command and environment (secrets already resolved), the host folder of its
    worktree (read-write at the agent's working path), the profile's settings, the OS identity it runs as, the
    host paths it must read (a built-in agent's package), and the folder holding the session's MCP socket."""

    session_id: str
    task_id: str
    kind: str
    argv: list[str]
    env: dict[str, str]
    workdir: str
    config: BoxConfig
    run_as: AgentUser | None = None
    readable: tuple[str, ...] = ()
    # Host folders the agent also writes at their own paths: its task directory, its repositories' git dirs.
    writable: tuple[str, ...] = ()
    bridge_dir: str | None = None
    labels: dict[str, str] | None = None
    # Folders no path given to the box may contain: the data dir (key, database) and the work dir (every task's).
    hidden: tuple[str, ...] = ()


@dataclass(frozen=True)
class BoxState:
    """What inspecting a box found: running or how it ended (an out-of-memory kill is named)."""

    box_id: str
    running: bool
    exit_code: int | None = None
    oom_killed: bool = False
    labels: dict[str, str] | None = None


class Box(Protocol):
    """A running agent in a box, attached by its stdio: what the ACP runtime speaks to."""

    @property
    def box_id(self) -> str: ...

    @property
    def pid(self) -> int: ...

    @property
    def cwd(self) -> str:
        """The agent's working directory as the agent sees it (what ACP's session/new names)."""

    @property
    def returncode(self) -> int | None: ...

    @property
    def stdin(self) -> Any: ...  # write(bytes), async drain(): an asyncio.StreamWriter or alike

    @property
    def stdout(self) -> asyncio.StreamReader: ...

    async def wait(self) -> int: ...

    async def stderr_tail(self, lines: int = 20, settle: float = 0.5) -> list[str]: ...

    async def kill_group(self, term_grace: float = 0.5) -> int | None:
        """Stop the agent and everything it started, and remove the box; returns its status."""

    async def exit_reason(self) -> str | None:
        """Why the box ended when it was not the agent's own doing (a limit it broke), else None."""


class Executor(Protocol):
    """Where agents run: the plain kinds start a process on this host, the box kinds (SANDBOX, DOCKER) a box per
    session, labelled with it. A Kubernetes executor (a pod per session) is one more adapter of this port."""

    kind: str

    async def launch(self, request: BoxRequest) -> Box:
        """Make the box, start the agent in it and attach its stdio; ExecutorError (nothing left running)."""

    async def stop(self, box_id: str) -> None:
        """Stop a box by id (its agent and every process in it)."""

    async def inspect(self, box_id: str) -> BoxState | None:
        """The box's state, None when it is gone."""

    async def remove(self, box_id: str) -> None:
        """Remove a box by id, running or not; nothing when it is gone."""

    async def boxes(self, labels: dict[str, str]) -> list[BoxState]:
        """Every box carrying all of `labels` (what recovery sweeps)."""

    async def available(self) -> str | None:
        """None when boxes of this kind can be made on this host, else why not."""

    def seen_inside(self, request: BoxRequest, arg: str) -> str:
        """An argument naming a host path as the box's processes see it (a workspace MCP server's command and
        arguments are handed to the agent, which starts them inside)."""


class Executors:
    """The executors this process can run, by kind; the plain kinds use the default process launcher."""

    def __init__(self) -> None:
        self._executors: dict[str, Executor] = {}

    def register(self, executor: Executor) -> None:
        self._executors[executor.kind] = executor

    def unregister(self, kind: str) -> None:
        self._executors.pop(kind, None)

    def get(self, kind: str) -> Executor | None:
        return self._executors.get(kind)

    def __iter__(self) -> Iterator[Executor]:
        return iter(list(self._executors.values()))


EXECUTORS = Executors()


# --- notifications -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NotificationTarget:
    """What may be shown of a channel's URL: the service and its host, never a token."""

    service: str
    target: str


@dataclass(frozen=True)
class Notification:
    """One message to a person: `key` is the same on every attempt, so a receiver can drop a repeat."""

    title: str
    body: str
    key: str


class NotificationFailed(Exception):
    """A target refused, failed or timed out; the text is safe to show (no URL, no token)."""


class Notifier(Protocol):
    """Sends to the services people use (Slack, Discord, e-mail, ntfy, webhooks, ...), addressed by URL.

    `policy` is the outbound rule for a URL a non-admin saved (None: an admin's, trusted): every connection the
    send makes is checked by it and goes to an address it validated."""

    def check(self, url: str, policy: OutboundPolicy | None, field: str) -> NotificationTarget:
        """The URL's service and host; ValidationError (naming `field`, never echoing the URL) when it is no
        URL of a service this notifier knows, or `policy` refuses where it would connect."""

    def send(self, url: str, note: Notification, policy: OutboundPolicy | None, timeout: float) -> None:
        """Deliver `note` (blocking, bounded by `timeout` per connection); NotificationFailed when it was not."""


class NotifierSlot:
    """The notifier this process registered (kandev.wiring)."""

    def __init__(self) -> None:
        self._notifier: Notifier | None = None

    def use(self, notifier: Notifier | None) -> None:
        self._notifier = notifier

    def get(self) -> Notifier:
        if self._notifier is None:
            raise RuntimeError("no notifier is registered (kandev.wiring registers one)")
        return self._notifier


NOTIFIER = NotifierSlot()
