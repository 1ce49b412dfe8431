"""The PR trigger's poller against the fake GitHub: filters, events, dedup across polls and "all
repositories"; and task pull-request links with their merged transition."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import select

from kandev.domain.automations.records import AutomationFields, TriggerFields
from kandev.domain.github.api import GitHubAuthError
from kandev.domain.github.links import sync_task_pull_requests
from kandev.domain.github.pull_requests import PullRequestFiring, poll_pull_requests
from kandev.models import GithubPrPollState, Repository, TaskPullRequest, TaskRepository
from kandev.models.base import new_id
from kandev.models.enums import TriggerType
from kandev.platform.event_bus import task_pull_request_channel
from tests.support.factories import new_task

HOST = "127.0.0.1"


async def connect(services, workspace_id):
    await services.github.connect(workspace_id, "good-token")


async def add_repository(db, workspace_id, full_name, host=HOST):
    async with db.transaction() as session:
        repository = Repository(
            id=new_id(),
            workspace_id=workspace_id,
            name=full_name.replace("/", "-"),
            path=f"/tmp/{full_name}",
            remote_url=f"https://{host}/{full_name}.git",
        )
        session.add(repository)
    return repository.id


async def pr_automation(services, workspace_id, name="PRs", enabled=True, **filters):
    trigger = TriggerFields(type=TriggerType.GITHUB_PR, config=filters)
    saved = await services.automations.create(
        workspace_id, AutomationFields(name=name, prompt="review {{pr.url}}", triggers=[trigger], enabled=enabled)
    )
    return saved.automation.id


def seen(firings: list[PullRequestFiring]) -> list[tuple[str, int, str]]:
    return sorted((f.repository, f.number, f.event) for f in firings)


async def test_without_a_connection_the_poller_reports_nothing_and_calls_nobody(services, workspace_id, github):
    github.add_pr("acme/widgets", 1)
    await pr_automation(services, workspace_id, repositories=["acme/widgets"])
    assert await poll_pull_requests(services.ctx, workspace_id) == []
    assert github.requests == []


async def test_the_first_poll_reports_every_matching_open_pr_once_with_its_pr_fields(services, workspace_id, github):
    await connect(services, workspace_id)
    automation = await pr_automation(services, workspace_id, repositories=["acme/widgets"])
    github.add_pr("acme/widgets", 1, title="Fix", body="Body", author="alice", head="fix", base="main")
    github.add_pr("acme/widgets", 2)
    first = await poll_pull_requests(services.ctx, workspace_id)
    assert seen(first) == [("acme/widgets", 1, "opened"), ("acme/widgets", 2, "opened")]
    one = first[0]
    assert one.automation_id == automation and one.dedup_key == "github_pr:acme/widgets#1:opened"
    assert {k: one.data[k] for k in ("number", "title", "author", "repo", "branch", "base_branch", "body")} == {
        "number": 1,
        "title": "Fix",
        "author": "alice",
        "repo": "acme/widgets",
        "branch": "fix",
        "base_branch": "main",
        "body": "Body",
    }
    assert one.data["url"].endswith("/acme/widgets/pull/1")
    assert await poll_pull_requests(services.ctx, workspace_id) == []


async def test_base_branch_globs_authors_drafts_and_labels_filter(services, workspace_id, github):
    await connect(services, workspace_id)
    await pr_automation(
        services,
        workspace_id,
        repositories=["acme/widgets"],
        base_branches=["main", "release/*"],
        authors=["Alice"],
        exclude_drafts=True,
        labels=["ready"],
    )
    good = {"author": "alice", "labels": ["Ready"]}
    github.add_pr("acme/widgets", 1, base="release/1.2", **good)
    github.add_pr("acme/widgets", 2, base="develop", **good)
    github.add_pr("acme/widgets", 3, base="main", author="mallory", labels=["ready"])
    github.add_pr("acme/widgets", 4, base="main", draft=True, **good)
    github.add_pr("acme/widgets", 5, base="main", author="alice", labels=["wip"])
    github.add_pr("acme/widgets", 6, base="main", **good)
    assert seen(await poll_pull_requests(services.ctx, workspace_id)) == [
        ("acme/widgets", 1, "opened"),
        ("acme/widgets", 6, "opened"),
    ]
    # A draft excluded until it is ready qualifies then: its first qualification is `opened`.
    github.update_pr("acme/widgets", 4, draft=False)
    assert seen(await poll_pull_requests(services.ctx, workspace_id)) == [("acme/widgets", 4, "opened")]


async def test_the_saved_event_list_is_honoured_and_each_event_is_reported_once(services, workspace_id, github):
    await connect(services, workspace_id)
    await pr_automation(
        services, workspace_id, repositories=["acme/widgets"], events=["synchronize", "labeled", "ready_for_review"]
    )
    github.add_pr("acme/widgets", 1, draft=True)
    assert await poll_pull_requests(services.ctx, workspace_id) == []  # opened is not in the list
    github.update_pr("acme/widgets", 1, head_sha="b" * 40, labels=["bug"], draft=False)
    changed = await poll_pull_requests(services.ctx, workspace_id)
    assert sorted(f.event for f in changed) == ["labeled", "ready_for_review", "synchronize"]
    assert {f.dedup_key for f in changed} >= {
        "github_pr:acme/widgets#1:synchronize:" + "b" * 40,
        "github_pr:acme/widgets#1:labeled:bug",
    }
    assert await poll_pull_requests(services.ctx, workspace_id) == []
    github.update_pr("acme/widgets", 1, head_sha="c" * 40)
    assert [f.event for f in await poll_pull_requests(services.ctx, workspace_id)] == ["synchronize"]


async def test_a_closed_and_reopened_pr_is_reopened_not_opened_again(services, workspace_id, github):
    await connect(services, workspace_id)
    await pr_automation(services, workspace_id, repositories=["acme/widgets"], events=["opened", "reopened"])
    github.add_pr("acme/widgets", 1)
    assert [f.event for f in await poll_pull_requests(services.ctx, workspace_id)] == ["opened"]
    github.update_pr("acme/widgets", 1, state="closed")
    assert await poll_pull_requests(services.ctx, workspace_id) == []
    github.update_pr("acme/widgets", 1, state="open")
    assert [f.event for f in await poll_pull_requests(services.ctx, workspace_id)] == ["reopened"]


async def test_all_repositories_is_an_explicit_choice_and_an_empty_list_is_not_evaluated(
    services, db, workspace_id, github
):
    """The spec: an empty repository list produces no PR runs; "All repositories on <host>" is its own stored
    choice, evaluating every workspace repository on the connected host."""
    await connect(services, workspace_id)
    await add_repository(db, workspace_id, "acme/widgets")
    await add_repository(db, workspace_id, "acme/gadgets")
    await add_repository(db, workspace_id, "acme/elsewhere", host="gitlab.example.com")
    empty = await pr_automation(services, workspace_id, name="Empty")
    for repository in ("acme/widgets", "acme/gadgets", "acme/elsewhere"):
        github.add_pr(repository, 1)
    assert await poll_pull_requests(services.ctx, workspace_id) == []
    assert not any("/pulls" in path for path in github.requests)  # nothing was even listed
    stored = (await services.automations.get(empty)).triggers[0].config
    assert stored.get("repositories", []) == [] and not stored.get("all_repositories")

    every = await pr_automation(services, workspace_id, name="Every", all_repositories=True)
    assert (await services.automations.get(every)).triggers[0].config["all_repositories"] is True
    assert seen(await poll_pull_requests(services.ctx, workspace_id)) == [
        ("acme/gadgets", 1, "opened"),
        ("acme/widgets", 1, "opened"),
    ]


async def test_dedup_is_per_automation_and_disabled_automations_are_skipped(services, workspace_id, github):
    await connect(services, workspace_id)
    first = await pr_automation(services, workspace_id, name="A", repositories=["acme/widgets"])
    second = await pr_automation(services, workspace_id, name="B", repositories=["acme/widgets"])
    await pr_automation(services, workspace_id, name="Off", enabled=False, repositories=["acme/widgets"])
    github.add_pr("acme/widgets", 1)
    firings = await poll_pull_requests(services.ctx, workspace_id)
    assert sorted(f.automation_id for f in firings) == sorted([first, second])
    assert await poll_pull_requests(services.ctx, workspace_id) == []


async def test_an_unknown_repository_is_skipped_and_the_others_still_polled(services, workspace_id, github):
    await connect(services, workspace_id)
    await pr_automation(services, workspace_id, repositories=["acme/missing", "acme/widgets"])
    github.add_pr("acme/widgets", 3)
    assert seen(await poll_pull_requests(services.ctx, workspace_id)) == [("acme/widgets", 3, "opened")]


async def branch_task(services, db, workspace_id, repository_id, branch):
    task_id = await new_task(services, workspace_id, "Linked")
    async with db.transaction() as session:
        session.add(TaskRepository(task_id=task_id, repository_id=repository_id, branch=branch))
    return task_id


async def test_a_pr_on_a_task_branch_is_linked_and_its_merge_is_reported_once_with_an_event(
    services, db, bus, workspace_id, github
):
    await connect(services, workspace_id)
    repository = await add_repository(db, workspace_id, "acme/widgets")
    task_id = await branch_task(services, db, workspace_id, repository, "kandev/linked-1")
    other = await branch_task(services, db, workspace_id, repository, "kandev/other-2")
    github.add_pr("acme/widgets", 9, head="kandev/linked-1", base="main")
    github.add_pr("acme/widgets", 10, head="someone-else")

    async with bus.subscribe(task_pull_request_channel(workspace_id)) as events:
        linked = await sync_task_pull_requests(services.ctx, workspace_id)
        assert [(c.task_id, c.number, c.state, c.previous_state) for c in linked] == [(task_id, 9, "open", None)]
        assert await sync_task_pull_requests(services.ctx, workspace_id) == []
        github.merge_pr("acme/widgets", 9)
        merged = await sync_task_pull_requests(services.ctx, workspace_id)
        assert [(c.task_id, c.state, c.previous_state, c.merged) for c in merged] == [(task_id, "merged", "open", True)]
        received = [await asyncio.wait_for(events.__anext__(), 5) for _ in range(2)]
    assert [(e["kind"], e["state"], e["task_id"]) for e in received] == [
        ("linked", "open", task_id),
        ("updated", "merged", task_id),
    ]
    assert received[1]["merged_at"] is not None and received[1]["base_branch"] == "main"
    async with db.read() as session:
        links = list(await session.scalars(select(TaskPullRequest)))
    assert [(link.task_id, link.repository, link.number, link.state) for link in links] == [
        (task_id, "acme/widgets", 9, "merged")
    ]
    assert links[0].merged_at is not None and other not in {link.task_id for link in links}
    assert await sync_task_pull_requests(services.ctx, workspace_id) == []


async def test_a_closed_unmerged_pr_is_closed_not_merged(services, db, workspace_id, github):
    await connect(services, workspace_id)
    repository = await add_repository(db, workspace_id, "acme/widgets")
    await branch_task(services, db, workspace_id, repository, "kandev/x")
    github.add_pr("acme/widgets", 4, head="kandev/x")
    await sync_task_pull_requests(services.ctx, workspace_id)
    github.update_pr("acme/widgets", 4, state="closed")
    changes = await sync_task_pull_requests(services.ctx, workspace_id)
    assert [(c.state, c.merged) for c in changes] == [("closed", False)]


async def test_two_concurrent_first_polls_report_each_pr_once_between_them(services, workspace_id, github):
    await connect(services, workspace_id)
    await pr_automation(services, workspace_id, repositories=["acme/widgets"])
    for number in (1, 2, 3):
        github.add_pr("acme/widgets", number)
    both = await asyncio.gather(
        poll_pull_requests(services.ctx, workspace_id), poll_pull_requests(services.ctx, workspace_id)
    )
    assert sorted(f.dedup_key for firings in both for f in firings) == [
        f"github_pr:acme/widgets#{n}:opened" for n in (1, 2, 3)
    ]


async def test_a_repository_may_be_chosen_by_its_workspace_repository_id(services, db, workspace_id, github):
    await connect(services, workspace_id)
    chosen = await add_repository(db, workspace_id, "acme/widgets")
    await add_repository(db, workspace_id, "acme/gadgets")
    await pr_automation(services, workspace_id, repositories=[chosen])
    github.add_pr("acme/widgets", 1)
    github.add_pr("acme/gadgets", 1)
    assert seen(await poll_pull_requests(services.ctx, workspace_id)) == [("acme/widgets", 1, "opened")]


async def test_edits_are_reported_and_a_labels_filter_limits_labeled_to_its_labels(services, workspace_id, github):
    await connect(services, workspace_id)
    await pr_automation(
        services, workspace_id, repositories=["acme/widgets"], labels=["ready", "urgent"], events=["labeled", "edited"]
    )
    github.add_pr("acme/widgets", 1, labels=["ready"])
    assert await poll_pull_requests(services.ctx, workspace_id) == []
    github.update_pr("acme/widgets", 1, labels=["ready", "wip", "urgent"])
    assert [f.dedup_key for f in await poll_pull_requests(services.ctx, workspace_id)] == [
        "github_pr:acme/widgets#1:labeled:urgent"
    ]
    github.update_pr("acme/widgets", 1, title="Better title")
    assert [f.event for f in await poll_pull_requests(services.ctx, workspace_id)] == ["edited"]


async def test_a_revoked_token_fails_the_poll_and_records_nothing(services, db, workspace_id, github):
    await connect(services, workspace_id)
    await pr_automation(services, workspace_id, repositories=["acme/widgets"])
    github.add_pr("acme/widgets", 1)
    del github.tokens["good-token"]
    with pytest.raises(GitHubAuthError) as refused:
        await poll_pull_requests(services.ctx, workspace_id)
    assert "good-token" not in str(refused.value)
    async with db.read() as session:
        assert list(await session.scalars(select(GithubPrPollState))) == []
    github.tokens["good-token"] = "octocat"
    assert [f.event for f in await poll_pull_requests(services.ctx, workspace_id)] == ["opened"]
