"""The PR trigger's poller: for every enabled github_pr trigger of a connected workspace, the open pull
requests of its repositories, filtered, diffed against what the trigger last saw, and reported as the
firings it would make. Each (automation, repository, PR number, event) is reported once: the poll state
is recorded in the same transaction that decides the firings.

Events, as derived from two looks at a pull request:

- `opened`: the PR qualifies (matches every filter) for the first time for this trigger (the first poll
  reports every matching open PR; a draft excluded until it is ready is `opened` when it becomes ready);
  it supersedes any other event of the same look;
- `reopened`: seen closed (gone from the open list), open again;
- `synchronize`: its head commit changed (once per head SHA);
- `ready_for_review`: draft before, not now;
- `labeled`: a label it did not carry before (one per label; with a labels filter, only those labels);
- `edited`: its title, body or base branch changed.

One GitHub pass over a workspace: poll its PR triggers, refresh its task pull-request links (whose merges
feed the merged-PR trigger), then fire what those passes recorded (kandev.domain.github.firings)."""

from __future__ import annotations

import fnmatch
import hashlib
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from kandev.domain.automations.firing import FireOutcome
from kandev.domain.automations.references import live_triggers
from kandev.domain.automations.rules import evaluated_repositories
from kandev.domain.context import ServiceContext
from kandev.domain.github.api import GitHubError, GitHubNotFoundError, PullRequest, github_api
from kandev.domain.github.connections import workspace_token
from kandev.domain.github.firings import deliver_pending, record_firing
from kandev.domain.github.links import sync_task_pull_requests
from kandev.domain.github.repositories import connected_repositories
from kandev.models import AutomationTrigger, GithubPrPollState
from kandev.models.enums import TriggerType

log = logging.getLogger("kandev.adapters.github.poller")

MAX_KEY_DETAIL = 100


@dataclass(frozen=True)
class PullRequestFiring:
    """One firing the poller would make; `data` holds the `{{pr.*}}` fields (and event, head_sha, labels,
    draft)."""

    automation_id: str
    trigger_id: str
    repository: str
    number: int
    event: str
    dedup_key: str
    data: dict[str, Any] = field(default_factory=dict)


def pr_fields(pr: PullRequest) -> dict[str, Any]:
    """The `{{pr.*}}` template fields of a pull request."""
    fields: dict[str, Any] = {
        "number": pr.number,
        "title": pr.title,
        "url": pr.url,
        "author": pr.author,
        "repo": pr.repository,
        "branch": pr.head_branch,
        "base_branch": pr.base_branch,
        "body": pr.body,
    }
    return fields


def firing_data(firing: PullRequestFiring) -> dict[str, Any]:
    """The run's trigger data: `pr` fills `{{pr.*}}`; repository and event are also readable as `{{data.*}}`."""
    return {"pr": dict(firing.data), "repository": firing.repository, "event": firing.event}


def _lower(items: Sequence[str] | None) -> set[str]:
    return {item.lower() for item in items or ()}


def qualifies(config: Mapping[str, Any], pr: PullRequest) -> bool:
    """Every filter but the event list: base-branch globs, author logins, drafts, labels (any of them)."""
    bases = config.get("base_branches") or []
    if bases and not any(fnmatch.fnmatchcase(pr.base_branch, glob) for glob in bases):
        return False
    authors = _lower(config.get("authors"))
    if authors and pr.author.lower() not in authors:
        return False
    if config.get("exclude_drafts") and pr.draft:
        return False
    labels = _lower(config.get("labels"))
    return not labels or bool(labels & _lower(pr.labels))


def _digest(pr: PullRequest) -> str:
    return hashlib.sha256("\x00".join((pr.title, pr.body, pr.base_branch)).encode()).hexdigest()


def events_of(config: Mapping[str, Any], seen: GithubPrPollState | None, pr: PullRequest) -> list[tuple[str, str]]:
    """(event, dedup detail) pairs between the last look and this one, for a PR that qualifies now."""
    if seen is None or not seen.qualified:
        return [("opened", "")]
    found = []
    if seen.state != "open":
        found.append(("reopened", pr.updated_at.isoformat() if pr.updated_at else pr.head_sha))
    if seen.head_sha != pr.head_sha:
        found.append(("synchronize", pr.head_sha))
    if seen.draft and not pr.draft:
        found.append(("ready_for_review", pr.updated_at.isoformat() if pr.updated_at else pr.head_sha))
    before, wanted = _lower(seen.labels), _lower(config.get("labels"))
    for label in pr.labels:
        if label.lower() not in before and (not wanted or label.lower() in wanted):
            found.append(("labeled", label.lower()))
    if seen.content_digest and seen.content_digest != _digest(pr):
        found.append(("edited", _digest(pr)[:16]))
    return found


def dedup_key(repository: str, number: int, event: str, detail: str) -> str:
    key = f"github_pr:{repository.lower()}#{number}:{event}"
    if detail:
        short = detail if len(detail) <= MAX_KEY_DETAIL else hashlib.sha256(detail.encode()).hexdigest()
        key += f":{short}"
    return key


def _remember(row: GithubPrPollState, pr: PullRequest, qualified: bool) -> None:
    row.state, row.head_sha, row.draft = "open", pr.head_sha, pr.draft
    row.labels, row.content_digest, row.pr_updated_at = list(pr.labels), _digest(pr), pr.updated_at
    row.qualified = row.qualified or qualified


async def _pr_triggers(ctx: ServiceContext, workspace_id: str) -> list[AutomationTrigger]:
    async with ctx.read() as db:
        return list(await db.scalars(live_triggers(TriggerType.GITHUB_PR, workspace_id)))


async def poll_pull_requests(ctx: ServiceContext, workspace_id: str) -> list[PullRequestFiring]:
    """The PR-trigger firings of a workspace since its last poll (none without a GitHub connection).

    GitHub's refusals (token, rate limit, outage) propagate as kandev.adapters.github.client errors and record
    nothing; a repository GitHub does not know is skipped."""
    async with ctx.read() as db:
        found = await workspace_token(db, ctx.settings, workspace_id)
        if found is None:
            return []
        connection, token = found
        connected = await connected_repositories(db, workspace_id, connection.host)
    triggers = await _pr_triggers(ctx, workspace_id)
    if not triggers:
        return []
    plan = {t.id: evaluated_repositories(t.config, connected) for t in triggers}
    open_prs: dict[str, list[PullRequest]] = {}
    async with github_api(ctx.settings.github_api_url, token) as client:
        for repository in dict.fromkeys(r for repos in plan.values() for r in repos):
            try:
                open_prs[repository] = await client.open_pull_requests(repository)
            except GitHubNotFoundError:
                log.warning("GitHub does not know repository %s (or the token can not see it)", repository)
    try:
        return await _record(ctx, workspace_id, triggers, plan, open_prs)
    except IntegrityError:
        # A concurrent poll of this workspace recorded these pull requests first and reported their events.
        log.info("a concurrent GitHub poll of workspace %s got there first", workspace_id)
        return []


async def _record(
    ctx: ServiceContext,
    workspace_id: str,
    triggers: list[AutomationTrigger],
    plan: dict[str, list[str]],
    open_prs: dict[str, list[PullRequest]],
) -> list[PullRequestFiring]:
    """Diff each listed PR against its poll state, record the new state and, in the same transaction, each
    wanted event as a pending firing (kandev.domain.github.firings); return the wanted events."""
    firings: list[PullRequestFiring] = []
    async with ctx.unit_of_work() as uow:
        ids = [t.id for t in triggers]
        states = {
            (s.trigger_id, s.repository.lower(), s.number): s
            for s in await uow.db.scalars(select(GithubPrPollState).where(GithubPrPollState.trigger_id.in_(ids)))
        }
        for trigger in triggers:
            wanted = set(trigger.config.get("events") or ["opened"])
            for repository in plan[trigger.id]:
                if repository not in open_prs:
                    continue
                listed = open_prs[repository]
                for pr in listed:
                    seen = states.get((trigger.id, repository.lower(), pr.number))
                    ok = qualifies(trigger.config, pr)
                    for event, detail in events_of(trigger.config, seen, pr) if ok else []:
                        if event in wanted:
                            firing = PullRequestFiring(
                                automation_id=trigger.automation_id,
                                trigger_id=trigger.id,
                                repository=pr.repository,
                                number=pr.number,
                                event=event,
                                dedup_key=dedup_key(pr.repository, pr.number, event, detail),
                                data={
                                    **pr_fields(pr),
                                    "event": event,
                                    "head_sha": pr.head_sha,
                                    "labels": list(pr.labels),
                                    "draft": pr.draft,
                                },
                            )
                            firings.append(firing)
                            await record_firing(
                                uow.db,
                                workspace_id=workspace_id,
                                automation_id=firing.automation_id,
                                trigger_id=firing.trigger_id,
                                trigger_type=TriggerType.GITHUB_PR.value,
                                dedup_key=firing.dedup_key,
                                data=firing_data(firing),
                            )
                    if seen is None:
                        seen = GithubPrPollState(
                            trigger_id=trigger.id,
                            repository=repository,
                            number=pr.number,
                            automation_id=trigger.automation_id,
                            qualified=False,
                        )
                        uow.db.add(seen)
                    _remember(seen, pr, ok)
                still_open = {pr.number for pr in listed}
                for (trigger_id, name, number), state in states.items():
                    if trigger_id == trigger.id and name == repository.lower() and number not in still_open:
                        state.state = "closed"
    return firings


async def poll_github_now(ctx: ServiceContext, workspace_id: str) -> list[FireOutcome]:
    """Poll the workspace's pull requests and task PR links now and fire every due pending firing of it.

    GitHub refusing one pass (token, rate limit, outage) is logged and does not stop the other; the pending
    firings of earlier passes are delivered either way."""
    for name, sweep in (("PR trigger poll", poll_pull_requests), ("task PR link sync", sync_task_pull_requests)):
        try:
            await sweep(ctx, workspace_id)
        except GitHubError as error:
            log.warning("GitHub %s of workspace %s failed: %s", name, workspace_id, type(error).__name__)
    return await deliver_pending(ctx, workspace_id)
