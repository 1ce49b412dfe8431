"""What git would hand to ssh, asked of git itself (hostile spellings included), and the settings that hold a
clone to one checked address."""

from __future__ import annotations

import pytest

from kandev.domain.outbound import Target
from kandev.domain.workspace.remote_hosts import pinned, ssh_target, this_machine
from tests.support.fake_dns import PUBLIC, FakeDns


@pytest.mark.parametrize(
    ("url", "host", "path"),
    [
        ("ssh://git@code.example/acme/app.git", "git@code.example", "/acme/app.git"),
        ("git@code.example:acme/app.git", "git@code.example", "acme/app.git"),
        ("ssh://local%68ost/srv/x", "localhost", "/srv/x"),
        ("ssh://localhost%2Fsrv/x", "localhost", "/srv/x"),
        ("ssh://evil.example%40localhost/srv/x", "evil.example@localhost", "/srv/x"),
        ("ssh://localhost/%7eroot/x", "localhost", "~root/x"),
        ("ssh://localhost/srv/it's", "localhost", "/srv/it's"),
    ],
)
def test_git_says_which_host_and_path_an_ssh_remote_names(url, host, path):
    assert ssh_target(url) == (host, path)


@pytest.mark.parametrize("url", ["https://code.example/acme/app.git", "file:///srv/x", "/srv/x", "ext::sh -c id"])
def test_what_is_no_ssh_remote_is_not_asked_of_git(url):
    assert ssh_target(url) is None


def test_this_machine_is_known_by_address_name_or_what_a_name_resolves_to():
    dns = FakeDns()
    dns.set("buildbox.example", ["127.0.0.1"])
    for host in ("localhost", "LOCALHOST.", "127.0.0.2", "::1", "0.0.0.0", "::ffff:127.0.0.1", "buildbox.example"):
        assert this_machine(host, dns) is not None, host
    assert this_machine("code.example", dns) is None
    assert this_machine("10.255.255.7", dns) is None


def test_an_https_clone_is_pinned_by_curl_resolve_for_the_name_as_written_with_redirects_off():
    args, env = pinned("https://Git.Example.:8443/a.git", Target("git.example", 8443, (PUBLIC, "::1")))
    assert env == {}
    assert args == [
        "-c",
        "http.followRedirects=false",
        "-c",
        f"http.curloptResolve=git.example:8443:{PUBLIC}",
        "-c",
        f"http.curloptResolve=git.example.:8443:{PUBLIC}",
    ]
    v6, _ = pinned("https://git.example/a.git", Target("git.example", 443, ("2606:2800:220:1::1",)))
    assert v6[-1] == "http.curloptResolve=git.example:443:[2606:2800:220:1::1]"


def test_an_ssh_clone_is_pinned_by_hostname_keeping_the_host_key_name(monkeypatch):
    monkeypatch.delenv("GIT_SSH_COMMAND", raising=False)
    args, env = pinned("git@code.example:acme/app.git", Target("code.example", 22, (PUBLIC,)))
    assert args == []
    assert env == {"GIT_SSH_COMMAND": f"ssh -o HostName={PUBLIC} -o HostKeyAlias=code.example"}
    # A key alias that could smuggle shell words falls back to the checked host.
    _, env = pinned("git@code.example:a.git", Target("code.example", 22, (PUBLIC,)), key_alias="x; touch /tmp/p")
    assert env["GIT_SSH_COMMAND"].endswith("HostKeyAlias=code.example")


def test_an_allowed_host_that_did_not_resolve_is_not_pinned():
    assert pinned("https://git.example/a.git", Target("git.example", 443, ())) == ([], {})
