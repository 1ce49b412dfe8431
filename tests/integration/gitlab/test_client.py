"""The GitLab REST client against the fake: a merge request with what a task opened from it needs (source
branch, sha, state, the source project's clone URL, allow_collaboration), listings by source branch, and
typed errors that never carry the token."""

from __future__ import annotations

import pytest

from kandev.adapters.gitlab.client import GitLabClient
from kandev.domain.gitlab.api import (
    GitLabAuthError,
    GitLabNotFoundError,
    GitLabUnreachableError,
    api_url,
    undrafted_title,
)
from kandev.domain.gitlab.remotes import parse_gitlab_remote

TOKEN = "glpat-fake-good-7c1e"


async def test_a_forks_merge_request_names_the_source_projects_clone_url_and_collaboration(gitlab):
    fork = gitlab.add_project("contributor/svc")
    gitlab.add_mr(
        "group/sub/svc",
        12,
        source_branch="fix-it",
        sha="e" * 40,
        source_project_id=fork,
        allow_collaboration=True,
        state="opened",
    )
    async with GitLabClient(gitlab.url, TOKEN) as client:
        mr = await client.merge_request("group/sub/svc", 12)
    assert (mr.project, mr.iid, mr.state, mr.source_branch, mr.sha) == (
        "group/sub/svc",
        12,
        "opened",
        "fix-it",
        "e" * 40,
    )
    assert mr.source_clone_url == f"{gitlab.url}/contributor/svc.git"
    assert mr.allow_collaboration is True and mr.source_project_id == fork != mr.target_project_id


async def test_merge_requests_are_listed_by_their_source_branch(gitlab):
    gitlab.add_mr("group/svc", 1, source_branch="a")
    gitlab.add_mr("group/svc", 2, source_branch="b", state="merged")
    gitlab.add_mr("group/svc", 3, source_branch="a", state="closed")
    async with GitLabClient(gitlab.url + "/", TOKEN) as client:
        found = await client.merge_requests_by_source_branch("group/svc", "a")
    assert [(mr.iid, mr.state) for mr in found] == [(3, "closed"), (1, "opened")]


async def test_errors_are_typed_and_never_carry_the_token(gitlab):
    async with GitLabClient(gitlab.url, "glpat-wrong-0a9f31") as client:
        with pytest.raises(GitLabAuthError) as refused:
            await client.user()
    async with GitLabClient(gitlab.url, TOKEN) as client:
        with pytest.raises(GitLabNotFoundError):
            await client.merge_request("group/none", 1)
    async with GitLabClient("http://127.0.0.1:9", TOKEN) as client:
        with pytest.raises(GitLabUnreachableError) as unreachable:
            await client.user()
    assert "glpat-wrong-0a9f31" not in str(refused.value) and TOKEN not in str(unreachable.value)


async def test_a_project_path_that_could_escape_the_url_is_refused_before_any_call(gitlab):
    async with GitLabClient(gitlab.url, TOKEN) as client:
        for bad in ("../admin", "group/../x", "single", "a/b?x=1"):
            with pytest.raises(ValueError):
                await client.merge_request(bad, 1)
    assert gitlab.requests == []


def test_the_api_url_draft_titles_and_remotes_are_parsed_like_gitlab():
    assert api_url("https://gitlab.example/") == "https://gitlab.example/api/v4"
    assert api_url("https://gitlab.example/api/v4") == "https://gitlab.example/api/v4"
    assert undrafted_title("Draft: Fix") == "Fix" and undrafted_title("[Draft] Fix") == "Fix"
    assert undrafted_title("Drafting the fix") == "Drafting the fix"
    assert parse_gitlab_remote("git@gitlab.example:group/sub/svc.git") == ("gitlab.example", "group/sub/svc")
    assert parse_gitlab_remote("https://h.example/gitlab/group/svc", "/gitlab") == ("h.example", "group/svc")
    assert parse_gitlab_remote("https://h.example/only") is None
