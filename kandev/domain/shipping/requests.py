"""A task's pull and merge requests kept fresh, and what follows from what the code host says: polled (the
scheduler's tick) and refreshed at once by a check event (a webhook delivery), each refresh stores the request as
the host shows it, brings the host's review comments in as review threads, and, in the same transaction, decides
a fix round on a newly failing commit (kandev.domain.shipping.fix_rounds) and notices a merge. After commit, an
auto-merge is tried when the task asks for one and the request is green, approved and mergeable."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select

from kandev.domain.code_requests import (
    HostedRepository,
    HostReviewComment,
    Mergeable,
    RequestCheck,
    RequestState,
    RequestStatus,
    ReviewDecision,
)
from kandev.domain.context import ServiceContext, UnitOfWork
from kandev.domain.errors import DomainError
from kandev.domain.events import CheckRunCompleted
from kandev.domain.ports import CODE_HOSTS, RequestApi
from kandev.domain.shipping.fix_rounds import decide_round
from kandev.domain.workflow.service import final_step_of, ordered_steps
from kandev.domain.workflow.transitions import emit_task_event, move_task
from kandev.domain.workspace.reclaim import reclaim_task_directories, repository_paths
from kandev.domain.workspace.service import MERGED_TO_FINAL_STEP
from kandev.models import ReviewComment, ReviewThread, Task, TaskShipRequest, Workspace
from kandev.models.base import new_id, utcnow
from kandev.models.enums import TaskState, TransitionTrigger

log = logging.getLogger("kandev.shipping.requests")

PULL_REQUEST = "PULL_REQUEST"
MOVE_SETTING = MERGED_TO_FINAL_STEP
MAX_IMPORTED = 200


@dataclass(frozen=True)
class RequestRecord:
    """A task's pull or merge request as Kandev last saw it."""

    task_id: str
    repository_id: str
    provider: str
    target: str
    number: int
    url: str
    state: str
    draft: bool
    title: str
    head_branch: str
    head_sha: str
    base_branch: str
    review_decision: str
    mergeable: str
    mergeable_reason: str
    checks: list[RequestCheck]
    review_comments: int
    merged_at: datetime | None
    refreshed_at: datetime | None

    @classmethod
    def of(cls, row: TaskShipRequest) -> RequestRecord:
        return cls(
            row.task_id,
            row.repository_id,
            row.provider,
            row.target,
            row.number,
            row.url,
            row.state,
            row.draft,
            row.title,
            row.head_branch,
            row.head_sha,
            row.base_branch,
            row.review_decision,
            row.mergeable,
            row.mergeable_reason,
            [RequestCheck.from_json(c) for c in row.checks or []],
            row.review_comments,
            row.merged_at,
            row.refreshed_at,
        )


def hosted_of(row: TaskShipRequest) -> HostedRepository:
    return HostedRepository(row.provider, row.host, row.target, row.base_path)


async def request_api(ctx: ServiceContext, workspace_id: str, hosted: HostedRepository) -> RequestApi:
    code_host = CODE_HOSTS.get(hosted.provider)
    if code_host is None:
        raise DomainError(f"no code host named {hosted.provider} is registered")
    async with ctx.read() as db:
        return await code_host.requests(db, ctx.settings, workspace_id, hosted)


def store_status(row: TaskShipRequest, status: RequestStatus) -> None:
    row.state, row.draft, row.title, row.url = status.state.value, status.draft, status.title, status.url or row.url
    row.head_branch, row.head_sha, row.base_branch = status.head_branch, status.head_sha, status.base_branch
    row.review_decision, row.mergeable, row.mergeable_reason = (
        status.review_decision.value,
        status.mergeable.value,
        status.mergeable_reason[:200],
    )
    row.checks = [c.to_json() for c in status.checks]
    row.review_comments, row.merged_at = status.review_comments, status.merged_at
    row.refreshed_at = row.updated_at = utcnow()


async def refresh(ctx: ServiceContext, task_id: str, repository_id: str) -> RequestRecord | None:
    """Ask the code host about the task's request and act on the answer (see the module); None when there is
    none (or the task is gone)."""
    async with ctx.read() as db:
        row = await db.get(TaskShipRequest, (task_id, repository_id))
        task = await db.get(Task, task_id)
        if row is None or task is None or task.deleted_at is not None:
            return None
        hosted, number, known_comments = hosted_of(row), row.number, row.review_comments
    async with await request_api(ctx, task.workspace_id, hosted) as api:
        status = await api.status(number)
        comments = await api.review_comments(number) if status.review_comments or known_comments else []
    rounds: list[str] = []
    async with ctx.unit_of_work() as uow:
        row = await uow.db.get(TaskShipRequest, (task_id, repository_id), with_for_update=True)
        task = await uow.db.get(Task, task_id)
        if row is None or task is None:
            return None
        was = row.state
        store_status(row, status)
        await import_comments(uow, task, row, comments)
        failing = [c for c in status.checks if c.failed]
        if status.state == RequestState.OPEN and (found := await decide_round(uow, task, row, failing)):
            rounds.append(found)
        if was != RequestState.MERGED and status.state == RequestState.MERGED:
            await after_merge(ctx, uow, task)
        emit_task_event(uow, PULL_REQUEST, task)
        record = RequestRecord.of(row)
        for round_id in rounds:
            uow.then(lambda round_id=round_id: ctx.jobs.enqueue_fix_round(round_id))  # type: ignore[misc]
        if wants_auto_merge(task, status):
            uow.then(lambda: ctx.jobs.enqueue_auto_merge(task_id, repository_id))
    return record


def wants_auto_merge(task: Task, status: RequestStatus) -> bool:
    return (
        task.auto_merge
        and status.state == RequestState.OPEN
        and not status.draft
        and status.checks_green
        and status.review_decision == ReviewDecision.APPROVED
        and status.mergeable == Mergeable.MERGEABLE
    )


async def import_comments(uow: UnitOfWork, task: Task, row: TaskShipRequest, comments: list[HostReviewComment]) -> int:
    """The host's review comments as review threads of the task (origin GITHUB / GITLAB), each once."""
    if not comments:
        return 0
    origin = row.provider.upper()
    keys = {f"{row.provider}:{c.id}": c for c in comments[:MAX_IMPORTED]}
    known = set(
        await uow.db.scalars(
            select(ReviewThread.external_id).where(ReviewThread.task_id == task.id, ReviewThread.external_id.in_(keys))
        )
    )
    added = 0
    for key, comment in keys.items():
        if key in known:
            continue
        now = comment.created_at or utcnow()
        thread = ReviewThread(
            id=new_id(),
            task_id=task.id,
            repository_id=row.repository_id if comment.path else None,
            path=comment.path,
            line=comment.line if comment.path else None,
            end_line=comment.line if comment.path else None,
            side=comment.side if comment.side in ("OLD", "NEW") else "NEW",
            state="OPEN",
            origin=origin,
            external_id=key,
            anchor_text="",
            anchor_context={"url": comment.url} if comment.url else {},
            created_by=f"{row.provider}:{comment.author}",
            created_at=now,
            updated_at=now,
        )
        uow.db.add(thread)
        uow.db.add(
            ReviewComment(
                id=new_id(),
                thread_id=thread.id,
                author_kind="PERSON",
                author_login=f"{comment.author} ({row.provider})",
                body=comment.body[:10_000] or "(empty)",
                created_at=now,
            )
        )
        added += 1
    return added


async def after_merge(ctx: ServiceContext, uow: UnitOfWork, task: Task) -> None:
    """A request of the task was merged: once every request of it is, the task moves to its workflow's final step
    (unless its workspace says not to) and, after commit, its worktrees are reclaimed (branches kept)."""
    open_left = await uow.db.scalar(
        select(func.count())
        .select_from(TaskShipRequest)
        .where(TaskShipRequest.task_id == task.id, TaskShipRequest.state != RequestState.MERGED)
    )
    if open_left:
        return
    workspace = await uow.db.get(Workspace, task.workspace_id)
    if workspace is None or not (workspace.settings or {}).get(MOVE_SETTING, True):
        return
    if task.state != TaskState.COMPLETED:
        final = final_step_of(await ordered_steps(uow.db, task.workflow_id))
        await move_task(ctx, uow, task, final, trigger=TransitionTrigger.MERGED, step_actions=False)
    task_id = task.id
    uow.then(lambda: reclaim_worktrees(ctx, task_id))


async def reclaim_worktrees(ctx: ServiceContext, task_id: str) -> None:
    """The task's working directories removed (its branches stay); a failure is logged, never raised."""
    try:
        async with ctx.read() as db:
            paths = await repository_paths(db, task_id)
        removed = await asyncio.to_thread(reclaim_task_directories, ctx.settings.work_path, task_id, paths)
        if removed:
            async with ctx.unit_of_work() as uow:
                task = await uow.db.get(Task, task_id)
                if task is not None:
                    task.worktree_reclaimed_at = utcnow()
    except Exception:
        log.warning("the worktrees of merged task %s could not be reclaimed", task_id, exc_info=True)


async def open_requests(ctx: ServiceContext, workspace_id: str | None = None) -> list[tuple[str, str]]:
    """(task, repository) of every open request (of one workspace), for the poll."""
    async with ctx.read() as db:
        query = (
            select(TaskShipRequest.task_id, TaskShipRequest.repository_id)
            .join(Task, Task.id == TaskShipRequest.task_id)
            .where(TaskShipRequest.state == RequestState.OPEN, Task.deleted_at.is_(None))
        )
        if workspace_id is not None:
            query = query.where(Task.workspace_id == workspace_id)
        return [(t, r) for t, r in await db.execute(query)]


async def check_run_completed(ctx: ServiceContext, uow: UnitOfWork, event: CheckRunCompleted) -> None:
    """A check of a commit finished: the requests whose head it is are refreshed at once (a job each), so a failing
    check reaches its fix round without waiting for the poll."""
    rows = await uow.db.execute(
        select(TaskShipRequest.task_id, TaskShipRequest.repository_id).where(
            TaskShipRequest.provider == event.provider,
            func.lower(TaskShipRequest.target) == event.repository.lower(),
            TaskShipRequest.head_sha == event.head_sha,
            TaskShipRequest.state == RequestState.OPEN,
        )
    )
    for task_id, repository_id in rows:
        uow.then(lambda t=task_id, r=repository_id: ctx.jobs.enqueue_request_refresh(t, r))  # type: ignore[misc]


async def refresh_all(ctx: ServiceContext, pairs: list[tuple[str, str]]) -> int:
    """Refresh each; a host's refusal of one is logged and the rest go on. How many were refreshed."""
    done = 0
    for task_id, repository_id in pairs:
        try:
            if await refresh(ctx, task_id, repository_id) is not None:
                done += 1
        except DomainError as error:
            log.warning("the request of task %s could not be refreshed: %s", task_id, error.message)
    return done
