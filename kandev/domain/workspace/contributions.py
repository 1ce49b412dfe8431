"""Tasks made from an existing pull request (GitHub) or merge request (GitLab) URL.

A code host (kandev.domain.ports.CodeHost) turns a canonical URL into a provider-neutral `Contribution`
(target and source clone URLs, source branch, head sha, number, url) through the provider's API with the
workspace connection's token, refusing one that is not open, has no head, or may not be pushed to. The task then
works in the target repository (kept as origin; found among the workspace's repositories by remote, or
cloned and registered), on a local branch made at the exact head sha fetched from the source repository,
whose `git push` goes to the contributor's existing source branch through a remote of the task's own
(`branch.<b>.pushRemote` + `remote.<r>.push`). The existing PR/MR is linked to the task.

Only the caller's title and prompt enter the task: the provider's title, body, comments and diff are
never read into it (the resolver keeps only what git needs).

A provider event an automation fires on names its checkout the same way (`resolve_event_checkout`): a pull
request is resolved as above; a branch (a push, a check run's head) becomes a contribution without a number
whose local branch starts at the event's commit and pushes back to that branch. Neither runs a write
preflight (a pull request's task keeps it); only a pull request is linked.

Before the agent starts, `write_preflight` dry-runs a push of the head to the contributor's branch with
the connection's credentials; a failure fails the start with the reason.

Code hosts are registered at composition (kandev.wiring: kandev.adapters.github and kandev.adapters.gitlab);
each links its PR/MR to the task its own way."""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.access.agent_identities import workspace_agent_identity
from kandev.domain.context import ServiceContext, UnitOfWork
from kandev.domain.errors import ValidationError
from kandev.domain.ports import (
    CODE_HOSTS,
    CodeHost,
    Contribution,
    ContributionError,
    ContributionRef,
    EventCheckout,
    GitCredential,
)
from kandev.domain.workspace import git_credentials as creds
from kandev.domain.workspace.git import run_git
from kandev.domain.workspace.repositories import current_branch, free_repository_name
from kandev.domain.workspace.workdirs import clone_folder, executor_kind
from kandev.models import Repository, Task, TaskContribution, TaskRepository
from kandev.models.base import new_id
from kandev.models.enums import ExecutorKind
from kandev.platform.settings import Settings

_SHA = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")
_BRANCH = re.compile(r"^(?!-)(?!.*\.\.)(?!.*//)(?!.*@\{)[^\s~^:?*\[\\]{1,200}(?<![./])$")


def _resolver(provider: str) -> CodeHost:
    host = CODE_HOSTS.get(provider)
    if host is None:
        raise ContributionError(f"no code host named {provider} is registered", "not_connected")
    return host


def parse_contribution_url(url: str, field: str) -> ContributionRef:
    """The canonical PR/MR URL's parts; a ValidationError (reason not_canonical) for anything else."""
    text = (url or "").strip()
    for resolver in CODE_HOSTS:
        ref = resolver.parse(text)
        if ref is not None:
            return ref
    raise ValidationError(
        "repository_url must be a canonical pull request URL (https://<host>/<owner>/<repo>/pull/<number>) "
        "or merge request URL (https://<host>/<group>/<project>/-/merge_requests/<iid>) on the workspace's "
        "connected host",
        field=field,
        reason="not_canonical",
    )


async def resolve_contribution(
    db: AsyncSession, settings: Settings, workspace_id: str, ref: ContributionRef
) -> Contribution:
    resolver = _resolver(ref.provider)
    return _trusted(await resolver.resolve(db, settings, workspace_id, ref), ref.host)


async def resolve_event_checkout(
    db: AsyncSession, settings: Settings, workspace_id: str, checkout: EventCheckout
) -> Contribution:
    """The contribution an automation's provider event names (see the module's docstring)."""
    found = await _resolver(checkout.provider).resolve_event(db, settings, workspace_id, checkout)
    return _trusted(found, found.host)


def _trusted(found: Contribution, host: str) -> Contribution:
    """Clone URLs only over https on the connected host; a valid branch and an exact head commit."""
    for url in (found.target_clone_url, found.source_clone_url):
        if creds.host_of(url) != host:
            raise ContributionError(
                "the provider named a clone URL that is not https on the connected host", "untrusted_remote"
            )
    if not _BRANCH.match(found.source_branch) or not _SHA.fullmatch(found.head_sha):
        raise ContributionError("the contribution has no valid source branch and head commit", "no_head")
    return found


# --- git ------------------------------------------------------------------------------------------


def remote_name(task_id: str) -> str:
    return f"kandev-{task_id[:8]}"


def local_branch(task_id: str, contribution: Contribution) -> str:
    """Outside `kandev/`: a generated title renames only Kandev-made branches, and this one is the PR's/MR's
    (or, for a branch an event named, that branch's)."""
    if not contribution.number:
        return f"{contribution.source_branch}-{task_id[:8]}"
    return f"{_resolver(contribution.provider).branch_prefix}-{contribution.number}-{task_id[:8]}"


def _origins(*urls: str) -> list[str]:
    return [origin for origin in (creds.origin_of(url) for url in urls) if origin]


def _git(
    path: str | Path, *args: str, credential: GitCredential | None = None, origins: list[str] | None = None
) -> str:
    """Hardened git in `path` with the credential helper for `origins`; raises ContributionError with
    redacted output (never the token, never a URL's userinfo)."""
    try:
        done = run_git(
            *args,
            cwd=path,
            timeout=300,
            credential_args=creds.command_args(credential, origins or []),
            credential_env=credential.env() if credential else None,
        )
    except (subprocess.TimeoutExpired, OSError):
        raise ContributionError(f"git {args[0]} did not finish", "git_failed") from None
    if done.returncode != 0:
        detail = creds.redact((done.stderr or done.stdout or "").strip(), credential)[-500:]
        raise ContributionError(f"git {args[0]} failed: {detail}", "git_failed")
    return done.stdout.strip()


def clone_target(contribution: Contribution, target: Path, credential: GitCredential | None) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        _git(
            target.parent,
            "clone",
            "--quiet",
            "--",
            contribution.target_clone_url,
            str(target),
            credential=credential,
            origins=_origins(contribution.target_clone_url),
        )
    except ContributionError:
        shutil.rmtree(target, ignore_errors=True)
        raise


def prepare_branch(
    path: str, task_id: str, contribution: Contribution, credential: GitCredential | None
) -> tuple[str, str]:
    """In the target repository at `path`: a remote for the contributor, the exact head fetched from it, a
    local branch at that sha whose push goes to the source branch. Returns (remote, local branch)."""
    remote, branch = remote_name(task_id), local_branch(task_id, contribution)
    source = contribution.source_clone_url
    origins = _origins(source)
    if run_git("remote", "get-url", remote, cwd=path).returncode == 0:
        _git(path, "remote", "set-url", remote, source)
    else:
        _git(path, "remote", "add", remote, source)
    tracking = f"refs/remotes/{remote}/{contribution.source_branch}"
    _git(
        path,
        "fetch",
        "--quiet",
        "--no-tags",
        remote,
        f"+refs/heads/{contribution.source_branch}:{tracking}",
        credential=credential,
        origins=origins,
    )
    if run_git("cat-file", "-e", f"{contribution.head_sha}^{{commit}}", cwd=path).returncode != 0:
        try:  # the branch moved on since: fetch the exact commit itself
            _git(
                path,
                "fetch",
                "--quiet",
                "--no-tags",
                remote,
                contribution.head_sha,
                credential=credential,
                origins=origins,
            )
        except ContributionError:
            raise ContributionError("the contribution's head commit could not be fetched", "no_head") from None
    _git(path, "branch", "--no-track", branch, contribution.head_sha)
    _git(path, "config", "--local", f"branch.{branch}.remote", remote)
    _git(path, "config", "--local", f"branch.{branch}.merge", f"refs/heads/{contribution.source_branch}")
    _git(path, "config", "--local", f"branch.{branch}.pushRemote", remote)
    _git(
        path,
        "config",
        "--local",
        "--replace-all",
        f"remote.{remote}.push",
        f"refs/heads/{branch}:refs/heads/{contribution.source_branch}",
    )
    if credential is not None and not creds.configure_repository(
        path, credential, [contribution.target_clone_url, source]
    ):
        raise ContributionError("git could not configure the repository's credential helper", "git_failed")
    return remote, branch


def undo_branch(path: str, remote: str, branch: str) -> None:
    run_git("branch", "-D", branch, cwd=path)
    run_git("remote", "remove", remote, cwd=path)


async def target_repository(db: AsyncSession, workspace_id: str, contribution: Contribution) -> Repository | None:
    """A workspace repository whose origin is the target (same host and owner/name, or GitLab project path)."""
    wanted = (contribution.host, contribution.target.lower())
    resolver = _resolver(contribution.provider)
    for repository in await db.scalars(select(Repository).where(Repository.workspace_id == workspace_id)):
        parsed = resolver.remote_target(repository.remote_url, contribution)
        if parsed is not None and (parsed[0], parsed[1].lower()) == wanted:
            return repository
    return None


@dataclass
class Undo:
    """What a create materialized for its contributions, removed again when it fails later."""

    actions: list[Callable[[], object]]

    def run(self) -> None:
        for action in reversed(self.actions):
            action()


async def attach_contribution(
    settings: Settings,
    uow: UnitOfWork,
    task: Task,
    contribution: Contribution,
    position: int,
    undo: Undo,
) -> TaskRepository:
    """Inside the task's create: the target repository (found or cloned), the branch, the task links. Every
    file-system step is recorded in `undo` for a create that fails later."""
    db = uow.db
    kind = await executor_kind(db, task.executor_profile_id)
    if kind != ExecutorKind.WORKTREE:  # the local one would work on the user's checkout, scratch on no repository
        raise ContributionError(
            f"a task on a pull or merge request needs the worktree executor, not {kind.value}",
            "executor_unsupported",
        )
    credential = await creds.credential_for(db, settings, task.workspace_id, contribution.host, contribution.provider)
    repository = await target_repository(db, task.workspace_id, contribution)
    if repository is None:
        owner = await workspace_agent_identity(db, settings, task.workspace_id)
        folder = await asyncio.to_thread(clone_folder, settings.work_path, task.workspace_id, new_id(), owner)
        await asyncio.to_thread(clone_target, contribution, folder, credential)
        undo.actions.append(lambda: shutil.rmtree(folder, ignore_errors=True))
        default = await asyncio.to_thread(current_branch, str(folder)) or contribution.base_branch
        name = await free_repository_name(
            db, task.workspace_id, re.sub(r"[^\w.-]+", "-", contribution.target.split("/")[-1])
        )
        repository = Repository(
            id=new_id(),
            workspace_id=task.workspace_id,
            name=name,
            path=str(folder),
            default_branch=default,
            remote_url=contribution.target_clone_url,
        )
        db.add(repository)
        await db.flush()
    path = repository.path
    remote, branch = await asyncio.to_thread(prepare_branch, path, task.id, contribution, credential)
    undo.actions.append(lambda: undo_branch(path, remote, branch))
    base = contribution.base_branch
    if run_git("rev-parse", "--verify", "--quiet", f"{base}^{{commit}}", cwd=path).returncode != 0:
        base = repository.default_branch
    link = TaskRepository(
        task_id=task.id, repository_id=repository.id, position=position, base_branch=base, branch=branch
    )
    db.add(link)
    db.add(
        TaskContribution(
            task_id=task.id,
            repository_id=repository.id,
            provider=contribution.provider,
            host=contribution.host,
            target=contribution.target,
            number=contribution.number,
            url=contribution.url,
            remote_name=remote,
            source_clone_url=contribution.source_clone_url,
            source_branch=contribution.source_branch,
            local_branch=branch,
            head_sha=contribution.head_sha,
        )
    )
    if contribution.number:  # a pull/merge request; an event's branch has nothing to link
        await _resolver(contribution.provider).link(db, task.id, contribution)
    await db.flush()
    return link


# --- the agent's side -------------------------------------------------------------------------------


async def agent_git_credentials(db: AsyncSession, settings: Settings, task: Task) -> list[GitCredential]:
    """The credentials the task's agent's git needs: for its contributions' hosts, and for each of its
    repositories whose config Kandev gave the credential helper (a remote source cloned through it). A
    repository merely on a connected host, without the helper, gets no token."""
    rows = await db.execute(
        select(TaskContribution.host, TaskContribution.provider).where(TaskContribution.task_id == task.id)
    )
    hosts: dict[str, str] = {host: provider for host, provider in rows}
    repositories = await db.execute(
        select(Repository.path, Repository.remote_url)
        .join(TaskRepository, TaskRepository.repository_id == Repository.id)
        .where(TaskRepository.task_id == task.id)
    )
    candidates: list[tuple[str, str]] = [(path, remote) for path, remote in repositories if remote]
    found: dict[str, GitCredential] = {}
    for host in sorted(hosts):
        credential = await creds.credential_for(db, settings, task.workspace_id, host, hosts[host])
        if credential is not None:
            found[host] = credential
    for path, remote in candidates:
        remote_host = creds.host_of(remote)
        if remote_host is None or remote_host in found:
            continue
        credential = await creds.credential_for(db, settings, task.workspace_id, remote_host)
        if credential is not None and await asyncio.to_thread(creds.has_helper, path, remote, credential):
            found[remote_host] = credential
    return list(found.values())


async def write_preflight(ctx: ServiceContext, task_id: str) -> None:
    """Before the agent starts: can the contributor's branch be pushed to with the connection's
    credentials? A dry-run push of the head; ContributionError (write_check_failed) with git's redacted
    reason when not."""
    async with ctx.read() as db:
        task = await db.get(Task, task_id)
        if task is None:
            return
        rows = list(
            await db.scalars(
                select(TaskContribution).where(TaskContribution.task_id == task_id, TaskContribution.number > 0)
            )
        )
        checks = []
        for row in rows:
            repository = await db.get(Repository, row.repository_id)
            if repository is None:
                continue
            credential = await creds.credential_for(db, ctx.settings, task.workspace_id, row.host, row.provider)
            checks.append((row, repository, credential))
    for row, repository, credential in checks:
        try:
            # In the repository, never in the task's worktree: its `.git` file is the agent's, and could point
            # git at a config of the agent's making. The branch and its remote live in the repository anyway.
            await asyncio.to_thread(
                _git,
                repository.path,
                "push",
                "--dry-run",
                "--porcelain",
                row.remote_name,
                f"refs/heads/{row.local_branch}:refs/heads/{row.source_branch}",
                credential=credential,
                origins=_origins(row.source_clone_url),
            )
        except ContributionError as error:
            raise ContributionError(
                f"the write check for {row.url} failed: Kandev can not push to the contributor's branch "
                f"{row.source_branch} ({error.message})",
                "write_check_failed",
            ) from None
