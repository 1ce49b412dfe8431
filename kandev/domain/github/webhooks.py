"""The GitHub App's webhook deliveries: push and check_run events fire the github_push and github_ci
triggers of the workspaces the delivery's installation is routed to (github_installations).

The signature (`X-Hub-Signature-256`, HMAC-SHA256 of the raw body with the App's webhook secret) is the
only credential and is checked, in constant time, before the body is parsed. A delivery is handled once: by
its `X-GitHub-Delivery` id, and by the SHA-256 of its signed body, so a captured delivery sent again under a
made-up id is a duplicate too (the signature signs the body only, never the id). The firings it decides are
recorded in the same transaction as the delivery (kandev.domain.github.firings), then fired.

- Push: a branch push (`refs/heads/...`) to a listed repository whose branch matches a `branches` glob (none:
  any branch). Deletions are ignored. Deduplicated per repository by branch and head SHA.
- CI: a completed check run of a listed repository whose conclusion is listed (default failure), whose name
  matches a `check_names` glob and whose head branch matches a `head_branches` glob (none: any).
  Deduplicated per repository by check-run id.

An empty repository list is not evaluated (the spec's rule for webhook-driven conditions); all_repositories,
chosen explicitly, evaluates every repository of the workspace on its GitHub connection's host.
"""

from __future__ import annotations

import fnmatch
import hashlib
import hmac
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

SIGNATURE_PREFIX = "sha256="
EVENTS = {"push": TriggerType.GITHUB_PUSH, "check_run": TriggerType.GITHUB_CI}
MAX_DELIVERY_ID = 100
DEFAULT_CONCLUSIONS = ("failure",)
# How long a handled delivery id is remembered: GitHub redelivers (automatically or by hand) within days.
DELIVERY_MEMORY = timedelta(days=14)
_NO_SHA = "0" * 40


def signature_of(secret: str, body: bytes) -> str:
    return SIGNATURE_PREFIX + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def signature_ok(secret: str, body: bytes, header: str | None) -> bool:
    """Whether `X-Hub-Signature-256` is the body's HMAC-SHA256 under the secret (constant-time compare)."""
    if not header:
        return False
    # Header values arrive latin-1 decoded: compare bytes, so no input can make compare_digest raise.
    return hmac.compare_digest(signature_of(secret, body).encode(), header.strip().encode("latin-1", "replace"))


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


@dataclass(frozen=True)
class _Firing:
    trigger_type: TriggerType
    dedup_key: str
    data: dict[str, Any]


def _push(payload: Mapping[str, Any], repository: str) -> _Firing | str:
    ref = payload.get("ref")
    if not isinstance(ref, str) or not ref.startswith("refs/heads/"):
        return "not a branch push"
    sha = payload.get("after")
    if payload.get("deleted") is True or not isinstance(sha, str) or not sha or sha == _NO_SHA:
        return "a branch deletion"
    branch = ref.removeprefix("refs/heads/")
    pusher = payload.get("pusher")
    head = payload.get("head_commit")
    data = {
        "repository": repository,
        "branch": branch,
        "sha": sha,
        "before": payload.get("before") if isinstance(payload.get("before"), str) else None,
        "pusher": pusher.get("name") if isinstance(pusher, Mapping) else None,
        "compare_url": payload.get("compare") if isinstance(payload.get("compare"), str) else None,
        "message": head.get("message") if isinstance(head, Mapping) else None,
    }
    return _Firing(TriggerType.GITHUB_PUSH, f"github_push:{repository.lower()}:{branch}:{sha}", data)


def _check_run(payload: Mapping[str, Any], repository: str) -> _Firing | str:
    if payload.get("action") != "completed":
        return "the check run is not completed"
    run = payload.get("check_run")
    if not isinstance(run, Mapping) or not isinstance(run.get("id"), int):
        return "no check run"
    suite = run.get("check_suite")
    branch = suite.get("head_branch") if isinstance(suite, Mapping) else None
    data = {
        "repository": repository,
        "branch": branch if isinstance(branch, str) else None,
        "sha": run.get("head_sha") if isinstance(run.get("head_sha"), str) else None,
        "check_run_id": run["id"],
        "check_name": run.get("name") if isinstance(run.get("name"), str) else "",
        "conclusion": run.get("conclusion") if isinstance(run.get("conclusion"), str) else None,
        "url": run.get("html_url") if isinstance(run.get("html_url"), str) else None,
    }
    return _Firing(TriggerType.GITHUB_CI, f"github_ci:{repository.lower()}:check_run:{run['id']}", data)


def _globs(config: Mapping[str, Any], name: str) -> Sequence[str]:
    value = config.get(name) or []
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def matches(config: Mapping[str, Any], firing: _Firing) -> bool:
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


async def _record(db: AsyncSession, workspace_ids: Sequence[str], firing: _Firing, repository: str) -> int:
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
            if repository.lower() not in {r.lower() for r in evaluated_repositories(trigger.config, known[every])}:
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
    secret = await webhook_secret(ctx)
    if secret is None:
        raise WebhookRefused(Refusal.UNKNOWN, "no GitHub App is configured on this server")
    if not signature_ok(secret, body, signature):
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
    return await handle_delivery(ctx, event, delivery_id, payload, hashlib.sha256(body).hexdigest())


async def handle_delivery(
    ctx: ServiceContext, event: str, delivery_id: str | None, payload: Mapping[str, Any], body_digest: str
) -> DeliveryOutcome:
    """Evaluate one verified delivery: record its firings with its delivery id and body digest, then fire
    them; a delivery whose id or body was handled before is a duplicate."""
    outcome = DeliveryOutcome(event=event)
    if event not in EVENTS:
        outcome.ignored = "not a push or check_run event"
        return outcome
    installation = payload.get("installation")
    installation_id = installation.get("id") if isinstance(installation, Mapping) else None
    repo = payload.get("repository")
    repository = repo.get("full_name") if isinstance(repo, Mapping) else None
    if not isinstance(installation_id, int) or not isinstance(repository, str) or "/" not in repository:
        outcome.ignored = "no installation or repository"
        return outcome
    decided = _push(payload, repository) if event == "push" else _check_run(payload, repository)
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
                await ctx.publish(uow, CheckRunCompleted("github", repository, decided.data["sha"]))
            workspace_ids = list(
                await uow.db.scalars(
                    select(GithubInstallation.workspace_id)
                    .where(GithubInstallation.installation_id == installation_id)
                    .order_by(GithubInstallation.workspace_id)
                )
            )
            if not workspace_ids:
                outcome.ignored = "the installation is not routed to a workspace"
            outcome.recorded = await _record(uow.db, workspace_ids, decided, repository)
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
