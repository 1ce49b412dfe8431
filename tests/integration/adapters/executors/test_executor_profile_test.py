"""`testExecutorProfile`: a worker able to run the profile makes a box of it, a shell probe reports from inside
(its user, working directory, network, the Python the MCP bridge needs), and the box is removed; a box that can't
be made reports why, and a profile no live worker can run says so at once."""

from __future__ import annotations

import pytest

from kandev.models.enums import ExecutorKind
from tests.support.boxes import containers, needs

pytestmark = pytest.mark.slow

TEST = (
    "mutation($id: ID!) { testExecutorProfile(executorProfileId: $id) { __typename "
    "... on ExecutorTestPayload { ok worker findings error } ... on Error { code message } } }"
)


@pytest.mark.parametrize("kind", [ExecutorKind.DOCKER, ExecutorKind.SANDBOX], ids=lambda k: k.value)
async def test_testing_a_profile_starts_and_stops_a_box_and_reports_what_it_found(live, gql, box_profile, kind):
    needs(kind.value)
    profile = await box_profile(kind, memory_mb=256)
    report = (await gql(TEST, id=profile))["testExecutorProfile"]
    assert report["ok"] is True and report["error"] is None, report["error"]
    findings = "\n".join(report["findings"])
    assert f"{kind.value} box" in findings and "the box was stopped and removed" in findings
    assert "runs as uid:gid 619" in findings  # the workspace owner's agent identity (KANDEV_AGENT_UIDS)
    assert "writable" in findings and "NOT writable" not in findings
    assert "network interfaces: lo" in findings  # no network but its own loopback
    assert "the kandev MCP bridge can run" in findings
    assert not await containers(**{"kandev.session": f"probe-{profile}"})


async def test_a_profile_whose_box_cannot_be_made_reports_the_cause(live, gql, box_profile):
    needs("docker")
    profile = await box_profile(ExecutorKind.DOCKER, image="kandev-test-missing:never")
    report = (await gql(TEST, id=profile))["testExecutorProfile"]
    assert report["ok"] is False and "kandev-test-missing:never is not on this worker" in report["error"], report


async def test_a_profile_no_live_worker_can_run_says_so_at_once(gql, services, workspace_id):
    profile = await services.executor_profiles.create(
        workspace_id, "Far away", ExecutorKind.DOCKER, {"image": "x:1", "capabilities": ["t-nobody-has-this"]}
    )
    report = (await gql(TEST, id=profile.id))["testExecutorProfile"]
    assert report == {
        "__typename": "ExecutorTestPayload",
        "ok": False,
        "worker": None,
        "findings": [],
        "error": "no live worker offers docker, t-nobody-has-this",
    }
