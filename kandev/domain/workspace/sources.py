"""Workspace sources: repositories and folders added to an existing task, as one atomic batch for an
idle task (add), one repository on a sibling worktree during a turn (add_branch), and the diff base
of a task's repository (update_base_branch).

A batch is validated as a whole before anything is written (400), then resolved inside one unit of
work: unknown sources are not found (404), contradictory duplicates and a busy task conflict (409),
and an executor that can't take the source or git failing to materialize it is unprocessable (422).
Anything materialized before a failure is removed again, so a failed batch leaves nothing behind.
An exact retry of sources the task already has is a no-op.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import select

from kandev.domain.access.agent_identities import task_agent_identity, workspace_agent_identity
from kandev.domain.context import ServiceContext, UnitOfWork, is_admin
from kandev.domain.errors import (
    ConflictError,
    NotFoundError,
    PermissionDeniedError,
    UnprocessableError,
    ValidationError,
)
from kandev.domain.feeds import emit_session_event, emit_task_event
from kandev.domain.outbound import outbound_policy
from kandev.domain.ports import GitCredential
from kandev.domain.records import TaskRecord
from kandev.domain.scope import load_task
from kandev.domain.session_rows import is_terminal, task_sessions
from kandev.domain.sessions.tool_profiles import refresh_profile
from kandev.domain.workspace.git import ALLOWED_PROTOCOLS, git, run_git
from kandev.domain.workspace.git_credentials import (
    command_args,
    configure_repository,
    credential_for,
    host_of,
    origin_of,
)
from kandev.domain.workspace.remote_hosts import pinned
from kandev.domain.workspace.repositories import current_branch, free_repository_name, remote_url_of
from kandev.domain.workspace.source_roots import (
    CheckedRemote,
    confine_path,
    confine_remote,
    confine_repository,
    refuse_foreign,
)
from kandev.domain.workspace.workdirs import (
    add_worktree,
    branch_name,
    clone_folder,
    executor_kind,
    link_folder,
    remove_worktree,
    task_directory,
)
from kandev.models import Repository, Task, TaskFolder, TaskRepository
from kandev.models.base import new_id, utcnow
from kandev.models.enums import ExecutorKind, SessionState

MAX_SOURCES = 20
MAX_FOLDER_NAME_LENGTH = 200
ACTIVE_SESSION_STATES = (SessionState.STARTING, SessionState.RUNNING)
REPOSITORY_EXECUTORS = (ExecutorKind.WORKTREE, ExecutorKind.LOCAL)
_BRANCH = re.compile(r"^(?!-)(?!.*\.\.)(?!.*//)(?!.*@\{)[^\s~^:?*\[\\]+(?<![./])$")
# https, ssh (URL or scp-like) and file URLs, or a plain absolute path: the transports git may use.
_URL = re.compile(r"^((https|ssh|file)://\S+|[\w.-]+@[\w.-]+:\S+|/\S*)$")


@dataclass(frozen=True)
class SourceRequest:
    """One source as the caller sent it (GraphQL, MCP and REST all build these)."""

    type: str
    repository_id: str | None = None
    local_path: str | None = None
    remote_url: str | None = None
    base_branch: str | None = None
    branch: str | None = None
    path: str | None = None
    name: str | None = None


@dataclass(frozen=True)
class _Repo:
    """A validated repository source: exactly one locator, normalized branch fields."""

    index: int
    repository_id: str | None
    local_path: str | None
    remote_url: str | None
    base_branch: str | None
    branch: str | None


@dataclass(frozen=True)
class _Folder:
    index: int
    path: str
    name: str


@dataclass(frozen=True)
class AdoptedSource:
    kind: str  # "repository" or "folder"
    id: str  # repository id, or the folder's path
    name: str
    added: bool  # False for an exact retry of a source the task already had
    path: str | None = None  # where it is materialized; None while materialization waits for launch
    base_branch: str | None = None
    branch: str | None = None


@dataclass
class SourcesResult:
    task: TaskRecord
    sources: list[AdoptedSource]
    task_workspace_path: str | None = None

    @property
    def changed(self) -> bool:
        return any(source.added for source in self.sources)


@dataclass(frozen=True)
class BranchAdded:
    task: TaskRecord
    source: AdoptedSource
    worktree_path: str | None
    task_workspace_path: str | None


@dataclass(frozen=True)
class BaseBranchChange:
    task: TaskRecord
    repository_id: str
    base_branch: str
    previous_base_branch: str | None


def _text(value: str | None) -> str | None:
    value = (value or "").strip()
    return value or None


def _branch(value: str | None, field_name: str) -> str | None:
    value = _text(value)
    if value is not None and (len(value) > 200 or not _BRANCH.match(value)):
        raise ValidationError(f"{field_name.split('.')[-1]} is not a valid branch name", field=field_name)
    return value


def _absolute(value: str | None, field_name: str) -> str:
    value = _text(value)
    if value is None or not os.path.isabs(value):
        raise ValidationError(f"{field_name.split('.')[-1]} must be an absolute path", field=field_name)
    return os.path.realpath(value)


def _trim(remote: str) -> str:
    """Without trailing slashes (`url/` and `url` are one remote), but never cut into `file:///`."""
    scheme, sep, rest = remote.partition("://")
    if sep:
        return f"{scheme}{sep}{rest.rstrip('/') or '/'}"
    return remote.rstrip("/") or "/"


def parse_sources(requests: Sequence[SourceRequest]) -> list[_Repo | _Folder]:
    """Shape checks only (no database, no filesystem): anything wrong here is the caller's input."""
    if not requests:
        raise ValidationError("sources must list at least one source", field="sources")
    if len(requests) > MAX_SOURCES:
        raise ValidationError(f"sources can list at most {MAX_SOURCES} sources", field="sources")
    return [_parse(request, index) for index, request in enumerate(requests)]


def _parse(request: SourceRequest, index: int) -> _Repo | _Folder:
    where = f"sources[{index}]"
    if request.type == "repository":
        if _text(request.path) or _text(request.name):
            raise ValidationError("path and name belong to folder sources", field=where)
        locators = [
            key for key in ("repository_id", "local_path", "remote_url") if _text(getattr(request, key)) is not None
        ]
        if len(locators) != 1:
            raise ValidationError(
                "a repository source needs exactly one of repository_id, local_path or remote_url", field=where
            )
        remote = _text(request.remote_url)
        if remote is not None and not _URL.match(remote):
            raise ValidationError(
                f"remote_url is not a repository URL ({', '.join(ALLOWED_PROTOCOLS)} or a local path)",
                field=f"{where}.remote_url",
            )
        return _Repo(
            index=index,
            repository_id=_text(request.repository_id),
            local_path=_absolute(request.local_path, f"{where}.local_path") if request.local_path else None,
            remote_url=_trim(remote) if remote else None,
            base_branch=_branch(request.base_branch, f"{where}.base_branch"),
            branch=_branch(request.branch, f"{where}.branch"),
        )
    if request.type == "folder":
        if any(_text(getattr(request, key)) for key in ("repository_id", "local_path", "remote_url", "base_branch")):
            raise ValidationError("folder sources take only path and name", field=where)
        if _text(request.branch):
            raise ValidationError("folder sources take only path and name", field=where)
        path = _absolute(request.path, f"{where}.path")
        name = _text(request.name) or os.path.basename(path) or "folder"
        if len(name) > MAX_FOLDER_NAME_LENGTH or "/" in name or name in (".", ".."):
            raise ValidationError("name must be a plain folder name", field=f"{where}.name")
        return _Folder(index=index, path=path, name=name)
    raise ValidationError("type must be 'repository' or 'folder'", field=f"{where}.type")


@dataclass
class _Undo:
    """What this batch materialized, removed again if a later source fails."""

    actions: list[Any] = field(default_factory=list)

    def run(self) -> None:
        for action in reversed(self.actions):
            action()


@asynccontextmanager
async def _undone_on_failure() -> AsyncIterator[_Undo]:
    undo = _Undo()
    try:
        yield undo
    except BaseException:
        await asyncio.to_thread(undo.run)
        raise


class WorkspaceSourceService:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    async def add(self, task_id: str | None, requests: Sequence[SourceRequest]) -> SourcesResult:
        """Adopt a mixed batch of repository and folder sources into an idle task, all or nothing."""
        wanted = parse_sources(requests)
        async with _undone_on_failure() as undo, self.ctx.unit_of_work() as uow:
            task = await self._target(uow, task_id)
            remotes = await self._confine(uow, wanted)
            kind = await self._executor(uow, task)
            await self._require_idle(uow, task)
            adopted = await self._adopt(uow, task, kind, wanted, undo, remotes)
            if any(source.added for source in adopted):
                await self._announce(uow, task)
            return SourcesResult(TaskRecord.of(task), adopted, self._files_root(task, kind))

    async def add_branch(self, task_id: str | None, request: SourceRequest) -> BranchAdded:
        """One repository on a sibling worktree while the agent keeps working (worktree executor only):
        the agent's directory does not change; the task directory becomes its Files root."""
        (wanted,) = parse_sources([request])
        if not isinstance(wanted, _Repo):
            raise ValidationError("add a repository, not a folder", field="sources[0].type")
        async with _undone_on_failure() as undo, self.ctx.unit_of_work() as uow:
            task = await self._target(uow, task_id)
            remotes = await self._confine(uow, [wanted])
            kind = await self._executor(uow, task)
            if kind != ExecutorKind.WORKTREE:
                raise UnprocessableError(
                    "adding a branch during a turn needs the worktree executor; use "
                    "add_workspace_sources_kandev on an idle task instead"
                )
            (adopted,) = await self._adopt(uow, task, kind, [wanted], undo, remotes)
            if adopted.added:
                await self._announce(uow, task)
            root = self._files_root(task, kind) if adopted.path else None
            return BranchAdded(TaskRecord.of(task), adopted, adopted.path, root)

    async def update_base_branch(
        self, task_id: str | None, repository_id: str | None, base_branch: str
    ) -> BaseBranchChange:
        """Change the base Kandev diffs the task's repository against (not a pull request's target)."""
        branch = _branch(base_branch, "base_branch")
        if branch is None:
            raise ValidationError("base_branch is required", field="base_branch")
        async with self.ctx.unit_of_work() as uow:
            task = await self._target(uow, task_id)
            links = list(await uow.db.scalars(select(TaskRepository).where(TaskRepository.task_id == task.id)))
            if repository_id is None:
                if len(links) != 1:
                    raise ValidationError(
                        "the task has several repositories (or none): name one with repository_id",
                        field="repository_id",
                    )
                link = links[0]
            else:
                named = next((row for row in links if row.repository_id == repository_id), None)
                if named is None:
                    raise NotFoundError("task repository", repository_id)
                link = named
            repository = await uow.db.get(Repository, link.repository_id)
            assert repository is not None
            if not await asyncio.to_thread(_has_commit, repository.path, branch):
                raise ValidationError("base_branch is not a branch of the repository", field="base_branch")
            previous = link.base_branch
            if previous != branch:
                link.base_branch = branch
                task.updated_at = utcnow()
                emit_task_event(uow, "UPDATED", task)
            return BaseBranchChange(TaskRecord.of(task), repository.id, branch, previous)

    # --- rules shared by the three -----------------------------------------------------------

    async def _confine(self, uow: UnitOfWork, wanted: list[_Repo | _Folder]) -> dict[int, CheckedRemote]:
        """Every local path of the batch (folders, local paths, file or plain-path remotes, ssh remotes naming this
        machine) lies under an allowed root and is no other user's repository or folder, nor is any place git reads
        a repository from; a non-admin's network remote does not point inward. Checked before anything is written;
        answers the checked remotes, whose clones connect where they were checked."""
        settings = self.ctx.settings
        outward = None if is_admin(self.ctx.principal) else outbound_policy(settings)
        remotes: dict[int, CheckedRemote] = {}
        for source in wanted:
            where = f"sources[{source.index}]"
            if isinstance(source, _Folder):
                field_name = f"{where}.path"
                locations = [confine_path(settings, source.path, field_name)]
            elif source.local_path is not None:
                field_name = f"{where}.local_path"
                locations = await asyncio.to_thread(confine_repository, settings, source.local_path, field_name)
            elif source.remote_url is not None:
                field_name = f"{where}.remote_url"
                checked = await asyncio.to_thread(confine_remote, settings, source.remote_url, field_name, outward)
                remotes[source.index], locations = checked, checked.locations
            else:
                continue
            for location in locations:
                await refuse_foreign(uow.db, self.ctx.principal, location, field_name)
        return remotes

    async def _target(self, uow: UnitOfWork, task_id: str | None) -> Task:
        """Operators name any task they can see; an agent its own task (the default) or its direct child
        in the same workspace. The task row is locked so batches on one task apply one at a time."""
        own = self.ctx.principal.task_id
        if task_id in (None, "", "self"):
            if own is None:
                raise ValidationError("taskId is required outside a task session", field="taskId")
            task_id = own
        task = await load_task(uow.db, self.ctx.principal, task_id)
        if own is not None and task.id != own:
            caller = await uow.db.get(Task, own)
            if task.parent_id != own or caller is None or caller.workspace_id != task.workspace_id:
                raise PermissionDeniedError("an agent can add sources only to its own task or its direct child")
        locked = await uow.db.get(Task, task.id, with_for_update=True, populate_existing=True)
        assert locked is not None
        return locked

    async def _executor(self, uow: UnitOfWork, task: Task) -> ExecutorKind:
        kind = await executor_kind(uow.db, task.executor_profile_id)
        if kind not in REPOSITORY_EXECUTORS:
            raise UnprocessableError(f"the task's executor ({kind.value}) cannot take workspace sources")
        return kind

    async def _require_idle(self, uow: UnitOfWork, task: Task) -> None:
        for session in await task_sessions(uow.db, task.id):
            if session.state in ACTIVE_SESSION_STATES:
                raise ConflictError(
                    "the task has an active turn; add sources when it is idle, or add one repository during "
                    "the turn with add_branch_to_task_kandev"
                )

    def _files_root(self, task: Task, kind: ExecutorKind) -> str | None:
        if kind != ExecutorKind.WORKTREE:
            return None
        root = task_directory(self.ctx.settings.work_path, task.id)
        return str(root) if root.is_dir() else None

    async def _announce(self, uow: UnitOfWork, task: Task) -> None:
        """task UPDATED, WORKSPACE_SOURCES_UPDATED on each live session, and a profile refresh (the
        providers may have changed: a live session hears list_changed)."""
        task.updated_at = utcnow()
        emit_task_event(uow, "UPDATED", task)
        for session in await task_sessions(uow.db, task.id):
            if is_terminal(session):
                continue
            emit_session_event(uow, "WORKSPACE_SOURCES_UPDATED", session)
            if session.mcp_profile:  # launched: its profile is live; an unlaunched one computes it at launch
                await refresh_profile(uow, session, task)

    async def _adopt(
        self,
        uow: UnitOfWork,
        task: Task,
        kind: ExecutorKind,
        wanted: list[_Repo | _Folder],
        undo: _Undo,
        remotes: dict[int, CheckedRemote],
    ) -> list[AdoptedSource]:
        db = uow.db
        links = {
            row.repository_id: row
            for row in await db.scalars(select(TaskRepository).where(TaskRepository.task_id == task.id))
        }
        folders = {row.path: row for row in await db.scalars(select(TaskFolder).where(TaskFolder.task_id == task.id))}
        names = {row.name for row in folders.values()}
        for repository_id in links:
            repository = await db.get(Repository, repository_id)
            if repository is not None:
                names.add(repository.name)
        task_dir = task_directory(self.ctx.settings.work_path, task.id)
        materialize = kind == ExecutorKind.WORKTREE and task_dir.is_dir()
        position = len(links)
        seen_repos: dict[str, _Repo] = {}
        seen_folders: dict[str, _Folder] = {}
        adopted: list[AdoptedSource] = []
        for source in wanted:
            if isinstance(source, _Folder):
                earlier = seen_folders.get(source.path)
                if earlier is not None:
                    if earlier.name != source.name:
                        raise ConflictError("the batch lists one folder twice with different names")
                    continue
                seen_folders[source.path] = source
                adopted.append(await self._adopt_folder(uow, task, source, folders, names, materialize, undo))
                continue
            repository = await self._resolve_repository(uow, task, source, undo, remotes.get(source.index))
            earlier_repo = seen_repos.get(repository.id)
            if earlier_repo is not None:
                if (earlier_repo.base_branch, earlier_repo.branch) != (source.base_branch, source.branch):
                    raise ConflictError("the batch lists one repository twice with different branches")
                continue
            seen_repos[repository.id] = source
            existing = links.get(repository.id)
            base = source.base_branch or repository.default_branch
            if existing is not None:
                if (source.base_branch and existing.base_branch != base) or (
                    source.branch and existing.branch != source.branch
                ):
                    raise ConflictError(f"repository {repository.name} is already on the task with other branches")
                location = _location(kind, task_dir, repository)
                adopted.append(
                    AdoptedSource(
                        "repository",
                        repository.id,
                        repository.name,
                        False,
                        location,
                        existing.base_branch,
                        existing.branch,
                    )
                )
                continue
            if repository.name in names:
                raise ConflictError(f"the task already has a source named {repository.name}")
            names.add(repository.name)
            if not await asyncio.to_thread(_has_commit, repository.path, base):
                raise UnprocessableError(f"base branch {base} does not exist in repository {repository.name}")
            link = TaskRepository(
                task_id=task.id, repository_id=repository.id, position=position, base_branch=base, branch=source.branch
            )
            position += 1
            db.add(link)
            path = _location(kind, task_dir, repository)
            if materialize:
                folder = task_dir / repository.name
                branch = source.branch or branch_name(task)
                try:
                    owner = await task_agent_identity(db, self.ctx.settings, task)
                    created = await asyncio.to_thread(add_worktree, repository, folder, branch, base, owner)
                except ConflictError as error:
                    raise UnprocessableError(error.message) from None
                undo.actions.append(
                    lambda r=repository, f=folder, b=(branch if created else None): remove_worktree(r, f, b)
                )
                link.branch = branch
                path = str(folder)
            adopted.append(AdoptedSource("repository", repository.id, repository.name, True, path, base, link.branch))
        await db.flush()
        return adopted

    async def _adopt_folder(
        self,
        uow: UnitOfWork,
        task: Task,
        source: _Folder,
        folders: dict[str, TaskFolder],
        names: set[str],
        materialize: bool,
        undo: _Undo,
    ) -> AdoptedSource:
        task_dir = task_directory(self.ctx.settings.work_path, task.id)
        existing = folders.get(source.path)
        if existing is not None:
            if existing.name != source.name:
                raise ConflictError(f"that folder is already on the task as {existing.name}")
            link = task_dir / existing.name
            return AdoptedSource("folder", existing.path, existing.name, False, str(link) if link.exists() else None)
        if source.name in names:
            raise ConflictError(f"the task already has a source named {source.name}")
        if not await asyncio.to_thread(os.path.isdir, source.path):
            raise UnprocessableError(f"folder {source.name} does not exist on this machine")
        names.add(source.name)
        row = TaskFolder(task_id=task.id, path=source.path, name=source.name, position=len(folders))
        folders[source.path] = row
        uow.db.add(row)
        path = None
        if materialize:
            link = link_folder(task_dir, row)
            undo.actions.append(lambda link=link: link.unlink(missing_ok=True))
            path = str(link)
        return AdoptedSource("folder", row.path, row.name, True, path)

    async def _resolve_repository(
        self, uow: UnitOfWork, task: Task, source: _Repo, undo: _Undo, checked: CheckedRemote | None
    ) -> Repository:
        """A saved repository of the task's workspace: by id, by local path or remote URL (registered,
        and for a URL cloned, when the workspace does not have it yet)."""
        db = uow.db
        if source.repository_id is not None:
            repository = await db.get(Repository, source.repository_id)
            if repository is None or repository.workspace_id != task.workspace_id:
                raise NotFoundError("repository", source.repository_id)
            return repository
        column, value = (
            (Repository.path, source.local_path) if source.local_path else (Repository.remote_url, source.remote_url)
        )
        found = await db.scalar(select(Repository).where(Repository.workspace_id == task.workspace_id, column == value))
        if found is not None:
            return found
        if source.local_path is not None:
            path = source.local_path
            remote = await asyncio.to_thread(remote_url_of, path)
        else:
            assert source.remote_url is not None
            remote = source.remote_url
            owner = await workspace_agent_identity(db, self.ctx.settings, task.workspace_id)
            target = await asyncio.to_thread(
                clone_folder, self.ctx.settings.work_path, task.workspace_id, new_id(), owner
            )
            # On a connected host the connection's token reaches git through the credential helper.
            host = host_of(remote)
            credential = await credential_for(db, self.ctx.settings, task.workspace_id, host) if host else None
            await asyncio.to_thread(_clone, remote, target, source.index, credential, checked)
            undo.actions.append(lambda: shutil.rmtree(target, ignore_errors=True))
            path = str(target)
        default = await asyncio.to_thread(current_branch, path)
        if default is None:  # RepositoryService.create's rule, answered as a source that can't be materialized
            raise UnprocessableError(f"source {source.index} is not a git repository with a checked-out branch")
        name = await free_repository_name(uow.db, task.workspace_id, _repository_name(source))
        repository = Repository(
            id=new_id(), workspace_id=task.workspace_id, name=name, path=path, default_branch=default, remote_url=remote
        )
        db.add(repository)
        await db.flush()
        return repository


def _location(kind: ExecutorKind, task_dir: Path, repository: Repository) -> str | None:
    """Where the task's copy of a repository is: in place for the local executor, a worktree under the
    task directory once materialized for the worktree executor."""
    if kind == ExecutorKind.LOCAL:
        return repository.path
    folder = task_dir / repository.name
    return str(folder) if folder.is_dir() else None


def _repository_name(source: _Repo) -> str:
    location = source.local_path or source.remote_url or "repository"
    tail = re.split(r"[/:]", location.rstrip("/"))[-1].removesuffix(".git")
    return re.sub(r"[^\w.-]+", "-", tail)[:100] or "repository"


def _has_commit(path: str, branch: str) -> bool:
    try:
        git("rev-parse", "--verify", "--quiet", f"{branch}^{{commit}}", cwd=path)
        return True
    except (subprocess.CalledProcessError, OSError):
        return False


def _clone(
    url: str, target: Path, index: int, credential: GitCredential | None = None, checked: CheckedRemote | None = None
) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    origins = [origin] if (origin := origin_of(url)) else []
    pin_args, pin_env = pinned(url, checked.pin, checked.key_alias) if checked and checked.pin else ([], {})
    try:
        cloned = (
            run_git(
                "clone",
                "--quiet",
                "--",
                url,
                str(target),
                timeout=600,
                credential_args=[*pin_args, *command_args(credential, origins)],
                credential_env={**pin_env, **(credential.env() if credential else {})},
            ).returncode
            == 0
        )
        if cloned and credential is not None:  # the agent's fetch and push find the helper in its config
            cloned = configure_repository(str(target), credential, [url])
    except (subprocess.TimeoutExpired, OSError):
        cloned = False
    if not cloned:
        # git's own message can carry credentials embedded in the URL: say only which source failed.
        shutil.rmtree(target, ignore_errors=True)
        raise UnprocessableError(f"remote_url of source {index} could not be cloned")
