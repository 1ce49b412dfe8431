"""Re-acknowledging automations when their agent profile changes, so an ack never vouches for a profile that
is no longer what it checked.

- On a profile's save (kandev.domain.workspace.agent_profiles), in the saving transaction: when anything the
  ack reads from it changed (name, kind, command, MCP support, secrets its env references, its command being
  on PATH), or it was deleted, every live automation using it (by name, or following its workspace's default
  when that is it) gets a PENDING ack, a thread message saying what changed, and (after commit) the
  pre-flight job. A change of a workspace's default does the same for the automations that follow it.
- `recheck_profiles`, which the scheduler runs every KANDEV_PROFILE_RECHECK_SECONDS, catches what changes
  outside Kandev (a command installed or removed): it compares each enabled automation's stored ack with its
  profile as it is now and re-acks those that differ. Each re-ack is claimed by a compare-and-set on the
  ack's stored inputs (`ack_fingerprint`), so of several schedulers exactly one re-acks it and writes its
  message; an automation whose check is already pending, or gave up (no stored inputs), is left alone.

Availability is what this process finds on its PATH; the scheduler and the workers are expected to share it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from sqlalchemy import and_, func, or_, select, update

from kandev.domain.automations import thread
from kandev.domain.automations.preflight import PENDING, Ack, AckStatus, ProfileState, announce, profile_state
from kandev.domain.context import ServiceContext, UnitOfWork
from kandev.domain.events import AgentProfileDeleting, AgentProfileSaved, DefaultAgentProfileChanged
from kandev.domain.workspace.agent_profiles import usable_in
from kandev.models import AgentProfile, Automation, Workspace
from kandev.models.enums import ThreadKind

log = logging.getLogger("kandev.automations.profile_checks")

_ANY = object()  # claim whatever the stored inputs are (the save's own transaction)


def change_text(before: ProfileState, after: ProfileState) -> str:
    """The thread's words for a change of the profile an automation uses (availability first)."""
    name = after.name
    if after.missing is not None and before.missing is None:
        said = f"Agent profile '{name}' became unavailable: command '{after.missing}' is not on PATH."
    elif after.missing is None and before.missing is not None:
        on_path = f": command '{after.executable}' is on PATH" if after.executable else ""
        said = f"Agent profile '{name}' became available again{on_path}."
    elif before.name != name:
        said = f"Agent profile '{before.name}' was changed and is now named '{name}'."
    else:
        said = f"Agent profile '{name}' was changed."
    return f"{said} The pre-flight check runs again."


def deleted_text(name: str) -> str:
    return f"Agent profile '{name}' was deleted: runs use the workspace default until another profile is chosen."


def default_text(before: str | None, after: str) -> str:
    was = f" (was '{before}')" if before else ""
    return f"The workspace's default agent profile is now '{after}'{was}: runs use it. The pre-flight check runs again."


async def _reack(
    uow: UnitOfWork,
    ctx: ServiceContext,
    workspace_id: str,
    automation_id: str,
    text: str | None,
    seen: object = _ANY,
) -> bool:
    """Store a PENDING ack (the automation's updated_at kept: this is no edit of it), say why in its thread
    (when there is a `text`) and enqueue the check after commit; with `seen`, only where the ack's stored
    inputs still are `seen`."""
    statement = update(Automation).where(Automation.id == automation_id, Automation.deleted_at.is_(None))
    if seen is not _ANY:
        statement = statement.where(Automation.ack_fingerprint == seen)
    claimed = await uow.db.scalar(
        statement.values(
            last_ack=PENDING.to_json(), ack_fingerprint=None, ack_attempts=0, updated_at=Automation.updated_at
        )
        .returning(Automation.id)
        .execution_options(synchronize_session=False)
    )
    if claimed is None:
        return False
    announce(uow, workspace_id, automation_id, PENDING)
    if text is not None:
        await thread.post(uow, workspace_id, automation_id, ThreadKind.PREFLIGHT_ACK, text)
    uow.then(lambda: ctx.jobs.enqueue_preflight(automation_id))
    return True


async def _users(uow: UnitOfWork, profile_id: str) -> list[tuple[str, str]]:
    """(workspace id, automation id) of the live automations whose runs use this agent profile: naming it, or
    following a workspace default that is it."""
    defaults = select(Workspace.id).where(Workspace.default_agent_profile_id == profile_id)
    rows = await uow.db.execute(
        select(Automation.workspace_id, Automation.id)
        .where(
            or_(
                Automation.agent_profile_id == profile_id,
                and_(Automation.agent_profile_id.is_(None), Automation.workspace_id.in_(defaults)),
            ),
            Automation.deleted_at.is_(None),
        )
        .order_by(Automation.id)
    )
    return [(row[0], row[1]) for row in rows.all()]


async def default_changed(ctx: ServiceContext, uow: UnitOfWork, event: DefaultAgentProfileChanged) -> int:
    """In the transaction that changed the workspace's default agent profile: re-ack the automations that follow
    it; how many."""
    text = default_text(event.before, event.after)
    ids = await uow.db.scalars(
        select(Automation.id)
        .where(
            Automation.workspace_id == event.workspace_id,
            Automation.agent_profile_id.is_(None),
            Automation.deleted_at.is_(None),
        )
        .order_by(Automation.id)
    )
    reacked = 0
    for automation_id in list(ids):
        reacked += await _reack(uow, ctx, event.workspace_id, automation_id, text)
    return reacked


async def profile_saved(ctx: ServiceContext, uow: UnitOfWork, event: AgentProfileSaved) -> int:
    """In the profile's saving transaction, after its changes: re-ack its automations when what an ack reads
    from it changed; how many were re-acked."""
    profile = event.profile
    before, after = profile_state(event.before), profile_state(profile)
    if after.fingerprint == before.fingerprint:
        return 0
    text = change_text(before, after)
    reacked = 0
    for workspace_id, automation_id in await _users(uow, profile.id):
        reacked += await _reack(uow, ctx, workspace_id, automation_id, text)
    return reacked


async def profile_deleting(ctx: ServiceContext, uow: UnitOfWork, event: AgentProfileDeleting) -> int:
    """In the deleting transaction, before the profile goes: its automations are re-acked (the check then
    finds no agent profile chosen)."""
    profile = event.profile
    reacked = 0
    for workspace_id, automation_id in await _users(uow, profile.id):
        reacked += await _reack(uow, ctx, workspace_id, automation_id, deleted_text(profile.name))
    return reacked


@dataclass(frozen=True)
class _Stale:
    workspace_id: str
    automation_id: str
    seen: str
    text: str | None


async def recheck_profiles(ctx: ServiceContext) -> int:
    """Re-ack the enabled automations whose stored ack no longer matches their profile as it is now (each
    profile's availability looked up once); how many this call re-acked. Nothing changed: nothing written."""
    states: dict[str, ProfileState] = {}
    stale: list[_Stale] = []
    async with ctx.read() as db:
        rows = await db.execute(
            select(
                Automation.workspace_id, Automation.id, Automation.last_ack, Automation.ack_fingerprint, AgentProfile
            )
            .join(Workspace, Workspace.id == Automation.workspace_id)
            .join(
                AgentProfile,
                AgentProfile.id == func.coalesce(Automation.agent_profile_id, Workspace.default_agent_profile_id),
            )
            .where(
                Automation.enabled.is_(True),
                Automation.deleted_at.is_(None),
                Automation.ack_fingerprint.is_not(None),
            )
            .order_by(Automation.id)
        )
        for workspace_id, automation_id, stored, seen, profile in rows.all():
            ack = Ack.from_json(stored)
            if ack is None or ack.status == AckStatus.PENDING or not usable_in(profile.workspace_id, workspace_id):
                continue
            now = states.get(profile.id) or states.setdefault(profile.id, profile_state(profile))
            if ack.profile_fingerprint == now.fingerprint:
                continue
            # An ack stored before acks recorded their profile is checked again without a message: what it
            # read is unknown, so what changed can't be told.
            text = None
            if ack.profile_fingerprint is not None:
                before = ProfileState(ack.routed_profile_name or now.name, None, ack.profile_missing, "")
                text = change_text(before, now)
            stale.append(_Stale(workspace_id, automation_id, seen, text))
    if not stale:
        return 0
    reacked = 0
    async with ctx.unit_of_work() as uow:
        for item in stale:
            reacked += await _reack(uow, ctx, item.workspace_id, item.automation_id, item.text, item.seen)
    if reacked:
        log.info("agent profiles changed: %d automation(s) re-acked", reacked)
    return reacked
