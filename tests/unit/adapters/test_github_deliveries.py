"""GitHub's webhook deliveries read through the code-host port: what each event fires, and what it ignores."""

from __future__ import annotations

import pytest

from kandev.adapters.github.code_host import GitHubCodeHost
from kandev.adapters.github.deliveries import GitHubDeliveries, signature_of
from kandev.domain.ports import HostDelivery
from kandev.models.enums import TriggerType

READER = GitHubDeliveries()
SHA = "a" * 40
WHERE = {"installation": {"id": 7}, "repository": {"full_name": "Acme/Widgets"}}


def test_githubs_code_host_reads_its_deliveries_with_this_reader() -> None:
    assert isinstance(GitHubCodeHost.deliveries, GitHubDeliveries)


def test_a_signature_verifies_only_for_its_body_and_secret() -> None:
    body = b'{"zen": "x"}'
    assert READER.signed("s3cret", body, signature_of("s3cret", body))
    assert not READER.signed("other", body, signature_of("s3cret", body))
    assert not READER.signed("s3cret", body + b" ", signature_of("s3cret", body))
    assert not READER.signed("s3cret", body, None)
    assert not READER.signed("s3cret", body, "sha256=\u00ff")  # a header byte no digest holds


def test_a_branch_push_fires_once_per_repository_branch_and_head() -> None:
    payload = {**WHERE, "ref": "refs/heads/release/1.0", "after": SHA, "before": "b" * 40, "pusher": {"name": "ann"}}
    read = READER.read("push", payload)
    assert isinstance(read, HostDelivery)
    assert (read.trigger_type, read.route, read.repository) == (TriggerType.GITHUB_PUSH, 7, "Acme/Widgets")
    assert read.dedup_key == f"github_push:acme/widgets:release/1.0:{SHA}"
    assert read.data["branch"] == "release/1.0" and read.data["pusher"] == "ann" and read.data["message"] is None


def test_a_completed_check_run_fires_once_per_check_run() -> None:
    run = {"id": 31, "name": "tests", "conclusion": "failure", "head_sha": SHA, "check_suite": {"head_branch": "f"}}
    read = READER.read("check_run", {**WHERE, "action": "completed", "check_run": run})
    assert isinstance(read, HostDelivery)
    assert (read.trigger_type, read.dedup_key) == (TriggerType.GITHUB_CI, "github_ci:acme/widgets:check_run:31")
    assert (read.data["branch"], read.data["conclusion"], read.data["check_name"]) == ("f", "failure", "tests")


@pytest.mark.parametrize(
    ("event", "payload", "why"),
    [
        ("issues", {**WHERE, "action": "opened"}, "not a push or check_run event"),
        ("push", {"ref": "refs/heads/main", "after": SHA}, "no installation or repository"),
        ("push", {**WHERE, "ref": "refs/tags/v1", "after": SHA}, "not a branch push"),
        ("push", {**WHERE, "ref": "refs/heads/main", "after": "0" * 40, "deleted": True}, "a branch deletion"),
        ("check_run", {**WHERE, "action": "created", "check_run": {"id": 1}}, "the check run is not completed"),
        ("check_run", {**WHERE, "action": "completed", "check_run": {"id": "1"}}, "no check run"),
    ],
)
def test_what_fires_nothing_says_why(event: str, payload: dict[str, object], why: str) -> None:
    assert READER.read(event, payload) == why
