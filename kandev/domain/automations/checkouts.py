"""Provider events choose the checkout of the run they fire: a GitHub pull-request run works in the PR's
repository on its head branch with its base as the diff base, a push run on the pushed branch at the pushed
commit, a CI run on the check's head branch at its commit (kandev.domain.workspace.contributions does the
git: the repository found among the workspace's by remote, or cloned and registered on first use within the
code-host rules; a local branch at the exact commit whose pushes go to that branch). The event's repository
is the task's first; the automation's other repositories follow it. Without a GitHub connection (no
configured repository access) the run works as its automation says; any other refusal fails the run with
the reason."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.adapters.github.remotes import parse_remote
from kandev.domain.context import ServiceContext
from kandev.domain.workspace.contributions import (
    NO_CONNECTION,
    Contribution,
    ContributionError,
    EventCheckout,
    resolve_event_checkout,
)
from kandev.models import Automation, AutomationRepository, AutomationRun, Repository
from kandev.models.enums import RunStatus, TriggerType


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
