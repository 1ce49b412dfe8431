"""Which provider a task repository's remote belongs to: github.com, a host named like GitLab, and the hosts
of the workspace's GitHub and GitLab connections (GitHub Enterprise, a self-managed GitLab)."""

from __future__ import annotations

import pytest

from kandev.domain.sessions.tool_profiles import CAPABILITY_TOOLS, Capability, provider_of


@pytest.mark.parametrize(
    ("remote", "expected"),
    [
        ("https://github.com/acme/app.git", "github"),
        ("git@github.com:acme/app.git", "github"),
        ("https://gitlab.com/group/sub/app.git", "gitlab"),
        ("https://code.example/group/app.git", None),
        ("", None),
        (None, None),
    ],
)
def test_well_known_hosts_need_no_connection(remote, expected):
    assert provider_of(remote) == expected


def test_the_workspaces_connected_hosts_count_and_others_do_not():
    assert provider_of("https://code.example/group/app.git", gitlab_host="code.example") == "gitlab"
    assert provider_of("ssh://git@CODE.example:2222/group/app.git", gitlab_host="code.example") == "gitlab"
    assert provider_of("https://ghe.example/acme/app.git", github_host="ghe.example") == "github"
    assert provider_of("https://other.example/acme/app.git", "code.example", "ghe.example") is None


def test_the_provider_groups_declare_their_tools():
    assert CAPABILITY_TOOLS[Capability.GITHUB_PR] == (
        "get_task_pr_automation_kandev",
        "update_task_pr_automation_kandev",
    )
    assert CAPABILITY_TOOLS[Capability.GITLAB_MR] == (
        "get_task_mr_automation_kandev",
        "update_task_mr_automation_kandev",
    )
