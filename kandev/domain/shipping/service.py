"""Shipping a task's changes from its page (and by its agent, over MCP): commit them as the person, push the task's
branch, open a pull or merge request on the repository's code host, update the branch from its base, merge (on the
host, or locally for a repository without one), and the task's settings for fixing failing checks and merging on
green. Every refusal is a typed error that leaves the task and its branch as they were; a code host never sees a
request twice for one click (kandev.domain.shipping.operations claims it first, and opening or merging asks the
host what a lost attempt did before trying)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.changes.diffs import worktree_path
from kandev.domain.changes.service import checked_paths
from kandev.domain.code_requests import (
    CodeHostRefused,
    HostedRepository,
    Mergeable,
    MergeMethod,
    NewRequest,
    RequestState,
    RequestStatus,
)
from kandev.domain.context import ServiceContext
from kandev.domain.errors import ConflictError, DomainError, NotFoundError, UnavailableError, ValidationError
from kandev.domain.feeds import emit_task_event
from kandev.domain.ports import CODE_HOSTS, Contribution
from kandev.domain.reviews.service import running_turn
from kandev.domain.shipping import local
from kandev.domain.shipping.asking import agent_may
from kandev.domain.shipping.fix_rounds import MAX_ROUNDS, RoundRecord, rounds_of, stopped_reason
from kandev.domain.shipping.git_ship import MAX_MESSAGE, GitIdentity, PushOutcome, UpdateOutcome
from kandev.domain.shipping.operations import claimed
from kandev.domain.shipping.requests import (
    PULL_REQUEST,
    RequestRecord,
    after_merge,
    hosted_of,
    refresh,
    request_api,
    store_status,
)
from kandev.domain.shipping.targets import (
    ShipTarget,
    author_of,
    clean_identity,
    load_target,
    refuse_agent,
    remote_of,
    task_for,
    trailer,
)
from kandev.models import Message, Session, Task, TaskShipRequest, User
from kandev.models.base import utcnow
from kandev.models.enums import MessageKind

SHIP_WAIT_SECONDS = 320.0  # longer than the worker allows itself (kandev.jobs.reads.SHIP_SECONDS)
SUGGEST_WAIT_SECONDS = 100.0
MAX_TITLE, MAX_BODY = 256, 65_536
_STRATEGIES = ("MERGE", "REBASE")


@dataclass(frozen=True)
class Committed:
    repository_id: str
    sha: str
    message: str


@dataclass(frozen=True)
class Pushed:
    repository_id: str
    branch: str
    sha: str
    changed: bool


@dataclass(frozen=True)
class Updated:
    repository_id: str
    status: str
    head: str | None
    conflicts: list[str]


@dataclass(frozen=True)
class FixSettings:
    enabled: bool
    max_rounds: int
    stopped: str | None


def clean_message(message: str | None) -> str:
    text = (message or "").strip()
    if len(text) > MAX_MESSAGE or "\x00" in text:
        raise ValidationError(f"message must be at most {MAX_MESSAGE} characters", field="message")
    return text


class ShipService:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    # --- reading ----------------------------------------------------------------------------------------------

    async def _target(self, task_id: str, repository_id: str | None) -> tuple[Task, ShipTarget]:
        async with self.ctx.read() as db:
            task = await task_for(db, self.ctx.principal, task_id)
            return task, await load_target(self.ctx, db, task, repository_id)

    async def requests(self, task_id: str) -> list[RequestRecord]:
        """The task's pull and merge requests, in its repositories' order."""
        async with self.ctx.read() as db:
            task = await task_for(db, self.ctx.principal, task_id)
            rows = await db.scalars(select(TaskShipRequest).where(TaskShipRequest.task_id == task.id))
            return [RequestRecord.of(r) for r in rows]

    async def rounds(self, task_id: str) -> list[RoundRecord]:
        async with self.ctx.read() as db:
            task = await task_for(db, self.ctx.principal, task_id)
            return await rounds_of(db, task.id)

    async def fix_settings(self, task_id: str) -> FixSettings:
        async with self.ctx.read() as db:
            task = await task_for(db, self.ctx.principal, task_id)
            return FixSettings(task.fix_checks_enabled, task.fix_checks_max_rounds, await stopped_reason(db, task))

    # --- the person's commit identity ---------------------------------------------------------------------------

    async def identity(self) -> GitIdentity | None:
        async with self.ctx.read() as db:
            user = await db.get(User, self.ctx.principal.user_id)
            return GitIdentity(user.git_name, user.git_email) if user and user.git_name and user.git_email else None

    async def set_identity(self, name: str | None, email: str | None) -> GitIdentity:
        """Who the caller's commits from Kandev are by (asked for once, at their first commit)."""
        refuse_agent(self.ctx.principal, "change a person's commit identity")
        who = clean_identity(name, email)
        async with self.ctx.unit_of_work() as uow:
            user = await uow.db.get(User, self.ctx.principal.user_id)
            if user is None:
                raise NotFoundError("user", self.ctx.principal.user_id)
            user.git_name, user.git_email = who.name, who.email
        return who

    # --- commit -------------------------------------------------------------------------------------------------

    async def commit(
        self, task_id: str, repository_id: str | None, message: str | None, paths: list[str] | None, amend: bool
    ) -> Committed:
        """Commit the task's changes (all, or `paths`) on its branch, authored by the person with the agent named
        in a trailer; an empty message takes the agent's suggestion."""
        text = clean_message(message)
        wanted = checked_paths(paths)
        if wanted is not None and not wanted:
            raise ValidationError("paths must name at least one file (or be left out for all)", field="paths")
        task, target = await self._target(task_id, repository_id)
        async with self.ctx.read() as db:
            who = await author_of(db, self.ctx.principal, task)
            await self._refuse_running(db, task.id)
        await agent_may(
            self.ctx,
            "commit_changes_kandev",
            "Commit the task's changes",
            {"repository_id": target.repository_id, "message": text, "paths": wanted, "amend": amend},
        )
        if not text:
            text = await self.suggest_message(task_id, target.repository_id)
        full = trailer(text, target.agent_name)
        if local.reaches(target, needs_worktree=True):
            sha = await local.commit_here(self.ctx, target, full, wanted, amend, who)
        else:
            answer = await self._ask(target, "commit", message=full, paths=wanted, amend=amend, who=asdict(who))
            sha = answer["sha"]
        return Committed(target.repository_id, sha, full)

    async def _refuse_running(self, db: AsyncSession, task_id: str) -> None:
        """A person waits for the agent's turn to end; the agent itself ships from inside its own turn."""
        session_id = self.ctx.principal.session_id
        if session_id is None:
            if await running_turn(db, task_id):
                raise ConflictError("the agent is working: ship once its turn has ended", reason="turn_running")
            return
        others = await db.scalar(
            select(Session.id).where(Session.task_id == task_id, Session.id != session_id, Session.state == "RUNNING")
        )
        if others is not None:
            raise ConflictError("another session of the task is working: wait for it", reason="turn_running")

    async def suggest_message(self, task_id: str, repository_id: str | None) -> str:
        """A commit message for the uncommitted changes, from a short utility turn of the task's agent (its
        conversation is left alone), on the worker holding the worktree."""
        _, target = await self._target(task_id, repository_id)
        worker = target.located.worker
        if worker is None:
            raise ConflictError(
                "the task's agent has not worked on it yet: there is nothing to describe", reason="no_agent"
            )
        request = {"op": "suggest_message", "task_id": target.task_id, "repository_id": target.repository_id}
        answer = await self.ctx.jobs.ask_worker(worker, request, SUGGEST_WAIT_SECONDS)
        if answer is None:
            raise UnavailableError(f"worker {worker} did not suggest a message in time", worker=worker)
        if "error" in answer:
            raise ConflictError(str(answer["error"]), reason=answer.get("reason") or "no_suggestion")
        return str(answer["result"]["message"])

    async def _ask(self, target: ShipTarget, action: str, **arguments: Any) -> dict[str, Any]:
        """The worker holding the worktree does it (this process does not reach it)."""
        worker = target.located.worker
        if worker is None:
            raise ConflictError(target.located.note or "the task's worktree is not created yet", reason="no_worktree")
        request = {"op": "ship", "action": action, "task_id": target.task_id, "repository_id": target.repository_id}
        answer = await self.ctx.jobs.ask_worker(worker, {**request, **arguments}, SHIP_WAIT_SECONDS)
        if answer is None:
            raise UnavailableError(f"worker {worker}, which holds the task's worktree, did not answer", worker=worker)
        if "error" in answer:
            raise ConflictError(str(answer["error"]), reason=answer.get("reason"), worker=worker)
        result: dict[str, Any] = answer["result"]
        return result

    # --- push ---------------------------------------------------------------------------------------------------

    async def push(self, task_id: str, repository_id: str | None, force_with_lease: bool) -> Pushed:
        """Push the task's branch to the repository's remote (a pull request's source branch for a task made from
        one); never to the default, the base or a protected branch."""
        task, target = await self._target(task_id, repository_id)
        if not target.push_branch or not target.push_url:
            raise ConflictError("the repository has no remote to push the task's branch to", reason="no_remote")
        await self._refuse_protected(target)
        await agent_may(
            self.ctx,
            "push_branch_kandev",
            "Push the task's branch",
            {"repository_id": target.repository_id, "force_with_lease": force_with_lease},
        )
        async with claimed(self.ctx, task.id, target.repository_id, "push") as claim:
            last = claim.previous.get("sha") if claim.previous.get("branch") == target.push_branch else None
            if local.reaches(target, needs_worktree=False):
                outcome = await local.push_here(self.ctx, target, force_with_lease, last)
            else:
                found = await self._ask(target, "push", force_with_lease=force_with_lease, last_pushed=last)
                outcome = PushOutcome(**found)
            claim.result = {"sha": outcome.sha, "branch": outcome.branch}
        await self._follow_push(task.id, target.repository_id, outcome.sha)
        return Pushed(target.repository_id, outcome.branch, outcome.sha, outcome.changed)

    async def _follow_push(self, task_id: str, repository_id: str, sha: str) -> None:
        """The task's open request now has this head (the host follows the branch): its checks start over, and
        a check event of the new commit finds it; the host is asked at once too."""
        async with self.ctx.unit_of_work() as uow:
            row = await uow.db.get(TaskShipRequest, (task_id, repository_id), with_for_update=True)
            if row is None or row.state != RequestState.OPEN or row.head_sha == sha:
                return
            row.head_sha, row.checks, row.updated_at = sha, [], utcnow()
            task = await uow.db.get(Task, task_id)
            assert task is not None
            emit_task_event(uow, PULL_REQUEST, task)
            uow.then(lambda: self.ctx.jobs.enqueue_request_refresh(task_id, repository_id))

    async def _refuse_protected(self, target: ShipTarget) -> None:
        branch = target.push_branch or ""
        if target.contribution is None and branch in (target.default_branch, target.base_branch):
            raise ConflictError(
                f"Kandev does not push to {branch}, the repository's default or the task's base branch",
                reason="protected_branch",
            )
        hosted = await self._hosted(target, target.push_url)
        if hosted is not None:
            async with await request_api(self.ctx, target.workspace_id, hosted) as api:
                if await api.protected(branch):
                    raise ConflictError(f"{branch} is a protected branch on the code host", reason="protected_branch")

    async def _hosted(self, target: ShipTarget, url: str | None) -> HostedRepository | None:
        async with self.ctx.read() as db:
            return await self._hosted_in(db, target.workspace_id, url)

    async def _hosted_in(self, db: AsyncSession, workspace_id: str, url: str | None) -> HostedRepository | None:
        for code_host in CODE_HOSTS:
            found = await code_host.hosted(db, self.ctx.settings, workspace_id, url)
            if found is not None:
                return found
        return None

    async def code_host(self, task_id: str, repository_id: str) -> str | None:
        """The connected code host ('github', 'gitlab') the task's repository is on, where its pull request opens;
        None for one on no code host (its branch is merged locally), or not the task's."""
        async with self.ctx.read() as db:
            task = await task_for(db, self.ctx.principal, task_id)
            found = await self._hosted_in(db, task.workspace_id, await remote_of(db, task, repository_id))
        return found.provider if found is not None else None

    # --- pull / merge requests ----------------------------------------------------------------------------------

    async def open_request(
        self,
        task_id: str,
        repository_id: str | None,
        title: str | None,
        body: str | None,
        draft: bool,
        base: str | None,
    ) -> RequestRecord:
        """Open the repository's pull (merge) request from the task's branch, linked to the task; one per
        repository. The title defaults to the task's, the body to the agent's last summary."""
        task, target = await self._target(task_id, repository_id)
        hosted = await self._hosted(target, target.remote_url)
        if hosted is None:
            raise ConflictError(
                "the repository is on no connected code host: merge the branch locally (mergeTaskBranch)",
                reason="no_code_host",
            )
        async with self.ctx.read() as db:
            existing = await db.get(TaskShipRequest, (task.id, target.repository_id))
            if existing is not None and existing.state == RequestState.OPEN:
                raise ConflictError(
                    f"the task already has an open request for this repository: #{existing.number}",
                    reason="already_open",
                    number=existing.number,
                )
            default_body = await _last_summary(db, task.id)
        head = target.push_branch
        if not head:
            raise ConflictError("the task's branch is not made yet: commit and push first", reason="nothing_to_push")
        new = NewRequest(
            head_branch=head,
            base_branch=worktree_path(base, "base") if base else target.base_branch,
            title=_clean(title, "title", MAX_TITLE) or target.title,
            body=_clean(body, "body", MAX_BODY) if body is not None else default_body,
            draft=draft,
        )
        await agent_may(
            self.ctx,
            "open_pull_request_kandev",
            "Open a pull request",
            {"repository_id": target.repository_id, "title": new.title, "draft": draft, "base": new.base_branch},
        )
        async with claimed(self.ctx, task.id, target.repository_id, "open"):
            async with await request_api(self.ctx, task.workspace_id, hosted) as api:
                if target.contribution is not None:
                    status = await api.status(target.contribution)
                else:
                    # Checked first, every time: an attempt that timed out may have opened it after all.
                    found = await api.open_from(head)
                    status = found[0] if found else await api.open(new)
            return await self._record(task, target, hosted, status)

    async def _record(
        self, task: Task, target: ShipTarget, hosted: HostedRepository, status: RequestStatus
    ) -> RequestRecord:
        async with self.ctx.unit_of_work() as uow:
            row = await uow.db.get(TaskShipRequest, (task.id, target.repository_id))
            if row is None:
                row = TaskShipRequest(task_id=task.id, repository_id=target.repository_id, created_at=utcnow())
                uow.db.add(row)
            row.provider, row.host, row.target, row.base_path = (
                hosted.provider,
                hosted.host,
                hosted.target,
                hosted.base_path,
            )
            row.number, row.created_by = status.number, self.ctx.principal.actor
            store_status(row, status)
            code_host = CODE_HOSTS.get(hosted.provider)
            if code_host is not None and target.contribution is None:
                await _link(uow.db, code_host, task.id, hosted, status)
            fresh = await uow.db.get(Task, task.id)
            assert fresh is not None
            emit_task_event(uow, PULL_REQUEST, fresh)
            return RequestRecord.of(row)

    async def refresh(self, task_id: str, repository_id: str) -> RequestRecord | None:
        async with self.ctx.read() as db:
            await task_for(db, self.ctx.principal, task_id)
        return await refresh(self.ctx, task_id, repository_id)

    async def merge_request(self, task_id: str, repository_id: str | None, method: MergeMethod) -> RequestRecord:
        """Merge the task's request on its code host with `method`, if the host would (its reason otherwise)."""
        refuse_agent(self.ctx.principal, "merge")
        task, target = await self._target(task_id, repository_id)
        async with self.ctx.read() as db:
            row = await db.get(TaskShipRequest, (task.id, target.repository_id))
            if row is None:
                raise NotFoundError("pull request")
            hosted, number, shown = hosted_of(row), row.number, row.head_sha
        async with claimed(self.ctx, task.id, target.repository_id, "merge"):
            async with await request_api(self.ctx, task.workspace_id, hosted) as api:
                status = await api.status(number)  # asked first: it may be merged or closed outside Kandev
                refusal = _merge_refusal(status, shown)
                if refusal is not None:
                    await self._store(task.id, target.repository_id, status)
                    raise refusal
                merged = await api.merge(number, method, shown)
            return await self._store(task.id, target.repository_id, merged)

    async def _store(self, task_id: str, repository_id: str, status: RequestStatus) -> RequestRecord:
        async with self.ctx.unit_of_work() as uow:
            row = await uow.db.get(TaskShipRequest, (task_id, repository_id), with_for_update=True)
            task = await uow.db.get(Task, task_id)
            assert row is not None and task is not None
            was = row.state
            store_status(row, status)
            if was != RequestState.MERGED and status.state == RequestState.MERGED:
                await after_merge(self.ctx, uow, task)
            emit_task_event(uow, PULL_REQUEST, task)
            return RequestRecord.of(row)

    async def merge_branch(self, task_id: str, repository_id: str | None) -> str:
        """For a repository without a code host: merge the task's branch into its base locally (on the local
        remote when there is one); the merge commit."""
        refuse_agent(self.ctx.principal, "merge")
        task, target = await self._target(task_id, repository_id)
        if await self._hosted(target, target.remote_url) is not None:
            raise ConflictError(
                "the repository is on a code host: merge its pull request instead", reason="has_code_host"
            )
        async with self.ctx.read() as db:
            who = await author_of(db, self.ctx.principal, task)
        async with claimed(self.ctx, task.id, target.repository_id, "merge"):
            if local.reaches(target, needs_worktree=False):
                sha = await local.merge_local_here(self.ctx, target, who)
            else:
                sha = (await self._ask(target, "merge_local", who=asdict(who)))["sha"]
        async with self.ctx.unit_of_work() as uow:
            fresh = await uow.db.get(Task, task.id)
            assert fresh is not None
            await after_merge(self.ctx, uow, fresh)
        return sha

    # --- update from the base ---------------------------------------------------------------------------------

    async def update_branch(self, task_id: str, repository_id: str | None, strategy: str) -> Updated:
        """Merge or rebase the base into the task's branch; conflicts stay in the worktree as UNMERGED files."""
        if strategy not in _STRATEGIES:
            raise ValidationError("strategy is MERGE or REBASE", field="strategy")
        refuse_agent(self.ctx.principal, "update the branch this way; it merges the base itself")
        task, target = await self._target(task_id, repository_id)
        async with self.ctx.read() as db:
            who = await author_of(db, self.ctx.principal, task)
            await self._refuse_running(db, task.id)
        async with claimed(self.ctx, task.id, target.repository_id, "update"):
            if local.reaches(target, needs_worktree=True):
                outcome = await local.update_here(self.ctx, target, strategy, who)
            else:
                outcome = UpdateOutcome(**await self._ask(target, "update", strategy=strategy, who=asdict(who)))
        return Updated(target.repository_id, outcome.status, outcome.head, outcome.conflicts)

    # --- settings -------------------------------------------------------------------------------------------------

    async def configure(
        self, task_id: str, *, fix_enabled: bool | None, max_rounds: int | None, auto_merge: bool | None
    ) -> Task:
        """The task's fix-failing-checks (rounds counted afresh when turned on) and auto-merge settings."""
        if max_rounds is not None and not 1 <= max_rounds <= MAX_ROUNDS:
            raise ValidationError(f"maxRounds is 1 to {MAX_ROUNDS}", field="fixFailingChecks.maxRounds")
        refuse_agent(self.ctx.principal, "change how its checks are fixed")
        async with self.ctx.unit_of_work() as uow:
            task = await task_for(uow.db, self.ctx.principal, task_id)
            if fix_enabled is not None and fix_enabled != task.fix_checks_enabled:
                task.fix_checks_enabled = fix_enabled
                if fix_enabled:
                    task.fix_checks_since = utcnow()
            if max_rounds is not None:
                task.fix_checks_max_rounds = max_rounds
            if auto_merge is not None:
                task.auto_merge = auto_merge
            task.updated_at = utcnow()
            emit_task_event(uow, "UPDATED", task)
            return task


def _merge_refusal(status: RequestStatus, shown: str) -> DomainError | None:
    if status.state == RequestState.MERGED:
        return CodeHostRefused("it was merged on the code host already (outside Kandev)", "merged")
    if status.state == RequestState.CLOSED:
        return CodeHostRefused("it was closed on the code host (outside Kandev)", "closed")
    if status.head_sha and shown and status.head_sha != shown:
        return CodeHostRefused("new commits arrived since it was shown: look at it again first", "head_moved")
    if status.mergeable in (Mergeable.CONFLICTING, Mergeable.BLOCKED):
        return CodeHostRefused(f"the code host will not merge it: {status.mergeable_reason}", "not_mergeable")
    return None


async def _link(
    db: AsyncSession, code_host: Any, task_id: str, hosted: HostedRepository, status: RequestStatus
) -> None:
    """The request linked the provider's own way too (what its agent tools and link sync read)."""
    contribution = Contribution(
        provider=hosted.provider,
        host=hosted.host,
        target=hosted.target,
        number=status.number,
        url=status.url,
        target_clone_url="",
        source_clone_url="",
        source_branch=status.head_branch,
        head_sha=status.head_sha,
        base_branch=status.base_branch,
        base_path=hosted.base_path,
    )
    try:
        async with db.begin_nested():
            await code_host.link(db, task_id, contribution)
            await db.flush()
    except IntegrityError:
        pass  # the link sync linked it first


def _clean(value: str | None, field: str, limit: int) -> str:
    text = (value or "").strip()
    if len(text) > limit or "\x00" in text:
        raise ValidationError(f"{field} must be at most {limit} characters", field=field)
    return text


async def _last_summary(db: AsyncSession, task_id: str) -> str:
    """What the task's agent said last (its summary of the work), as a pull request's default body."""
    text = await db.scalar(
        select(Message.text)
        .join(Session, Session.id == Message.session_id)
        .where(Session.task_id == task_id, Message.kind == MessageKind.AGENT, Message.text != "")
        .order_by(Message.created_at.desc())
        .limit(1)
    )
    return (text or "")[:MAX_BODY]
