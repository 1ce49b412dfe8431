"""The GitHub App's webhook deliveries, checked and read (the CodeHost port's DeliveryReader).

The signature (`X-Hub-Signature-256`, HMAC-SHA256 of the raw body with the App's webhook secret) is the only
credential. Two events fire triggers:
- push: a branch push (`refs/heads/...`); deletions are ignored. Fired once per repository, branch and head SHA.
- check_run: a completed check run. Fired once per repository and check-run id.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from typing import Any

from kandev.domain.ports import HostDelivery
from kandev.models.enums import TriggerType

SIGNATURE_PREFIX = "sha256="
_NO_SHA = "0" * 40


def signature_of(secret: str, body: bytes) -> str:
    """What GitHub sends as `X-Hub-Signature-256` for `body` under `secret`."""
    return SIGNATURE_PREFIX + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _push(payload: Mapping[str, Any], route: int, repository: str) -> HostDelivery | str:
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
        "before": _text(payload.get("before")),
        "pusher": pusher.get("name") if isinstance(pusher, Mapping) else None,
        "compare_url": _text(payload.get("compare")),
        "message": head.get("message") if isinstance(head, Mapping) else None,
    }
    key = f"github_push:{repository.lower()}:{branch}:{sha}"
    return HostDelivery(TriggerType.GITHUB_PUSH, route, repository, key, data)


def _check_run(payload: Mapping[str, Any], route: int, repository: str) -> HostDelivery | str:
    if payload.get("action") != "completed":
        return "the check run is not completed"
    run = payload.get("check_run")
    if not isinstance(run, Mapping) or not isinstance(run.get("id"), int):
        return "no check run"
    suite = run.get("check_suite")
    data = {
        "repository": repository,
        "branch": _text(suite.get("head_branch")) if isinstance(suite, Mapping) else None,
        "sha": _text(run.get("head_sha")),
        "check_run_id": run["id"],
        "check_name": _text(run.get("name")) or "",
        "conclusion": _text(run.get("conclusion")),
        "url": _text(run.get("html_url")),
    }
    key = f"github_ci:{repository.lower()}:check_run:{run['id']}"
    return HostDelivery(TriggerType.GITHUB_CI, route, repository, key, data)


_EVENTS = {"push": _push, "check_run": _check_run}


class GitHubDeliveries:
    def signed(self, secret: str, body: bytes, signature: str | None) -> bool:
        if not signature:
            return False
        # Header values arrive latin-1 decoded: compare bytes, so no input can make compare_digest raise.
        return hmac.compare_digest(signature_of(secret, body).encode(), signature.strip().encode("latin-1", "replace"))

    def read(self, event: str, payload: Mapping[str, Any]) -> HostDelivery | str:
        reader = _EVENTS.get(event)
        if reader is None:
            return "not a push or check_run event"
        installation = payload.get("installation")
        route = installation.get("id") if isinstance(installation, Mapping) else None
        repo = payload.get("repository")
        repository = repo.get("full_name") if isinstance(repo, Mapping) else None
        if not isinstance(route, int) or not isinstance(repository, str) or "/" not in repository:
            return "no installation or repository"
        return reader(payload, route, repository)
