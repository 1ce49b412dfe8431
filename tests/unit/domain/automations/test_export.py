"""automations.export's pure parts: slugs from names, their de-duplication, and remote URLs without
credentials."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from kandev.domain.automations.export import MAX_SLUG_LENGTH, slug, slugs, without_credentials
from kandev.domain.automations.records import AutomationRecord

START = datetime(2026, 1, 1, tzinfo=UTC)


def automation(id: str, name: str, age: int = 0) -> AutomationRecord:
    """An automation created `age` minutes after START."""
    at = START + timedelta(minutes=age)
    return AutomationRecord(
        id=id,
        workspace_id="w",
        name=name,
        description="",
        agent_profile_id=None,
        executor_profile_id=None,
        destination="hidden",
        workflow_id=None,
        workflow_step_id=None,
        prompt="p",
        title_template="",
        context="new_task_per_run",
        max_concurrent_runs=1,
        enabled=True,
        created_via="form",
        created_by="user:local",
        created_at=at,
        updated_at=at,
        deleted_at=None,
    )


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Nightly CI", "nightly-ci"),
        ("  --Deploy: prod / EU!  ", "deploy-prod-eu"),
        ("Café crème", "cafe-creme"),
        ("☃☃☃", "automation"),
        ("../../etc/passwd", "etc-passwd"),
        ("x" * 200, "x" * MAX_SLUG_LENGTH),
        ("a" * (MAX_SLUG_LENGTH - 1) + " b", "a" * (MAX_SLUG_LENGTH - 1)),
    ],
)
def test_a_slug_is_lowercase_ascii_words_joined_by_dashes(name, expected):
    assert slug(name) == expected


def test_automations_sharing_a_slug_are_numbered_oldest_first_skipping_every_slug_taken():
    found = slugs(
        [
            automation("c", "NIGHTLY", age=2),
            automation("a", "Nightly", age=0),
            automation("b", "Nightly 2", age=1),
            automation("d", "nightly", age=3),
        ]
    )
    assert found == {"a": "nightly", "b": "nightly-2", "c": "nightly-3", "d": "nightly-4"}


def test_adding_a_younger_automation_renames_no_existing_file():
    existing = [automation("z", "Report", age=0), automation("a", "report", age=1)]
    before = slugs(existing)
    after = slugs([*existing, automation("0", "REPORT", age=5), automation("1", "Report 2", age=6)])
    assert {k: after[k] for k in before} == before == {"z": "report", "a": "report-2"}
    assert after["0"] == "report-3"
    assert after["1"] == "report-2-2"  # its own slug was taken before it existed


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://x-access-token:ghp_abc@github.com/acme/api.git", "https://github.com/acme/api.git"),
        ("https://ghp_abc@github.com/acme/api.git", "https://github.com/acme/api.git"),
        ("ssh://git:hunter2@example.com:22/acme/api.git", "ssh://git@example.com:22/acme/api.git"),
        ("ssh://git@example.com/acme/api.git", "ssh://git@example.com/acme/api.git"),
        ("git@github.com:acme/api.git", "git@github.com:acme/api.git"),
        ("https://github.com/acme/api.git", "https://github.com/acme/api.git"),
        ("file:///srv/repos/api", "file:///srv/repos/api"),
        (None, None),
        ("", None),
    ],
)
def test_a_remote_url_loses_its_password_and_for_http_its_user(url, expected):
    assert without_credentials(url) == expected
