"""The GitHub App's webhook deliveries: push and check_run events fire the github_push and github_ci
triggers of the workspaces the delivery's installation is routed to (github_installations).

The code host's DeliveryReader (kandev.domain.ports; GitHub's in kandev.adapters.github.deliveries) checks the
signature, in constant time, before the body is parsed, and reads the delivery into a HostDelivery. A delivery
is handled once: by its `X-GitHub-Delivery` id, and by the SHA-256 of its signed body, so a captured delivery
sent again under a made-up id is a duplicate too (the signature signs the body only, never the id). The
firings it decides are recorded in the same transaction as the delivery (kandev.domain.github.firings), then
fired.

- Push: fires a trigger listing the repository whose `branches` glob matches the branch (none: any branch).
- CI: fires a trigger listing the repository whose conclusions hold the run's (default failure), whose
  `check_names` glob matches the check's name and whose `head_branches` glob matches its branch (none: any).

An empty repository list is not evaluated (the spec's rule for webhook-driven conditions); all_repositories,
chosen explicitly, evaluates every repository of the workspace on its GitHub connection's host.
"""

from __future__ import annotations

import fnmatch
import hashlib
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from sqlalchemy import delete, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.automations.firing import FireOutcome
from kandev.domain.automations.references import live_triggers
from kandev.domain.automations.rules import ALL_REPOSITORIES, evaluated_repositories
from kandev.domain.automations.webhook_auth import count_wrong_secret
from kandev.domain.automations.webhooks import Refusal, WebhookRefused
from kandev.domain.context import ServiceContext
from kandev.domain.errors import ValidationError
from kandev.domain.events import CheckRunCompleted
from kandev.domain.github.connections import app_webhook_secret
from kandev.domain.github.firings import deliver_pending, record_firing
from kandev.domain.github.remotes import parse_remote
from kandev.domain.github.repositories import connected_repositories
from kandev.domain.ports import CODE_HOSTS, DeliveryReader, HostDelivery
from kandev.domain.validation import decode_json
from kandev.models import (
    GithubConnection,
    GithubInstallation,
    GithubWebhookDelivery,
    Repository,
)
from kandev.models.base import utcnow
from kandev.models.enums import TriggerType

log = logging.getLogger("kandev.adapters.github.webhooks")

MAX_DELIVERY_ID = 100
DEFAULT_CONCLUSIONS = ("failure",)
# How long a handled delivery id is remembered: GitHub redelivers (automatically or by hand) within days.
DELIVERY_MEMORY = timedelta(days=14)


async def webhook_secret(ctx: ServiceContext) -> str | None:
    """The App's webhook secret, or None when no App is configured."""
    async with ctx.read() as db:
        return await app_webhook_secret(db, ctx.settings)


@dataclass
class DeliveryOutcome:
    event: str
    duplicate: bool = False
    ignored: str | None = None  # why nothing was evaluated
    recorded: int = 0
    fired: list[FireOutcome] = field(default_factory=list)


def _globs(config: Mapping[str, Any], name: str) -> Sequence[str]:
    value = config.get(name) or []
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def matches(config: Mapping[str, Any], firing: HostDelivery) -> bool:
    """The trigger's filters but the repository list."""
    data = firing.data
    if firing.trigger_type == TriggerType.GITHUB_PUSH:
        branches = _globs(config, "branches")
        return not branches or any(fnmatch.fnmatchcase(data["branch"], glob) for glob in branches)
    conclusions = {c.lower() for c in _globs(config, "conclusions")} or set(DEFAULT_CONCLUSIONS)
    if (data["conclusion"] or "").lower() not in conclusions:
        return False
    names = _globs(config, "check_names")
    if names and not any(fnmatch.fnmatchcase(data["check_name"], glob) for glob in names):
        return False
    branches = _globs(config, "head_branches")
    return not branches or (
        data["branch"] is not None and any(fnmatch.fnmatchcase(data["branch"], glob) for glob in branches)
    )


async def _workspace_repositories(db: AsyncSession, workspace_id: str, every: bool) -> dict[str, str]:
    """Workspace repository id -> `owner/name`: on any host (a trigger may list a repository by its id), or,
    for a trigger that chose all repositories, those on the workspace's GitHub connection's host (none
    without a connection)."""
    if every:
        host = await db.scalar(select(GithubConnection.host).where(GithubConnection.workspace_id == workspace_id))
        return await connected_repositories(db, workspace_id, host) if host else {}
    rows = await db.execute(select(Repository.id, Repository.remote_url).where(Repository.workspace_id == workspace_id))
    return {rid: parsed[1] for rid, remote in rows if (parsed := parse_remote(remote)) is not None}


async def _record(db: AsyncSession, workspace_ids: Sequence[str], firing: HostDelivery) -> int:
    recorded = 0
    for workspace_id in workspace_ids:
        triggers = await db.scalars(live_triggers(firing.trigger_type, workspace_id))
        known: dict[bool, dict[str, str]] = {}
        for trigger in list(triggers):
            every = bool(trigger.config.get(ALL_REPOSITORIES))
            if not every and not _globs(trigger.config, "repositories"):
                continue  # an empty repository list is not evaluated
            if every not in known:
                known[every] = await _workspace_repositories(db, workspace_id, every)
            listed = evaluated_repositories(trigger.config, known[every])
            if firing.repository.lower() not in {r.lower() for r in listed}:
                continue
            if not matches(trigger.config, firing):
                continue
            recorded += await record_firing(
                db,
                workspace_id=workspace_id,
                automation_id=trigger.automation_id,
                trigger_id=trigger.id,
                trigger_type=firing.trigger_type.value,
                dedup_key=firing.dedup_key,
                data=firing.data,
            )
    return recorded


async def receive_delivery(
    ctx: ServiceContext,
    body: bytes,
    signature: str | None,
    event: str,
    delivery_id: str | None,
    *,
    source: str | None = None,
) -> DeliveryOutcome:
    """A GitHub App delivery: verified against the App's webhook secret before anything is parsed, then handled.
    Raises WebhookRefused: UNKNOWN without an App, UNAUTHENTICATED on a bad or missing signature (RATE_LIMITED
    once `source` sent too many), BAD_BODY when the verified body is not a JSON object."""
    reader = _reader()
    secret = await webhook_secret(ctx)
    if secret is None or reader is None:
        raise WebhookRefused(Refusal.UNKNOWN, "no GitHub App is configured on this server")
    if not reader.signed(secret, body, signature):
        retry_after = await count_wrong_secret(ctx, "github", source)
        if retry_after is not None:
            raise WebhookRefused(
                Refusal.RATE_LIMITED,
                "too many bad signatures from this address; a right one is still accepted",
                retry_after=retry_after,
            )
        raise WebhookRefused(Refusal.UNAUTHENTICATED, "the delivery's X-Hub-Signature-256 does not verify")
    try:
        payload = decode_json(body)
    except ValidationError:
        payload = None
    if not isinstance(payload, dict):
        raise WebhookRefused(Refusal.BAD_BODY, "the body must be a JSON object")
    return await handle_delivery(ctx, reader.read(event, payload), event, delivery_id, hashlib.sha256(body).hexdigest())


def _reader() -> DeliveryReader | None:
    host = CODE_HOSTS.get("github")
    return host.deliveries if host is not None else None


async def handle_delivery(
    ctx: ServiceContext, decided: HostDelivery | str, event: str, delivery_id: str | None, body_digest: str
) -> DeliveryOutcome:
    """Evaluate one verified delivery, as its code host read it (`decided`: why it fires nothing, as a text):
    record its firings with its delivery id and body digest, then fire them; a delivery whose id or body was
    handled before is a duplicate."""
    outcome = DeliveryOutcome(event=event)
    if isinstance(decided, str):
        outcome.ignored = decided
        return outcome
    delivery = (delivery_id or "").strip()[:MAX_DELIVERY_ID] or f"sha256:{body_digest}"
    try:
        async with ctx.unit_of_work() as uow:
            seen = await uow.db.scalar(
                select(GithubWebhookDelivery.delivery_id)
                .where(
                    or_(GithubWebhookDelivery.delivery_id == delivery, GithubWebhookDelivery.body_digest == body_digest)
                )
                .limit(1)
            )
            if seen is not None:
                outcome.duplicate = True
                return outcome
            uow.db.add(GithubWebhookDelivery(delivery_id=delivery, event=event, body_digest=body_digest))
            if decided.trigger_type == TriggerType.GITHUB_CI and isinstance(decided.data.get("sha"), str):
                await ctx.publish(uow, CheckRunCompleted("github", decided.repository, decided.data["sha"]))
            workspace_ids = list(
                await uow.db.scalars(
                    select(GithubInstallation.workspace_id)
                    .where(GithubInstallation.installation_id == decided.route)
                    .order_by(GithubInstallation.workspace_id)
                )
            )
            if not workspace_ids:
                outcome.ignored = "the installation is not routed to a workspace"
            outcome.recorded = await _record(uow.db, workspace_ids, decided)
    except IntegrityError:
        # A concurrent (re)delivery of the same id or body, or of the same firing, committed first.
        outcome.duplicate = True
        return outcome
    for workspace_id in workspace_ids if outcome.recorded else []:
        outcome.fired.extend(await deliver_pending(ctx, workspace_id))
    return outcome


async def forget_old_deliveries(ctx: ServiceContext, older_than: timedelta = DELIVERY_MEMORY) -> int:
    """Delete the delivery ids handled longer ago than `older_than`; how many."""
    async with ctx.unit_of_work() as uow:
        result = await uow.db.execute(
            delete(GithubWebhookDelivery).where(GithubWebhookDelivery.created_at < utcnow() - older_than)
        )
        return int(getattr(result, "rowcount", 0) or 0)
