"""Agent-generated task titles: the first eligible session of a new task owns the title handoff."""

from __future__ import annotations

import asyncio
import subprocess
from dataclasses import dataclass, field

from sqlalchemy import select, update

from kandev.domain.context import ServiceContext, UnitOfWork
from kandev.domain.errors import PermissionDeniedError
from kandev.domain.feeds import emit_task_event
from kandev.domain.records import TaskRecord
from kandev.domain.session_rows import lock_session
from kandev.domain.sessions.tool_profiles import owns_title, refresh_profile
from kandev.domain.validation import clean_title
from kandev.domain.workspace.git import git
from kandev.domain.workspace.workdirs import branch_name, executor_kind
from kandev.models import Repository, Session, Task, TaskRepository, Workspace
from kandev.models.base import utcnow
from kandev.models.enums import ExecutorKind, TaskOrigin

TITLE_INSTRUCTION = (
    "Before any other work, call set_task_title_kandev once with a short title for this task: a phrase of "
    "about six words in sentence case, not a sentence or a progress update."
)


def wants_generated_title(workspace: Workspace, origin: str) -> bool:
    settings = workspace.settings or {}
    return bool(settings.get("agent_generated_titles", True)) and origin in (
        TaskOrigin.USER,
        TaskOrigin.AGENT,
    )


async def end_title_handoff(uow: UnitOfWork, task: Task) -> None:
    """A person renamed the task first: the agent's title handoff is over, and a launched owning session
    loses the title tool now (its MCP clients hear list_changed), not at its next launch."""
    if not task.title_pending:
        return
    task.title_pending = False
    owner = await uow.db.get(Session, task.title_owner_session_id) if task.title_owner_session_id else None
    if owner is not None and owner.mcp_profile:
        await refresh_profile(uow, owner, task)


async def claim_title(uow: UnitOfWork, session: Session, task: Task) -> bool:
    """The first task session to launch claims the handoff atomically; True when `session` owns it."""
    if not task.title_pending or session.purpose != "task":
        return False
    if task.title_owner_session_id is None:
        await uow.db.execute(
            update(Task)
            .where(Task.id == task.id, Task.title_pending.is_(True), Task.title_owner_session_id.is_(None))
            .values(title_owner_session_id=session.id)
            .execution_options(synchronize_session=False)
        )
        await uow.db.refresh(task)
    return owns_title(task, session)


@dataclass(frozen=True)
class TitleResult:
    status: str  # accepted, title_not_pending, title_not_owner
    task: TaskRecord
    renamed: list[str] = field(default_factory=list)
    preserved: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


class TitleService:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    async def set_title(self, title: str) -> TitleResult:
        caller = self.ctx.principal
        if caller.session_id is None or caller.task_id is None:
            raise PermissionDeniedError("only an agent in a task session can set its task's title")
        new_title = clean_title(title)
        async with self.ctx.unit_of_work() as uow:
            session = await lock_session(uow.db, caller.session_id)
            task = await uow.db.get(Task, caller.task_id)
            assert session is not None and task is not None
            if not task.title_pending:
                return TitleResult("title_not_pending", TaskRecord.of(task))
            if task.title_owner_session_id != session.id:
                return TitleResult("title_not_owner", TaskRecord.of(task))
            task.title = new_title
            task.title_pending = False
            task.updated_at = utcnow()
            renamed, preserved, failed = await self._rename_branches(uow, task)
            await refresh_profile(uow, session, task)  # the title tool leaves this session's list
            emit_task_event(uow, "UPDATED", task)
            return TitleResult("accepted", TaskRecord.of(task), renamed, preserved, failed)

    async def _rename_branches(self, uow: UnitOfWork, task: Task) -> tuple[list[str], list[str], list[str]]:
        """Kandev-managed worktree branches follow the title; checkouts the user chose are preserved."""
        renamed: list[str] = []
        preserved: list[str] = []
        failed: list[str] = []
        managed_executor = await executor_kind(uow.db, task.executor_profile_id) == ExecutorKind.WORKTREE
        links = await uow.db.scalars(select(TaskRepository).where(TaskRepository.task_id == task.id))
        for link in links:
            repository = await uow.db.get(Repository, link.repository_id)
            assert repository is not None
            if not link.branch or not link.branch.startswith("kandev/") or not managed_executor:
                preserved.append(repository.name)
                continue
            target = branch_name(task)
            if target == link.branch:
                preserved.append(repository.name)
                continue
            try:
                await asyncio.to_thread(git, "branch", "-m", link.branch, target, cwd=repository.path)
            except (subprocess.CalledProcessError, OSError):
                failed.append(repository.name)
                continue
            link.branch = target
            renamed.append(repository.name)
        return renamed, preserved, failed
