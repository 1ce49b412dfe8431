"""What an automation points at (profiles, workflow and step, repositories) must belong to its workspace;
loading an automation on behalf of a principal, where unknown and unauthorized look the same; and the
triggers that can fire at all."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from sqlalchemy import Select, and_, select
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.automations.records import AutomationRecord
from kandev.domain.automations.rules import MAX_REPOSITORIES, check_branch
from kandev.domain.context import Principal
from kandev.domain.errors import NotFoundError, ValidationError
from kandev.domain.scope import sees_workspace
from kandev.domain.workspace.agent_profiles import usable_in
from kandev.domain.workspace.repositories import RepositoryChoice
from kandev.models import (
    AgentProfile,
    Automation,
    AutomationRepository,
    AutomationTrigger,
    ExecutorProfile,
    Repository,
    Workflow,
    WorkflowStep,
    Workspace,
)
from kandev.models.enums import AutomationDestination, TriggerType

_TRIGGER_ORDER = {kind.value: index for index, kind in enumerate(TriggerType)}


def live_triggers(trigger_type: TriggerType, workspace_id: str | None = None) -> Select[AutomationTrigger]:
    """Enabled triggers of one type on enabled, undeleted automations (of one workspace when given), in a
    stable order: what a scheduler, poller or webhook may fire."""
    query = (
        select(AutomationTrigger)
        .join(Automation, Automation.id == AutomationTrigger.automation_id)
        .where(
            Automation.enabled.is_(True),
            Automation.deleted_at.is_(None),
            AutomationTrigger.enabled.is_(True),
            AutomationTrigger.type == trigger_type.value,
        )
        .order_by(AutomationTrigger.automation_id, AutomationTrigger.id)
    )
    return query if workspace_id is None else query.where(Automation.workspace_id == workspace_id)


async def routed_profile(db: AsyncSession, workspace_id: str, agent_profile_id: str | None) -> AgentProfile | None:
    """The agent profile an automation's runs launch with, the one rule its pre-flight ack and its launch both
    follow: its own when it names one, else the workspace's default (the form may save no choice); None when
    that is missing or not usable in the workspace."""
    if agent_profile_id is None:
        workspace = await db.get(Workspace, workspace_id)
        agent_profile_id = workspace.default_agent_profile_id if workspace is not None else None
    profile = await db.get(AgentProfile, agent_profile_id) if agent_profile_id is not None else None
    return profile if profile is not None and usable_in(profile.workspace_id, workspace_id) else None


async def load_automation(
    db: AsyncSession, principal: Principal, automation_id: str, *, deleted: bool = False
) -> Automation:
    """A live (not deleted, unless `deleted`) automation of a workspace the principal sees."""
    automation = await db.get(Automation, automation_id)
    workspace = await db.get(Workspace, automation.workspace_id) if automation is not None else None
    return _seen(principal, automation_id, automation, workspace, deleted=deleted)


async def load_automation_and_trigger(
    db: AsyncSession, principal: Principal, automation_id: str, trigger_id: str | None
) -> tuple[Automation, AutomationTrigger | None]:
    """A live automation (as load_automation) and the named trigger if it is the automation's, in one
    statement (a fire's statements are its latency)."""
    trigger_of_it = and_(AutomationTrigger.id == trigger_id, AutomationTrigger.automation_id == Automation.id)
    row = (
        await db.execute(
            select(Automation, Workspace, AutomationTrigger)
            .join(Workspace, Workspace.id == Automation.workspace_id)
            .outerjoin(AutomationTrigger, trigger_of_it)
            .where(Automation.id == automation_id)
        )
    ).first()
    automation, workspace, trigger = row if row is not None else (None, None, None)
    return _seen(principal, automation_id, automation, workspace), trigger


def _seen(
    principal: Principal,
    automation_id: str,
    automation: Automation | None,
    workspace: Workspace | None,
    *,
    deleted: bool = False,
) -> Automation:
    """The automation, unless it is unknown, deleted (unless `deleted`) or in a workspace the principal doesn't
    see: all three answer the same not-found."""
    if automation is None or workspace is None or not sees_workspace(principal, workspace):
        raise NotFoundError("automation", automation_id)
    if automation.deleted_at is not None and not deleted:
        raise NotFoundError("automation", automation_id)
    return automation


async def records(db: AsyncSession, rows: Sequence[Automation]) -> list[AutomationRecord]:
    """The automations with their triggers and repositories: two statements, whatever their number."""
    ids = [row.id for row in rows]
    if not ids:
        return []
    triggers: dict[str, list[AutomationTrigger]] = defaultdict(list)
    found = await db.scalars(select(AutomationTrigger).where(AutomationTrigger.automation_id.in_(ids)))
    # The schedule first, then the GitHub condition, then the webhook: the order the editor shows them in.
    for trigger in sorted(found, key=lambda t: (_TRIGGER_ORDER.get(t.type, len(_TRIGGER_ORDER)), t.id)):
        triggers[trigger.automation_id].append(trigger)
    repositories: dict[str, list[AutomationRepository]] = defaultdict(list)
    for pair in await db.scalars(
        select(AutomationRepository)
        .where(AutomationRepository.automation_id.in_(ids))
        .order_by(AutomationRepository.position)
    ):
        repositories[pair.automation_id].append(pair)
    return [AutomationRecord.of(row, triggers[row.id], repositories[row.id]) for row in rows]


async def check_profiles(
    db: AsyncSession, workspace_id: str, agent_profile_id: str | None, executor_profile_id: str | None
) -> None:
    """Each profile, when set, is one of the workspace's or a server-wide one."""
    checks = (
        (AgentProfile, agent_profile_id, "agentProfileId", "an agent profile"),
        (ExecutorProfile, executor_profile_id, "executorProfileId", "an executor profile"),
    )
    for model, profile_id, field, what in checks:
        if profile_id is None:
            continue
        profile: AgentProfile | ExecutorProfile | None = await db.get(model, profile_id)
        if profile is None or not usable_in(profile.workspace_id, workspace_id):
            raise ValidationError(f"{field} does not name {what} of this workspace", field=field)


async def check_workflow(
    db: AsyncSession,
    workspace_id: str,
    destination: AutomationDestination,
    workflow_id: str | None,
    workflow_step_id: str | None,
) -> None:
    """A normal destination needs a workflow of the workspace; a step, when set, is one of that workflow."""
    if workflow_id is None:
        if destination == AutomationDestination.NORMAL:
            raise ValidationError("a run that creates a normal task needs a workflow", field="workflowId")
        if workflow_step_id is not None:
            raise ValidationError("workflowStepId needs its workflowId", field="workflowStepId")
        return
    workflow = await db.get(Workflow, workflow_id)
    if workflow is None or workflow.workspace_id != workspace_id:
        raise ValidationError("workflowId does not name a workflow of this workspace", field="workflowId")
    if workflow_step_id is not None:
        step = await db.get(WorkflowStep, workflow_step_id)
        if step is None or step.workflow_id != workflow_id:
            raise ValidationError("workflowStepId is not a step of workflowId", field="workflowStepId")


async def check_repositories(
    db: AsyncSession, workspace_id: str, choices: Sequence[RepositoryChoice]
) -> list[tuple[str, str]]:
    """Ordered (repository id, base branch) pairs of the workspace's repositories; an omitted branch is the
    repository's default branch, saved explicitly. None at all: a scratch workspace per run."""
    if len(choices) > MAX_REPOSITORIES:
        raise ValidationError(f"repositories takes at most {MAX_REPOSITORIES} items", field="repositories")
    ids = [choice.repository_id for choice in choices]
    if len(set(ids)) != len(ids):
        raise ValidationError("a repository is listed twice", field="repositories")
    found = {}
    if ids:
        rows = await db.scalars(select(Repository).where(Repository.id.in_(ids)))
        found = {row.id: row for row in rows if row.workspace_id == workspace_id}
    pairs = []
    for index, choice in enumerate(choices):
        repository = found.get(choice.repository_id)
        if repository is None:
            field = f"repositories[{index}].repositoryId"
            raise ValidationError(f"{field} does not name a repository of this workspace", field=field)
        branch = check_branch(choice.base_branch, f"repositories[{index}].baseBranch")
        pairs.append((repository.id, branch or repository.default_branch))
    return pairs
