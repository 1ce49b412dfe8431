"""Pre-flight acknowledgement: what an automation's next run will get, checked without running anything.

The check resolves the agent profile (there, usable here, its command installed), the MCP tools the run's
session will get, the credentials it needs (the workspace's GitHub connection, authenticating where GitHub
answers; the secrets its profile's env references), when it runs next and a plain-English summary from
templates (no model is called). Saving never waits for it: a save stores a PENDING ack and enqueues the job
(`check_and_store`), which retries what is transient with backoff and stores FAILED with the reason once its
attempts are spent. Credentials are reported by name with presence and outcome, never with a value. An ack
records what it read from its agent profile (`ProfileState`), so a change of the profile re-acks the
automation (kandev.domain.automations.profile_checks)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from dataclasses import asdict, dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm.attributes import flag_modified

from kandev.domain.automations import thread
from kandev.domain.automations.agenda import next_fire, schedule_of
from kandev.domain.automations.records import AutomationRecord, webhook_path
from kandev.domain.automations.references import records, routed_profile
from kandev.domain.automations.rules import ALL_REPOSITORIES
from kandev.domain.context import ServiceContext, UnitOfWork
from kandev.domain.events import AgentProfileSnapshot
from kandev.domain.github.api import GitHubAuthError, GitHubRateLimitedError, GitHubUnreachableError, github_api
from kandev.domain.github.connections import workspace_token
from kandev.domain.sessions.tool_profiles import compute_profile, provider_of
from kandev.domain.usage.budgets import automation_refusal
from kandev.domain.workspace.agent_profiles import missing_command, usable_in
from kandev.domain.workspace.secrets import referenced_names
from kandev.models import AgentProfile, Automation, ExecutorProfile, Repository, Secret, Session, Task
from kandev.models.base import utcnow
from kandev.models.enums import TaskOrigin, ThreadKind, TriggerType
from kandev.platform.clock import clock_of
from kandev.platform.event_bus import AutomationEventPayload, automation_channel
from kandev.platform.settings import Settings

log = logging.getLogger("kandev.automations.preflight")

GITHUB_CONNECTION = "GitHub connection"
_GITHUB_TRIGGERS = frozenset(
    {TriggerType.GITHUB_PR, TriggerType.GITHUB_PR_MERGED, TriggerType.GITHUB_PUSH, TriggerType.GITHUB_CI}
)
# The conditions an empty repository list leaves unevaluated (the merged-PR one reads it as every repository).
_LISTED_TRIGGERS = frozenset({TriggerType.GITHUB_PR, TriggerType.GITHUB_PUSH, TriggerType.GITHUB_CI})
_GITHUB_EVENTS = {
    TriggerType.GITHUB_PR: "a pull request opens or changes",
    TriggerType.GITHUB_PR_MERGED: "a pull request is merged",
    TriggerType.GITHUB_PUSH: "a push arrives",
    TriggerType.GITHUB_CI: "a CI check finishes",
}
_PROMPT_WORDS = 200  # characters of the prompt quoted in the summary


class AckStatus(StrEnum):
    OK = "OK"
    WARN = "WARN"
    FAILED = "FAILED"
    PENDING = "PENDING"


class Outcome(StrEnum):
    """What checking one credential found."""

    AUTHENTICATED = "authenticated"
    PRESENT = "present"
    MISSING = "missing"
    REJECTED = "rejected"
    NOT_VERIFIED = "not verified"


@dataclass(frozen=True)
class Credential:
    """A credential by name: whether it is there and what checking it found; never its value."""

    name: str
    present: bool
    outcome: str


@dataclass(frozen=True)
class Ack:
    status: AckStatus
    routed_profile_id: str | None = None
    routed_profile_name: str | None = None
    tools: tuple[str, ...] = ()
    credentials: tuple[Credential, ...] = ()
    next_run: str | None = None
    summary: str = ""
    detail: str | None = None
    acked_at: datetime | None = None
    # What the check read from the routed profile (ProfileState): its digest and the command missing from PATH.
    profile_fingerprint: str | None = None
    profile_missing: str | None = None
    # The automation names no profile: its runs use the workspace's default, the routed one.
    follows_default: bool = False

    def to_json(self) -> dict[str, Any]:
        values = asdict(self)
        values["status"] = self.status.value
        values["tools"] = list(self.tools)
        values["credentials"] = [asdict(c) for c in self.credentials]
        values["acked_at"] = self.acked_at.isoformat() if self.acked_at is not None else None
        return values

    @classmethod
    def from_json(cls, values: dict[str, Any] | None) -> Ack | None:
        if not values:
            return None
        at = values.get("acked_at")
        return cls(
            status=AckStatus(values["status"]),
            routed_profile_id=values.get("routed_profile_id"),
            routed_profile_name=values.get("routed_profile_name"),
            tools=tuple(values.get("tools") or ()),
            credentials=tuple(Credential(**c) for c in values.get("credentials") or ()),
            next_run=values.get("next_run"),
            summary=values.get("summary") or "",
            detail=values.get("detail"),
            acked_at=datetime.fromisoformat(at) if at else None,
            profile_fingerprint=values.get("profile_fingerprint"),
            profile_missing=values.get("profile_missing"),
            follows_default=bool(values.get("follows_default")),
        )


PENDING = Ack(AckStatus.PENDING, detail="the pre-flight check is queued")


class PreflightUnreachable(Exception):
    """Something the check needs did not answer (GitHub, the database): worth another try."""


@dataclass
class _Findings:
    """What the check found so far: blockers, concerns and the parts of the ack."""

    blockers: list[str] = field(default_factory=list)
    concerns: list[str] = field(default_factory=list)
    credentials: list[Credential] = field(default_factory=list)

    def status(self) -> AckStatus:
        if self.blockers:
            return AckStatus.FAILED
        return AckStatus.WARN if self.concerns else AckStatus.OK

    def detail(self) -> str | None:
        reasons = self.blockers + self.concerns
        return "; ".join(reasons) if reasons else None


def fingerprint(automation: AutomationRecord) -> str:
    """The automation's own inputs to its ack (with its profile's state they make `ack_inputs`)."""
    inputs = {
        "prompt": automation.prompt,
        "agent_profile_id": automation.agent_profile_id,
        "executor_profile_id": automation.executor_profile_id,
        "enabled": automation.enabled,
        "triggers": sorted(
            [t.type, t.enabled, json.dumps(t.config, sort_keys=True, default=str)] for t in automation.triggers
        ),
        "repositories": [[r.repository_id, r.base_branch] for r in automation.repositories],
    }
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True)
class ProfileState:
    """What an ack reads from its agent profile, availability here included; `fingerprint` digests it all."""

    name: str
    executable: str | None
    missing: str | None  # the executable not on PATH; None: the profile can run here
    fingerprint: str


def profile_state(profile: AgentProfile | AgentProfileSnapshot) -> ProfileState:
    missing = missing_command(profile)
    read = {
        "name": profile.name,
        "kind": profile.kind,
        "command": list(profile.command or []),
        "supports_mcp": profile.supports_mcp,
        "secrets": sorted(referenced_names(profile.env or {})),
        "missing": missing,
    }
    digest = hashlib.sha256(json.dumps(read, sort_keys=True).encode()).hexdigest()
    return ProfileState(profile.name, profile.command[0] if profile.command else None, missing, digest)


def ack_inputs(automation: AutomationRecord, profile: ProfileState | None) -> str:
    """The automation's own inputs and its profile's state: an ack stored for them needs no new check, and
    one whose profile changed since is re-checked even if its job read the profile before the change."""
    own = fingerprint(automation)
    return hashlib.sha256(f"{own}:{profile.fingerprint if profile else ''}".encode()).hexdigest()


async def check(db: AsyncSession, settings: Settings, automation: AutomationRecord, now: datetime) -> Ack:
    """The acknowledgement of a saved or unsaved automation (an unsaved one has an empty id). Reads only;
    raises PreflightUnreachable when GitHub does not answer."""
    found = _Findings()
    profile = await _profile(db, automation, found)
    await _executor(db, automation, found)
    tools: tuple[str, ...] = ()
    if profile is not None:
        tools = await _tools(db, automation, profile, found)
        await _secrets(db, automation.workspace_id, profile, found)
    await _github(db, settings, automation, found)
    if automation.id and (spent := await automation_refusal(db, automation.id, now)):
        found.blockers.append(f"it will not fire: {spent}")
    next_run = _next_run(automation, now, found)
    state = profile_state(profile) if profile is not None else None
    follows_default = automation.agent_profile_id is None and profile is not None
    return Ack(
        status=found.status(),
        routed_profile_id=profile.id if profile is not None else None,
        routed_profile_name=profile.name if profile is not None else None,
        tools=tools,
        credentials=tuple(found.credentials),
        next_run=next_run,
        summary=summary(automation, profile.name if profile is not None else None, follows_default),
        detail=found.detail(),
        acked_at=now,
        profile_fingerprint=state.fingerprint if state is not None else None,
        profile_missing=state.missing if state is not None else None,
        follows_default=follows_default,
    )


async def _profile(db: AsyncSession, automation: AutomationRecord, found: _Findings) -> AgentProfile | None:
    profile = await routed_profile(db, automation.workspace_id, automation.agent_profile_id)
    if profile is None:
        if automation.agent_profile_id is None:
            found.blockers.append("no agent profile is chosen and the workspace has no default: a run can't start")
        else:
            found.blockers.append(f"agent profile {automation.agent_profile_id} does not exist in this workspace")
        return None
    missing = missing_command(profile)
    if missing is not None:
        # The same words as the launch's refusal (agent_profiles.ensure_available).
        found.blockers.append(f"agent profile '{profile.name}' is unavailable: command '{missing}' is not on PATH")
    return profile


async def _executor(db: AsyncSession, automation: AutomationRecord, found: _Findings) -> None:
    if automation.executor_profile_id is None:
        return
    executor = await db.get(ExecutorProfile, automation.executor_profile_id)
    if executor is None or not usable_in(executor.workspace_id, automation.workspace_id):
        found.blockers.append(f"executor profile {automation.executor_profile_id} does not exist in this workspace")


async def _repository_urls(db: AsyncSession, automation: AutomationRecord) -> list[str | None]:
    ids = [r.repository_id for r in automation.repositories]
    if not ids:
        return []
    return list(await db.scalars(select(Repository.remote_url).where(Repository.id.in_(ids))))


async def _tools(
    db: AsyncSession, automation: AutomationRecord, profile: AgentProfile, found: _Findings
) -> tuple[str, ...]:
    """The tools a run's session gets, decided by the same rule as the launched session's (tool_profiles)."""
    if not profile.supports_mcp:
        found.concerns.append(f"agent profile '{profile.name}' can't receive MCP tools (supports_mcp is false)")
        return ()
    providers = frozenset(p for p in map(provider_of, await _repository_urls(db, automation)) if p is not None)
    run_task = Task(origin=TaskOrigin.AUTOMATION_RUN, autopilot=False, parent_id=None)
    mcp = compute_profile(Session(purpose="automation"), run_task, providers=providers)
    return tuple(mcp.tool_names())


async def _secrets(db: AsyncSession, workspace_id: str, profile: AgentProfile, found: _Findings) -> None:
    """Presence only: a secret's value is never read here. A missing one blocks, as the launch refuses it."""
    names = referenced_names(profile.env or {})
    if not names:
        return
    present = set(
        await db.scalars(select(Secret.name).where(Secret.workspace_id == workspace_id, Secret.name.in_(names)))
    )
    for name in sorted(names):
        there = name in present
        found.credentials.append(Credential(f"secret {name}", there, Outcome.PRESENT if there else Outcome.MISSING))
    missing = sorted(names - present)
    if missing:
        found.blockers.append(f"the agent profile references missing secrets: {', '.join(missing)}")


async def _github(db: AsyncSession, settings: Settings, automation: AutomationRecord, found: _Findings) -> None:
    """A GitHub trigger needs the workspace's connection (a blocker without it); repositories hosted on GitHub
    are a concern without it. A connection is verified with GET /user where GitHub answers."""
    triggers = any(t.type in _GITHUB_TRIGGERS for t in automation.triggers if t.enabled)
    for trigger in automation.triggers:
        unlisted = not trigger.config.get("repositories") and not trigger.config.get(ALL_REPOSITORIES)
        if trigger.enabled and trigger.type in _LISTED_TRIGGERS and unlisted:
            found.concerns.append(
                "the GitHub condition lists no repository, so it is not evaluated: list repositories or choose all"
            )
    hosted = "github" in {provider_of(url) for url in await _repository_urls(db, automation)}
    if not (triggers or hosted):
        return

    connection = await workspace_token(db, settings, automation.workspace_id)
    if connection is None:
        found.credentials.append(Credential(GITHUB_CONNECTION, False, Outcome.MISSING))
        reason = "the workspace has no GitHub connection"
        (found.blockers if triggers else found.concerns).append(reason)
        return
    try:
        async with github_api(settings.github_api_url, connection[1]) as client:
            await client.user()
    except GitHubAuthError:
        found.credentials.append(Credential(GITHUB_CONNECTION, True, Outcome.REJECTED))
        found.blockers.append("GitHub token was rejected")
        return
    except GitHubRateLimitedError:
        found.credentials.append(Credential(GITHUB_CONNECTION, True, Outcome.NOT_VERIFIED))
        found.concerns.append("GitHub's rate limit is spent: the token could not be verified")
        return
    except GitHubUnreachableError as error:
        raise PreflightUnreachable(f"GitHub unreachable: {error}") from None
    found.credentials.append(Credential(GITHUB_CONNECTION, True, Outcome.AUTHENTICATED))


def _next_run(automation: AutomationRecord, now: datetime, found: _Findings) -> str:
    """An ISO time, the webhook URL path, "on GitHub events", "manual only" or "disabled"."""
    if not automation.enabled:
        found.concerns.append("the automation is disabled")
        return "disabled"
    enabled = [t for t in automation.triggers if t.enabled]
    if not enabled:
        found.concerns.append("no enabled trigger: it runs only when started by hand")
        return "manual only"
    fire = next_fire(automation, now)
    if fire is not None:
        return fire[0].isoformat()
    if any(t.type == TriggerType.WEBHOOK for t in enabled):
        return webhook_path(automation.id or "{id}")
    if any(t.type in _GITHUB_TRIGGERS for t in enabled):
        return "on GitHub events"
    found.concerns.append("its schedule never fires")
    return "never"


def summary(automation: AutomationRecord, profile_name: str | None, follows_default: bool = False) -> str:
    """Plain English from templates: when it runs, who runs it, what it is asked, where."""
    when = _when(automation)
    prompt = " ".join(automation.prompt.split())
    if len(prompt) > _PROMPT_WORDS:
        prompt = prompt[: _PROMPT_WORDS - 1] + "…"
    where = (
        f"in {len(automation.repositories)} repositor{'y' if len(automation.repositories) == 1 else 'ies'}"
        if automation.repositories
        else "in a scratch directory"
    )
    if follows_default:
        return f"{when}, it runs on the workspace default, {profile_name}, {where}: “{prompt}”."
    who = f"agent profile '{profile_name}'" if profile_name else "no agent profile yet"
    return f"{when}, {who} is asked, {where}: “{prompt}”."


def _when(automation: AutomationRecord) -> str:
    parts = []
    for trigger in automation.triggers:
        if not trigger.enabled:
            continue
        if trigger.type == TriggerType.SCHEDULED:
            schedule = schedule_of(trigger.config, trigger.updated_at)
            parts.append(schedule.describe() if schedule is not None else "on an invalid schedule")
        elif trigger.type == TriggerType.WEBHOOK:
            parts.append("When its webhook is called")
        else:
            parts.append(f"When {_GITHUB_EVENTS.get(TriggerType(trigger.type), 'a GitHub event arrives')}")
    if not parts:
        return "When started by hand"
    return " and ".join(parts[:1] + [p[0].lower() + p[1:] for p in parts[1:]])


# -- the job's side ------------------------------------------------------------------------------------


def announce(uow: UnitOfWork, workspace_id: str, automation_id: str, ack: Ack) -> None:
    """Whenever an ack is stored (PENDING included): automationEvents says so (ACK_CHANGED)."""
    uow.emit(
        automation_channel(workspace_id),
        AutomationEventPayload(kind="ACK_CHANGED", automation_id=automation_id, run=None, ack=ack.to_json()),
    )


async def ack_recorded(uow: UnitOfWork, automation: Automation, ack: Ack, now: datetime) -> None:
    """A check's result was stored: announced, and told in the automation's thread (PREFLIGHT_ACK), followed
    by the plan when it is not the thread's last one (a new automation's first plan comes after its ack)."""
    announce(uow, automation.workspace_id, automation.id, ack)
    await thread.post(uow, automation.workspace_id, automation.id, ThreadKind.PREFLIGHT_ACK, ack_text(ack))
    await thread.note_plan(uow, (await records(uow.db, [automation]))[0], now)


def ack_text(ack: Ack) -> str:
    """The acknowledgement in words; credentials by name, presence and outcome only."""
    lines = [f"Pre-flight check: {ack.status.value}."]
    if ack.detail:
        lines.append(ack.detail)
    default = " (the workspace default)" if ack.follows_default else ""
    lines.append(f"Agent profile: {ack.routed_profile_name or 'none usable'}{default}")
    lines.append(f"Tools: {', '.join(ack.tools) or 'none'}")
    credentials = [f"{c.name} ({c.outcome})" for c in ack.credentials]
    lines.append(f"Credentials: {', '.join(credentials) or 'none needed'}")
    lines.append(f"Next run: {ack.next_run or 'unknown'}")
    if ack.summary:
        lines.append(ack.summary)
    return "\n".join(lines)


def mark_pending(uow: UnitOfWork, ctx: ServiceContext, automation: Automation) -> None:
    """In the saving transaction: the ack is PENDING, and the check is enqueued once that commits."""
    automation.last_ack = PENDING.to_json()
    automation.ack_attempts = 0
    announce(uow, automation.workspace_id, automation.id, PENDING)
    automation_id = automation.id
    uow.then(lambda: ctx.jobs.enqueue_preflight(automation_id))


async def check_and_store(ctx: ServiceContext, automation_id: str) -> str:
    """The job: check the automation and store its ack; a transient failure is tried again after a doubling
    wait, up to settings.preflight_attempts, then stored as FAILED with the reason. A job for an ack that is
    no longer pending and whose inputs did not change stores nothing (a repeated job changes nothing)."""
    settings = ctx.settings
    reason = ""
    for attempt in range(1, settings.preflight_attempts + 1):
        try:
            return await _attempt(ctx, automation_id)
        except (PreflightUnreachable, SQLAlchemyError, OSError) as error:
            reason = str(error) if isinstance(error, PreflightUnreachable) else f"{type(error).__name__}: {error}"
            log.warning("pre-flight of automation %s, attempt %d: %s", automation_id, attempt, reason)
            await _count_attempt(ctx, automation_id, attempt)
            if attempt < settings.preflight_attempts:
                await asyncio.sleep(settings.preflight_backoff_seconds * 2 ** (attempt - 1))
    failed = Ack(
        AckStatus.FAILED,
        detail=f"pre-flight gave up after {settings.preflight_attempts} attempts: {reason}"[:1000],
        acked_at=utcnow(),
    )
    return await _store(ctx, automation_id, failed, None)


async def _attempt(ctx: ServiceContext, automation_id: str) -> str:
    async with ctx.read() as db:
        automation = await db.get(Automation, automation_id)
        if automation is None or automation.deleted_at is not None:
            return "gone"
        record = (await records(db, [automation]))[0]
        profile = await routed_profile(db, record.workspace_id, record.agent_profile_id)
        inputs = ack_inputs(record, profile_state(profile) if profile is not None else None)
        stored = Ack.from_json(automation.last_ack)
        if stored is not None and stored.status != AckStatus.PENDING and automation.ack_fingerprint == inputs:
            return "unchanged"
        ack = await check(db, ctx.settings, record, clock_of(ctx.settings).now())
    return await _store(ctx, automation_id, ack, inputs)


async def _count_attempt(ctx: ServiceContext, automation_id: str, attempt: int) -> None:
    try:
        async with ctx.unit_of_work() as uow:
            automation = await uow.db.get(Automation, automation_id)
            if automation is not None:
                automation.ack_attempts = attempt
    except SQLAlchemyError:
        log.warning("could not count the pre-flight attempt of automation %s", automation_id, exc_info=True)


async def _store(ctx: ServiceContext, automation_id: str, ack: Ack, inputs: str | None) -> str:
    async with ctx.unit_of_work() as uow:
        automation = await uow.db.get(Automation, automation_id, with_for_update=True)
        if automation is None or automation.deleted_at is not None:
            return "gone"
        automation.last_ack = ack.to_json()
        automation.ack_fingerprint = inputs
        flag_modified(automation, "updated_at")  # an ack is no edit of the automation
        await ack_recorded(uow, automation, ack, clock_of(ctx.settings).now())
    return ack.status.value
