"""Automations: create, read, list, update, enable, delete, their runs, and the webhook secret.

Every rule is checked before anything is written, in the same transaction as the write: a refused command
changes nothing. Every read and write goes through the principal's workspace access (load_automation)."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, fields, replace
from datetime import datetime
from enum import StrEnum
from typing import Any, TypeVar

from sqlalchemy import Select, delete, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm.attributes import flag_modified

from kandev.domain.automations import rules, thread
from kandev.domain.automations.agenda import RECENT_RUNS, Agenda, upcoming
from kandev.domain.automations.authoring import AuthoringDraft, authoring_draft, start_authoring
from kandev.domain.automations.cleanup import AUTOMATION_DELETED, capture_cleanups, hidden_run_tasks
from kandev.domain.automations.export import Names, names_for, workspace_yaml, workspace_zip
from kandev.domain.automations.history import RunFilter, run_page
from kandev.domain.automations.indicator import NextRun, next_run
from kandev.domain.automations.preflight import Ack, AckStatus, PreflightUnreachable, fingerprint, mark_pending
from kandev.domain.automations.preflight import check as preflight_check
from kandev.domain.automations.records import (
    AutomationFields,
    AutomationRecord,
    RepositoryRecord,
    RunPage,
    RunRecord,
    SavedAutomation,
    TriggerFields,
    TriggerRecord,
    given,
)
from kandev.domain.automations.references import (
    check_profiles,
    check_repositories,
    check_workflow,
    load_automation,
    records,
)
from kandev.domain.automations.schedule import CronCheck, Schedule, check
from kandev.domain.automations.scheduling import refresh_next_fires
from kandev.domain.automations.thread import ThreadPage
from kandev.domain.context import ServiceContext, UnitOfWork
from kandev.domain.errors import ConflictError, NotFoundError, PermissionDeniedError, ValidationError
from kandev.domain.quotas import check_automations, check_schedule_intervals
from kandev.domain.scope import load_workspace
from kandev.domain.sealed_secrets import cipher
from kandev.domain.sessions.service import Delivery
from kandev.domain.validation import check_first
from kandev.models import Automation, AutomationRepository, AutomationRun, AutomationTrigger
from kandev.models.base import new_id, utcnow
from kandev.models.enums import (
    AutomationContext,
    AutomationCreatedVia,
    AutomationDestination,
    RunStatus,
    RunTriggerType,
    TriggerType,
)
from kandev.platform.clock import clock_of
from kandev.platform.log_redaction import remember_secrets

_E = TypeVar("_E", bound=StrEnum)


@dataclass
class _Draft:
    """An automation's saved settings as they will be once the command is applied."""

    name: str
    description: str
    agent_profile_id: str | None
    executor_profile_id: str | None
    destination: AutomationDestination
    workflow_id: str | None
    workflow_step_id: str | None
    prompt: str
    title_template: str
    context: AutomationContext
    max_concurrent_runs: int
    enabled: bool

    @classmethod
    def defaults(cls) -> _Draft:
        return cls(
            name="",
            description="",
            agent_profile_id=None,
            executor_profile_id=None,
            destination=AutomationDestination.HIDDEN,
            workflow_id=None,
            workflow_step_id=None,
            prompt="",
            title_template="",
            context=AutomationContext.NEW_TASK_PER_RUN,
            max_concurrent_runs=1,
            enabled=True,
        )

    @classmethod
    def of(cls, row: Automation) -> _Draft:
        values = {f.name: getattr(row, f.name) for f in fields(cls)}
        values["destination"] = AutomationDestination(row.destination)
        values["context"] = AutomationContext(row.context)
        return cls(**values)


def _applied(draft: _Draft, command: AutomationFields, creating: bool) -> _Draft:
    """The draft with the command's given fields, each checked on its own."""
    changes: dict[str, Any] = {}
    if creating or given(command.name):
        changes["name"] = rules.check_name(command.name if given(command.name) else "")
    if creating or given(command.prompt):
        changes["prompt"] = rules.check_automation_prompt(command.prompt if given(command.prompt) else "")
    if given(command.description):
        changes["description"] = rules.check_description(command.description)
    if given(command.title_template):
        changes["title_template"] = rules.check_title_template(command.title_template)
    if given(command.enabled):
        if not isinstance(command.enabled, bool):
            raise ValidationError("enabled must be true or false", field="enabled")
        changes["enabled"] = command.enabled
    for name in ("agent_profile_id", "executor_profile_id", "max_concurrent_runs"):
        value = getattr(command, name)
        if given(value):
            changes[name] = value
    if given(command.destination):
        changes["destination"] = _member(AutomationDestination, command.destination, "destination")
    if given(command.context):
        changes["context"] = _member(AutomationContext, command.context, "context")
    if given(command.workflow_id):
        changes["workflow_id"] = command.workflow_id
        # Another workflow: the old start step can't be its, so it goes unless a new one is given.
        if command.workflow_id != draft.workflow_id:
            changes["workflow_step_id"] = None
    if given(command.workflow_step_id):
        changes["workflow_step_id"] = command.workflow_step_id
    result = replace(draft, **changes)
    rules.check_concurrency(result.context, result.max_concurrent_runs)
    return result


def _member(kind: type[_E], value: object, field: str) -> _E:
    try:
        return kind(str(value))
    except ValueError:
        raise ValidationError(f"{field} must be one of: {', '.join(m.value for m in kind)}", field=field) from None


# A workspace's live automations and the names of what they point at.
_Exported = tuple[list[AutomationRecord], Names]

# Triggers as asked for, each with its checked config.
Wanted = list[tuple[TriggerFields, dict[str, Any]]]


def _checked_triggers(ctx: ServiceContext, triggers: list[TriggerFields]) -> Wanted:
    """The triggers with their checked configs; a schedule firing more often than the caller's quota allows
    is refused."""
    rules.check_layout(triggers)
    checked = []
    for index, trigger in enumerate(triggers):
        if not isinstance(trigger.enabled, bool):
            raise ValidationError("enabled must be true or false", field=f"triggers[{index}].enabled")
        checked.append((trigger, rules.check_trigger(trigger, index)))
    check_schedule_intervals(
        ctx,
        (
            (index, Schedule.parse(config["expression"], config["timezone"]).shortest_interval())
            for index, (trigger, config) in enumerate(checked)
            if trigger.type == TriggerType.SCHEDULED
        ),
    )
    return checked


class AutomationService:
    def __init__(self, ctx: ServiceContext, server_key: bytes) -> None:
        self.ctx = ctx
        self.server_key = server_key

    # -- reads -----------------------------------------------------------------------------

    async def list(self, workspace_id: str) -> list[AutomationRecord]:
        """The workspace's live automations, by name."""
        async with self.ctx.read() as db:
            await load_workspace(db, self.ctx.principal, workspace_id)
            return await records(db, list(await db.scalars(_live(workspace_id))))

    async def get(self, automation_id: str) -> AutomationRecord:
        async with self.ctx.read() as db:
            automation = await load_automation(db, self.ctx.principal, automation_id)
            return (await records(db, [automation]))[0]

    async def list_runs(
        self,
        automation_id: str,
        *,
        first: int = 50,
        after: str | None = None,
        status: RunStatus | None = None,
        trigger_type: RunTriggerType | None = None,
        count: bool = False,
    ) -> RunPage:
        """An automation's runs, newest first, keyset-paginated; filtered by shown status and trigger type."""
        check_first(first)
        async with self.ctx.read() as db:
            await load_automation(db, self.ctx.principal, automation_id)
            return await run_page(
                db,
                AutomationRun.automation_id == automation_id,
                RunFilter(status=status, trigger_type=trigger_type),
                first=first,
                after=after,
                count=count,
            )

    async def thread(self, automation_id: str, *, first: int = 50, after: str | None = None) -> ThreadPage:
        """The automation's thread, oldest first; a deleted automation's stays readable. An automation saved
        before threads existed gets its creation intent on this first read."""
        check_first(first)
        async with self.ctx.read() as db:
            automation = await load_automation(db, self.ctx.principal, automation_id, deleted=True)
            backfill = not await thread.has_creation_intent(db, automation.id)
        if backfill:
            async with self.ctx.unit_of_work() as uow:
                await thread.backfill_creation_intent(uow, (await records(uow.db, [automation]))[0])
        async with self.ctx.read() as db:
            return await thread.page(db, automation_id, first, after)

    def now(self) -> datetime:
        """The instant next fires are counted from (the test clock in test mode, see kandev.platform.clock)."""
        return clock_of(self.ctx.settings).now()

    def indicator(self, automation: AutomationRecord, running_since: datetime | None) -> NextRun:
        """The automation's next-run indicator as of now (running_since: its oldest active run's firing)."""
        slow_after = self.ctx.settings.automation_slow_run_minutes * 60
        return next_run(automation, running_since, self.now(), slow_after)

    def check_schedule(self, expression: str, timezone: str, count: int) -> CronCheck:
        """validateCron: a bad expression or zone is an answer (valid false, with why), not an error."""
        return check(expression, timezone, count, self.now())

    async def agenda(self, workspace_id: str) -> Agenda:
        """What fires next (enabled scheduled automations, soonest first) and the workspace's newest runs."""
        async with self.ctx.read() as db:
            await load_workspace(db, self.ctx.principal, workspace_id)
            live = await records(db, list(await db.scalars(_live(workspace_id))))
            rows = (
                await db.execute(
                    RunRecord.query()
                    .join(Automation, Automation.id == AutomationRun.automation_id)
                    .where(Automation.workspace_id == workspace_id, Automation.deleted_at.is_(None))
                    .order_by(AutomationRun.created_at.desc(), AutomationRun.id.desc())
                    .limit(RECENT_RUNS)
                )
            ).all()
        return Agenda(upcoming=upcoming(live, self.now()), recent=[RunRecord.of(row) for row in rows])

    async def export_yaml(self, workspace_id: str) -> str:
        """Every live automation of the workspace as one YAML document (see automations.export)."""
        return workspace_yaml(*await self._exported(workspace_id))

    async def export_zip(self, workspace_id: str) -> bytes:
        """Every live automation of the workspace as `.kandev/automations/<slug>.yml` files in a zip."""
        return workspace_zip(*await self._exported(workspace_id))

    async def _exported(self, workspace_id: str) -> _Exported:
        async with self.ctx.read() as db:
            await load_workspace(db, self.ctx.principal, workspace_id)
            live = await records(db, list(await db.scalars(_live(workspace_id))))
            return live, await names_for(db, live)

    # -- writes ----------------------------------------------------------------------------

    async def create(self, workspace_id: str, command: AutomationFields) -> SavedAutomation:
        draft = _applied(_Draft.defaults(), command, creating=True)
        triggers = _checked_triggers(self.ctx, command.triggers) if given(command.triggers) else []
        created_via = command.created_via if given(command.created_via) else AutomationCreatedVia.FORM
        if self.ctx.principal.authors_automations:
            created_via = AutomationCreatedVia.CHAT
        async with self.ctx.unit_of_work() as uow:
            db = uow.db
            workspace = await load_workspace(db, self.ctx.principal, workspace_id)
            await check_automations(db, self.ctx, workspace.owner_id)
            await self._check(db, workspace_id, draft)
            pairs = await check_repositories(
                db, workspace_id, command.repositories if given(command.repositories) else []
            )
            now = utcnow()
            automation = Automation(
                id=new_id(),
                workspace_id=workspace_id,
                created_via=created_via,
                created_by=self.ctx.principal.actor,
                created_at=now,
                updated_at=now,
                **{f.name: getattr(draft, f.name) for f in fields(_Draft)},
            )
            db.add(automation)
            await db.flush()
            await _replace_repositories(db, automation.id, pairs)
            secret = await self._replace_triggers(db, automation, triggers)
            await refresh_next_fires(uow, automation, self.now())
            mark_pending(uow, self.ctx, automation)
            saved = (await records(db, [automation]))[0]
            await thread.note_created(uow, saved, self.ctx.principal.actor)
            return SavedAutomation(saved, secret)

    async def update(self, automation_id: str, command: AutomationFields) -> SavedAutomation:
        """Only the given fields change; given triggers or repositories replace the whole set (so switching
        between the scheduled and the webhook layout deletes the other layout's triggers)."""
        triggers = _checked_triggers(self.ctx, command.triggers) if given(command.triggers) else None
        async with self.ctx.unit_of_work() as uow:
            db = uow.db
            automation = await load_automation(db, self.ctx.principal, automation_id)
            before = (await records(db, [automation]))[0]
            acked_before = fingerprint(before)
            draft = _applied(_Draft.of(automation), command, creating=False)
            await self._check(db, automation.workspace_id, draft)
            if given(command.repositories):
                pairs = await check_repositories(db, automation.workspace_id, command.repositories)
                await _replace_repositories(db, automation.id, pairs)
            for f in fields(_Draft):
                setattr(automation, f.name, getattr(draft, f.name))
            automation.updated_at = utcnow()
            secret = None if triggers is None else await self._replace_triggers(db, automation, triggers)
            await db.flush()
            await refresh_next_fires(uow, automation, self.now())
            saved = (await records(db, [automation]))[0]
            if fingerprint(saved) != acked_before:
                saved = self._reacked(uow, automation, saved)
            in_chat = self.ctx.principal.authors_automations
            await thread.note_updated(uow, before, saved, self.ctx.principal.actor, self.now(), in_chat=in_chat)
            return SavedAutomation(saved, secret)

    # -- pre-flight acknowledgement ----------------------------------------------------------

    async def reack(self, automation_id: str) -> AutomationRecord:
        """Check the automation again (reackAutomation): the ack is PENDING until the job stores the result."""
        async with self.ctx.unit_of_work() as uow:
            automation = await load_automation(uow.db, self.ctx.principal, automation_id)
            mark_pending(uow, self.ctx, automation)
            return (await records(uow.db, [automation]))[0]

    async def dry_run(self, workspace_id: str, command: AutomationFields) -> Ack:
        """dryRunPreflight: the same check on an unsaved definition, answered now; nothing is stored. The
        definition is checked as a create is (a bad cron is an error); a missing or unusable profile is the
        ack's FAILED, not an error. GitHub not answering is a FAILED ack here (nothing retries it)."""
        draft = _applied(_Draft.defaults(), command, creating=True)
        triggers = _checked_triggers(self.ctx, command.triggers) if given(command.triggers) else []
        now = self.now()
        async with self.ctx.read() as db:
            await load_workspace(db, self.ctx.principal, workspace_id)
            pairs = await check_repositories(
                db, workspace_id, command.repositories if given(command.repositories) else []
            )
            record = AutomationRecord(
                id="",
                workspace_id=workspace_id,
                created_via=str(AutomationCreatedVia.FORM),
                created_by=self.ctx.principal.actor,
                created_at=now,
                updated_at=now,
                deleted_at=None,
                triggers=tuple(
                    TriggerRecord(
                        id="",
                        automation_id="",
                        type=t.type,
                        enabled=t.enabled,
                        config=c,
                        created_at=now,
                        updated_at=now,
                    )
                    for t, c in triggers
                ),
                repositories=tuple(RepositoryRecord(r, b, i) for i, (r, b) in enumerate(pairs)),
                **_draft_values(draft),
            )
            try:
                return await preflight_check(db, self.ctx.settings, record, now)
            except PreflightUnreachable as error:
                return Ack(AckStatus.FAILED, detail=str(error), acked_at=now)

    async def set_enabled(self, automation_id: str, enabled: bool) -> AutomationRecord:
        async with self.ctx.unit_of_work() as uow:
            automation = await load_automation(uow.db, self.ctx.principal, automation_id)
            before = (await records(uow.db, [automation]))[0]
            if automation.enabled == enabled:
                return before
            automation.enabled = enabled
            automation.updated_at = utcnow()
            await refresh_next_fires(uow, automation, self.now())
            saved = self._reacked(uow, automation, (await records(uow.db, [automation]))[0])
            await thread.note_updated(uow, before, saved, self.ctx.principal.actor, self.now())
            return saved

    async def set_trigger_enabled(self, trigger_id: str, enabled: bool) -> AutomationRecord:
        async with self.ctx.unit_of_work() as uow:
            trigger = await uow.db.get(AutomationTrigger, trigger_id)
            if trigger is None:
                raise NotFoundError("automation trigger", trigger_id)
            try:
                automation = await load_automation(uow.db, self.ctx.principal, trigger.automation_id)
            except NotFoundError:
                raise NotFoundError("automation trigger", trigger_id) from None
            before = (await records(uow.db, [automation]))[0]
            if trigger.enabled == enabled:
                return before
            # Not updated_at: that is the schedule's anchor, and enabling changes no setting of it.
            trigger.enabled = enabled
            _keep_anchor(trigger)
            automation.updated_at = utcnow()
            await uow.db.flush()
            await refresh_next_fires(uow, automation, self.now())
            saved = self._reacked(uow, automation, (await records(uow.db, [automation]))[0])
            await thread.note_updated(uow, before, saved, self.ctx.principal.actor, self.now())
            return saved

    async def delete(self, automation_id: str) -> AutomationRecord:
        """Soft delete: the automation stops firing and disappears from every read. Its webhook secret goes
        at once. Its hidden run tasks are captured in durable cleanups in the same transaction; a job then
        stops them, deletes them and reclaims their worktrees (retried until done). Tasks it created on the
        board (normal destination) stay."""
        async with self.ctx.unit_of_work() as uow:
            automation = await load_automation(uow.db, self.ctx.principal, automation_id)
            record = (await records(uow.db, [automation]))[0]
            await capture_cleanups(self.ctx, uow, await hidden_run_tasks(uow, automation.id), AUTOMATION_DELETED)
            automation.deleted_at = automation.updated_at = utcnow()
            automation.webhook_secret_ciphertext = None
            await refresh_next_fires(uow, automation, self.now())
            await thread.note_deleted(uow, automation.workspace_id, automation.id, self.ctx.principal.actor)
            return replace(record, deleted_at=automation.deleted_at, has_webhook_secret=False)

    async def start_authoring(self, workspace_id: str, prompt: str, agent_profile_id: str | None) -> Delivery:
        """A "describe an automation" chat (see automations.authoring), opened by a person only."""
        self._ensure_person("start an authoring chat")
        return await start_authoring(self.ctx, workspace_id, prompt, agent_profile_id)

    async def authoring_draft(self, task_id: str) -> AuthoringDraft:
        """What an authoring chat captured, for the form to take over."""
        return await authoring_draft(self.ctx, task_id)

    # -- the webhook secret ----------------------------------------------------------------

    async def reveal_webhook_secret(self, automation_id: str) -> str:
        """The secret again, for the owner of the workspace (never for an agent's session)."""
        self._ensure_person("reveal a webhook secret")
        async with self.ctx.read() as db:
            automation = await load_automation(db, self.ctx.principal, automation_id)
            if automation.webhook_secret_ciphertext is None:
                raise ConflictError("the automation has no webhook trigger", automation_id=automation.id)
            secret = cipher(self.server_key).decrypt(automation.webhook_secret_ciphertext).decode()
        remember_secrets([secret])
        return secret

    async def rotate_webhook_secret(self, automation_id: str) -> str:
        """A new secret; the old one stops working at once. Shown in this answer only."""
        self._ensure_person("rotate a webhook secret")
        async with self.ctx.unit_of_work() as uow:
            automation = await load_automation(uow.db, self.ctx.principal, automation_id)
            if automation.webhook_secret_ciphertext is None:
                raise ConflictError("the automation has no webhook trigger", automation_id=automation.id)
            secret = self._new_secret(automation)
            automation.updated_at = utcnow()
            return secret

    # -- helpers ---------------------------------------------------------------------------

    def _reacked(self, uow: UnitOfWork, automation: Automation, saved: AutomationRecord) -> AutomationRecord:
        """A change of what the ack reads (enabling and disabling included: the badge and the next-run
        indicator must agree) makes it PENDING and enqueues a check, whose result the thread records."""
        mark_pending(uow, self.ctx, automation)
        return replace(saved, last_ack=automation.last_ack)

    def _ensure_person(self, action: str) -> None:
        if self.ctx.principal.session_id is not None:
            raise PermissionDeniedError(f"an agent's session may not {action}")

    def _new_secret(self, automation: Automation) -> str:
        secret = secrets.token_urlsafe(32)
        remember_secrets([secret])
        automation.webhook_secret_ciphertext = cipher(self.server_key).encrypt(secret.encode())
        return secret

    async def _check(self, db: AsyncSession, workspace_id: str, draft: _Draft) -> None:
        await check_profiles(db, workspace_id, draft.agent_profile_id, draft.executor_profile_id)
        await check_workflow(db, workspace_id, draft.destination, draft.workflow_id, draft.workflow_step_id)

    async def _replace_triggers(self, db: AsyncSession, automation: Automation, wanted: Wanted) -> str | None:
        """Make the automation's triggers the wanted set. A trigger of a type it already has is kept (its id,
        its runs and, for a webhook, its secret); the others are deleted. Returns a webhook secret generated
        for a new webhook trigger."""
        existing = {
            t.type: t
            for t in await db.scalars(select(AutomationTrigger).where(AutomationTrigger.automation_id == automation.id))
        }
        kept: set[str] = set()
        secret = None
        now = utcnow()
        for trigger, config in wanted:
            row = existing.get(trigger.type)
            if row is None:
                row = AutomationTrigger(
                    id=new_id(), automation_id=automation.id, type=trigger.type, created_at=now, updated_at=now
                )
                db.add(row)
                if trigger.type == TriggerType.WEBHOOK:
                    secret = self._new_secret(automation)
            elif row.config != config:
                row.updated_at = now
            else:
                _keep_anchor(row)
            row.enabled, row.config = trigger.enabled, config
            kept.add(trigger.type)
        gone = [row.id for kind, row in existing.items() if kind not in kept]
        if gone:
            await db.execute(delete(AutomationTrigger).where(AutomationTrigger.id.in_(gone)))
        if TriggerType.WEBHOOK not in kept:
            automation.webhook_secret_ciphertext = None
        await db.flush()
        return secret


def _draft_values(draft: _Draft) -> dict[str, Any]:
    """The draft's settings as an AutomationRecord holds them (enums as their stored text)."""
    values: dict[str, Any] = {f.name: getattr(draft, f.name) for f in fields(_Draft)}
    values["destination"], values["context"] = str(draft.destination), str(draft.context)
    return values


def _keep_anchor(trigger: AutomationTrigger) -> None:
    """Write updated_at as it is with this change: the column's onupdate would otherwise move it, and with it
    the anchor `@every` counts from, on a change to no setting of the schedule."""
    flag_modified(trigger, "updated_at")


def _live(workspace_id: str) -> Select[Automation]:
    """The workspace's automations that are not deleted, by name."""
    return (
        select(Automation)
        .where(Automation.workspace_id == workspace_id, Automation.deleted_at.is_(None))
        .order_by(Automation.name, Automation.id)
    )


async def _replace_repositories(db: AsyncSession, automation_id: str, pairs: list[tuple[str, str]]) -> None:
    await db.execute(delete(AutomationRepository).where(AutomationRepository.automation_id == automation_id))
    for position, (repository_id, base_branch) in enumerate(pairs):
        db.add(
            AutomationRepository(
                automation_id=automation_id, repository_id=repository_id, position=position, base_branch=base_branch
            )
        )
    await db.flush()
