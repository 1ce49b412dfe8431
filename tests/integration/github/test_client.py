"""The GitHub REST client against the fake API: auth, Link pagination, typed errors without the token."""

from __future__ import annotations

import time

import httpx
import pytest

from kandev.adapters.github.client import GitHubClient
from kandev.domain.automations.templates import PR_FIELDS
from kandev.domain.github.api import (
    GitHubAuthError,
    GitHubNotFoundError,
    GitHubRateLimitedError,
    GitHubUnreachableError,
    PullRequest,
)
from kandev.domain.github.pull_requests import pr_fields
from kandev.domain.github.remotes import api_host, parse_remote
from tests.support.server import free_port

TOKEN = "good-token"


async def test_the_client_reads_the_tokens_user(github):
    async with GitHubClient(github.url, TOKEN) as client:
        assert (await client.user()).login == "octocat"


async def test_open_pull_requests_follow_link_pagination_across_pages(github):
    github.page_size = 2
    for n in range(1, 6):
        github.add_pr("acme/widgets", n, head=f"b{n}", labels=["bug"] if n == 3 else [], draft=n == 4)
    github.add_pr("acme/widgets", 6, state="closed")
    async with GitHubClient(github.url, TOKEN) as client:
        prs = await client.open_pull_requests("acme/widgets")
    assert [pr.number for pr in prs] == [1, 2, 3, 4, 5]
    assert prs[2].labels == ("bug",) and prs[3].draft and prs[0].head_branch == "b1"
    assert prs[0].base_branch == "main" and prs[0].author == "octocat" and prs[0].updated_at is not None
    assert sum(path.endswith("/pulls") for path in github.requests) == 3


async def test_a_pull_request_by_number_by_head_branch_and_its_check_runs(github):
    github.add_pr("acme/widgets", 7, head="kandev/fix", head_sha="b" * 40)
    github.merge_pr("acme/widgets", 7)
    github.check_runs[("acme/widgets", "b" * 40)] = [
        {"id": 11, "name": "ci", "status": "completed", "conclusion": "failure", "head_sha": "b" * 40}
    ]
    async with GitHubClient(github.url, TOKEN) as client:
        pr = await client.pull_request("acme/widgets", 7)
        by_head = await client.pull_requests_by_head("acme/widgets", "kandev/fix")
        none = await client.pull_requests_by_head("acme/widgets", "other")
        runs = await client.check_runs("acme/widgets", "b" * 40)
    assert pr.status == "merged" and pr.merged_at is not None
    assert [p.number for p in by_head] == [7] and none == []
    assert [(r.id, r.conclusion) for r in runs] == [(11, "failure")]


async def test_a_refused_token_is_an_auth_error_whose_text_never_carries_the_token(github):
    secret = "ghp_ThisIsTheSecretValue123"
    async with GitHubClient(github.url, secret) as client:
        with pytest.raises(GitHubAuthError) as refused:
            await client.user()
    assert refused.value.status == 401
    assert secret not in str(refused.value) and secret not in repr(refused.value.args)


async def test_an_unknown_repository_is_not_found(github):
    async with GitHubClient(github.url, TOKEN) as client:
        with pytest.raises(GitHubNotFoundError):
            await client.open_pull_requests("acme/nothing")


async def test_a_spent_rate_limit_says_when_it_resets(github):
    reset = int(time.time()) + 600
    github.rate_limited_until = reset
    async with GitHubClient(github.url, TOKEN) as client:
        with pytest.raises(GitHubRateLimitedError) as limited:
            await client.user()
    assert limited.value.reset_at is not None and int(limited.value.reset_at.timestamp()) == reset


async def test_an_unreachable_api_is_a_typed_error_without_the_token():
    secret = "ghp_AnotherSecretValue456"
    async with GitHubClient(f"http://127.0.0.1:{free_port()}", secret, timeout=2) as client:
        with pytest.raises(GitHubUnreachableError) as failed:
            await client.user()
    assert secret not in str(failed.value)


async def test_a_repository_that_is_not_owner_slash_name_is_refused_before_any_request(github):
    async with GitHubClient(github.url, TOKEN) as client:
        with pytest.raises(ValueError):
            await client.open_pull_requests("../../user")
    assert github.requests == []


async def test_a_next_link_to_another_origin_is_not_followed_with_the_token():
    seen_hosts: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen_hosts.append(request.url.host)
        return httpx.Response(200, json=[], headers={"link": '<https://evil.example/steal?page=2>; rel="next"'})

    async with GitHubClient("https://api.github.com", TOKEN, transport=httpx.MockTransport(answer)) as client:
        with pytest.raises(GitHubUnreachableError):
            await client.open_pull_requests("acme/widgets")
    assert seen_hosts == ["api.github.com"]


def test_remote_urls_give_their_host_and_repository():
    assert parse_remote("https://github.com/acme/widgets.git") == ("github.com", "acme/widgets")
    assert parse_remote("git@GitHub.com:acme/widgets.git") == ("github.com", "acme/widgets")
    assert parse_remote("ssh://git@github.com:22/acme/widgets") == ("github.com", "acme/widgets")
    assert parse_remote("file:///srv/acme/widgets") is None and parse_remote(None) is None
    assert api_host("https://api.github.com") == "github.com"
    assert api_host("https://ghe.example.com/api/v3") == "ghe.example.com"


def test_the_pr_fields_are_exactly_the_template_pr_placeholders():
    pr = PullRequest("acme/widgets", 1, "t", "b", "u", "a", False, "open", (), "h", "s", "main", None, None)
    assert set(pr_fields(pr)) == PR_FIELDS
