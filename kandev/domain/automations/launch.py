"""Launching an admitted run: its task (new, or the continued one) and its first prompt, bound to the run in
the same transaction, so a retried launch job finds the run bound and does nothing twice. A provider event's
run works on the checkout its event names (kandev.domain.automations.launch).

Provider events choose the checkout of the run they fire: a GitHub pull-request run works in the PR's
repository on its head branch with its base as the diff base, a push run on the pushed branch at the pushed
commit, a CI run on the check's head branch at its commit (kandev.domain.workspace.contributions does the
git: the repository found among the workspace's by remote, or cloned and registered on first use within the
code-host rules; a local branch at the exact commit whose pushes go to that branch). The event's repository
is the task's first; the automation's other repositories follow it. Without a GitHub connection (no
configured repository access) the run works as its automation says; any other refusal fails the run with
the reason."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.automations.firing import context_of
from kandev.domain.automations.references import routed_profile
from kandev.domain.automations.run_events import emit_run_event
from kandev.domain.automations.templates import render
from kandev.domain.context import ServiceContext, UnitOfWork
from kandev.domain.errors import DomainError
from kandev.domain.feeds import emit_session_event
from kandev.domain.github.remotes import parse_remote
from kandev.domain.ports import NO_CONNECTION, Contribution, ContributionError, EventCheckout
from kandev.domain.session_rows import is_terminal, task_sessions
from kandev.domain.sessions.prompts import PromptSpec, enqueue_prompt
from kandev.domain.tasks.service import CreateTask, TaskService
from kandev.domain.workspace.contributions import Undo, attach_contribution, resolve_event_checkout, target_repository
from kandev.domain.workspace.repositories import RepositoryChoice
from kandev.models import Automation, AutomationRepository, AutomationRun, Repository, Session, Task, TaskRepository
from kandev.models.base import utcnow
from kandev.models.enums import AutomationContext, AutomationDestination, RunStatus, TaskOrigin, TriggerType

log = logging.getLogger("kandev.automations")

PROMPT_SOURCE = "automation"
KEY_PREFIX = "automation-run:"


def prompt_key(run_id: str) -> str:
    """The idempotency key of a run's prompt: how the turn that answers it is bound to the run."""
    return f"{KEY_PREFIX}{run_id}"


async def launch_run(ctx: ServiceContext, run_id: str) -> str:
    """Create (or continue) the run's task and queue its prompt; a launch that can't happen fails the run
    with the reason. Returns what happened, for the job's result."""
    undo = Undo([])
    try:
        event = await event_contribution(ctx, run_id)
        async with ctx.unit_of_work() as uow:
            run = await uow.db.get(AutomationRun, run_id, with_for_update=True)
            if run is None or run.status != RunStatus.TRIGGERED or run.task_id is not None:
                return "nothing to launch"
            automation = await uow.db.get(Automation, run.automation_id)
            assert automation is not None  # runs go with their automation (ON DELETE CASCADE)
            if run.stopped_at is not None:
                return "stopped before launch"
            if automation.deleted_at is not None:
                await _fail(uow, run, automation, "the automation was deleted before the run started")
                return "failed"
            prompt = render(
                automation.prompt,
                context_of(run.trigger_type, run.occurred_at or run.created_at, run.trigger_data),
            )
            # The pre-flight ack's rule: its own profile, else the workspace default (none usable: not found).
            routed = await routed_profile(uow.db, automation.workspace_id, automation.agent_profile_id)
            profile_id = routed.id if routed is not None else automation.agent_profile_id
            continued = None
            if automation.context == AutomationContext.CONTINUE_SESSION:
                continued, note = await _continuation(uow, automation, profile_id, event[0] if event else None)
                run.continuation_note = note
            if continued is not None:
                task, session = continued
                await enqueue_prompt(
                    ctx, uow, session, PromptSpec(text=prompt, source=PROMPT_SOURCE, idempotency_key=prompt_key(run.id))
                )
                emit_session_event(uow, "PROMPT_QUEUED", session)
            else:
                task = await _new_task(ctx, uow, automation, run, profile_id, event[1] if event else None, undo)
                session, _ = await ctx.hooks.start_agent(
                    ctx, uow, task, prompt, source=PROMPT_SOURCE, agent_profile_id=profile_id
                )
            run.task_id, run.session_id = task.id, session.id
            run.status = RunStatus.TASK_CREATED
            await emit_run_event(uow, "RUN_UPDATED", run, automation.workspace_id, prompt_template=automation.prompt)
            return "launched"
    except BaseException as error:
        await asyncio.to_thread(undo.run)  # an event checkout's clone, remote and branch go again
        if not isinstance(error, DomainError):
            raise
        # No usable profile, a workflow gone, a checkout GitHub refused, …: the run says why; nothing of the
        # attempt was kept.
        async with ctx.unit_of_work() as uow:
            run = await uow.db.get(AutomationRun, run_id, with_for_update=True)
            automation = await uow.db.get(Automation, run.automation_id) if run else None
            if run is None or automation is None or run.status != RunStatus.TRIGGERED:
                return "nothing to launch"
            await _fail(uow, run, automation, f"the run could not start: {error.message}")
        return "failed"


async def runs_to_launch(ctx: ServiceContext) -> list[str]:
    """Admitted runs whose launch hasn't happened (their job may be lost with Redis): launched again, once."""
    async with ctx.read() as db:
        rows = await db.scalars(
            select(AutomationRun.id).where(
                AutomationRun.status == RunStatus.TRIGGERED,
                AutomationRun.task_id.is_(None),
                AutomationRun.stopped_at.is_(None),
            )
        )
        return list(rows)


async def _fail(uow: UnitOfWork, run: AutomationRun, automation: Automation, reason: str) -> None:
    run.status, run.reason, run.finished_at = RunStatus.FAILED, reason, utcnow()
    await emit_run_event(uow, "RUN_UPDATED", run, automation.workspace_id, prompt_template=automation.prompt)


async def _new_task(
    ctx: ServiceContext,
    uow: UnitOfWork,
    automation: Automation,
    run: AutomationRun,
    profile_id: str | None,
    contribution: Contribution | None,
    undo: Undo,
) -> Task:
    """The run's task in its repositories: the event's checkout first when it names one (the automation's
    pair for that repository gives way to it), then the automation's other pairs in their order."""
    hidden = automation.destination == AutomationDestination.HIDDEN
    pairs = await uow.db.scalars(
        select(AutomationRepository)
        .where(AutomationRepository.automation_id == automation.id)
        .order_by(AutomationRepository.position)
    )
    choices = [RepositoryChoice(p.repository_id, p.base_branch) for p in pairs]
    if contribution is not None:
        known = await target_repository(uow.db, automation.workspace_id, contribution)
        others = [c for c in choices if known is None or c.repository_id != known.id]
        choices = [RepositoryChoice("", url=contribution.url), *others]
    command = CreateTask(
        workspace_id=automation.workspace_id,
        title=run.title_snapshot or automation.name,
        workflow_id=automation.workflow_id,
        workflow_step_id=automation.workflow_step_id,
        agent_profile_id=profile_id,
        executor_profile_id=automation.executor_profile_id,
        origin=TaskOrigin.AUTOMATION_RUN if hidden else TaskOrigin.AUTOMATION,
        repositories=choices,
    )
    task = await TaskService(ctx).create_within(uow, command)
    if contribution is not None:
        await attach_contribution(ctx.settings, uow, task, contribution, 0, undo)
    return task


async def _continuation(
    uow: UnitOfWork, automation: Automation, profile_id: str | None, checkout: EventCheckout | None
) -> tuple[tuple[Task, Session] | None, str | None]:
    """The previous run's task and primary session when a new turn there is still compatible with the
    automation's settings (and, for a run whose event names a checkout, on that same checkout); otherwise None
    and why a new task replaces it (None when there was no run)."""
    previous = await uow.db.scalar(
        select(AutomationRun)
        .where(AutomationRun.automation_id == automation.id, AutomationRun.task_id.is_not(None))
        .order_by(AutomationRun.created_at.desc(), AutomationRun.id.desc())
        .limit(1)
    )
    if previous is None or previous.task_id is None:
        return None, None
    task = await uow.db.get(Task, previous.task_id)
    if task is None or task.deleted_at is not None or task.archived_at is not None:
        return None, "the previous run's task was deleted or archived; a new task continues the automation"
    want_origin = (
        TaskOrigin.AUTOMATION_RUN if automation.destination == AutomationDestination.HIDDEN else TaskOrigin.AUTOMATION
    )
    if task.origin != want_origin:
        return None, "the automation's destination changed; a new task continues the automation"
    sessions = [s for s in await task_sessions(uow.db, task.id) if not is_terminal(s)]
    if not sessions:
        return None, "the previous run's session has ended; a new task continues the automation"
    session = sessions[0]
    if profile_id is not None and session.agent_profile_id != profile_id:
        return None, "the automation's agent profile changed; a new task continues the automation"
    if automation.executor_profile_id is not None and task.executor_profile_id != automation.executor_profile_id:
        return None, "the automation's executor profile changed; a new task continues the automation"
    if automation.destination == AutomationDestination.NORMAL and task.workflow_id != automation.workflow_id:
        return None, "the automation's workflow changed; a new task continues the automation"
    if checkout is not None:
        before = event_checkout(previous.trigger_type, previous.trigger_data)
        if before is None or before.key != checkout.key:
            return None, f"the event names another checkout ({checkout.key}); a new task works on it"
        return (task, session), None
    if await _pairs(uow, AutomationRepository, automation.id) != await _pairs(uow, TaskRepository, task.id):
        return None, "the automation's repositories changed; a new task continues the automation"
    return (task, session), None


async def _pairs(uow: UnitOfWork, table: type[AutomationRepository | TaskRepository], owner_id: str) -> list[Any]:
    """Ordered (repository, base branch) pairs of an automation or of a task: equal when the continued
    checkout is the one the automation asks for."""
    owner = AutomationRepository.automation_id if table is AutomationRepository else TaskRepository.task_id
    rows = await uow.db.execute(
        select(table.repository_id, table.base_branch).where(owner == owner_id).order_by(table.position)
    )
    return [tuple(row) for row in rows]


def event_checkout(trigger_type: str, data: object) -> EventCheckout | None:
    """What the run's trigger data names to work on, or None (a schedule, a webhook, Run now, a merge)."""
    if not isinstance(data, Mapping):
        return None
    if trigger_type == TriggerType.GITHUB_PR:
        pr = data.get("pr")
        if not isinstance(pr, Mapping):
            return None
        repo, number, branch, sha = pr.get("repo"), pr.get("number"), pr.get("branch"), pr.get("head_sha")
        if isinstance(repo, str) and isinstance(number, int) and isinstance(branch, str) and branch:
            return EventCheckout("github", repo, branch, sha if isinstance(sha, str) else None, number)
        return None
    if trigger_type in (TriggerType.GITHUB_PUSH, TriggerType.GITHUB_CI):
        repo, branch, sha = data.get("repository"), data.get("branch"), data.get("sha")
        if isinstance(repo, str) and isinstance(branch, str) and branch and isinstance(sha, str):
            return EventCheckout("github", repo, branch, sha)
    return None


async def event_contribution(ctx: ServiceContext, run_id: str) -> tuple[EventCheckout, Contribution] | None:
    """The checkout the run's event names, resolved with the workspace's connection before the launch's
    transaction (it asks GitHub); None when there is none to make. Raises ContributionError when GitHub or
    git refuses it (the launch fails the run with the reason)."""
    async with ctx.read() as db:
        run = await db.get(AutomationRun, run_id)
        if run is None or run.status != RunStatus.TRIGGERED or run.task_id is not None:
            return None
        checkout = event_checkout(run.trigger_type, run.trigger_data)
        automation = await db.get(Automation, run.automation_id)
        if checkout is None or automation is None:
            return None
        checkout = replace(checkout, base_branch=await _configured_base(db, automation.id, checkout.repository))
        try:
            return checkout, await resolve_event_checkout(db, ctx.settings, automation.workspace_id, checkout)
        except ContributionError as error:
            if error.reason == NO_CONNECTION:
                return None
            raise


async def _configured_base(db: AsyncSession, automation_id: str, repository: str) -> str:
    """The base branch the automation pairs with the event's repository, "" when it lists none."""
    rows = await db.execute(
        select(Repository.remote_url, AutomationRepository.base_branch)
        .join(AutomationRepository, AutomationRepository.repository_id == Repository.id)
        .where(AutomationRepository.automation_id == automation_id)
        .order_by(AutomationRepository.position)
    )
    for remote, base in rows:
        parsed = parse_remote(remote)
        if parsed is not None and parsed[1].lower() == repository.lower():
            return str(base or "")
    return ""
