"""One GitHub pass over a workspace: poll its PR triggers, refresh its task pull-request links (whose merges
feed the merged-PR trigger), then fire what those passes recorded (kandev.domain.github.firings)."""

from __future__ import annotations

import logging

from kandev.adapters.github.client import GitHubError
from kandev.domain.automations.firing import FireOutcome
from kandev.domain.context import ServiceContext
from kandev.domain.github.firings import deliver_pending
from kandev.domain.github.links import sync_task_pull_requests
from kandev.domain.github.pull_requests import poll_pull_requests

log = logging.getLogger("kandev.adapters.github.sweep")


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
