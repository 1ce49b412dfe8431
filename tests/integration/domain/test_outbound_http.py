"""The server's own requests to a non-admin's URL (kandev.domain.outbound_http): checked at each use and connected
to the address that check validated, with the URL's name kept as Host and TLS name, so a name that rebinds to
loopback after it was saved reaches nothing."""

from __future__ import annotations

import ssl

import httpx
import pytest

from kandev.domain.errors import ValidationError
from kandev.domain.outbound import OutboundPolicy, allowed_hosts
from kandev.domain.outbound_http import pinned_client
from kandev.platform.settings import Settings
from tests.support.echo_server import echo_server
from tests.support.fake_dns import PUBLIC, FakeDns


def policy(dns: FakeDns, allowed: str = "") -> OutboundPolicy:
    return OutboundPolicy(allowed_hosts(Settings(mcp_allowed_hosts=allowed)), dns)


async def test_a_name_public_at_save_and_loopback_at_use_is_refused_at_use_and_nothing_is_reached(dns):
    with echo_server() as server:
        url = f"http://hooks.rebind.example:{server.port}/notify"
        dns.set("hooks.rebind.example", [PUBLIC], ["127.0.0.1"])
        rule = policy(dns)
        assert rule.check_url(url, "url").addresses == (PUBLIC,)  # saved: it looked public then
        async with pinned_client(rule, "url", timeout=5) as client:
            with pytest.raises(ValidationError) as refused:
                await client.get(url)
        assert refused.value.field == "url" and refused.value.fields["reason"] == "inward_address"
        assert server.hosts == []


async def test_each_request_resolves_once_and_connects_to_that_address_keeping_the_host_header(dns):
    with echo_server() as server:
        # Allowed by an admin: the one way a test can reach a checked address on loopback. The second answer
        # would be a dead address: the connection must use the first, the one the check saw.
        dns.set("hooks.corp.example", ["127.0.0.1"], ["127.0.0.9"])
        async with pinned_client(policy(dns, allowed="hooks.corp.example"), timeout=5) as client:
            answer = await client.get(f"http://hooks.corp.example:{server.port}/notify")
        assert answer.text == "ok"
        assert server.hosts == [f"hooks.corp.example:{server.port}"]
        assert dns.asked == ["hooks.corp.example"]


async def test_over_tls_the_name_stays_the_sni_and_the_certificate_is_checked_against_it(dns, tmp_path):
    with echo_server(tls_for="hooks.corp.example", folder=tmp_path / "tls") as server:
        dns.set("hooks.corp.example", ["127.0.0.1"])
        trust = ssl.create_default_context(cafile=server.ca_file)
        async with pinned_client(policy(dns, allowed="hooks.corp.example"), timeout=5, verify=trust) as client:
            answer = await client.get(f"https://hooks.corp.example:{server.port}/notify")
            assert answer.text == "ok"
            # A name the certificate does not carry fails the check, though it reaches the same address.
            dns.set("other.corp.example", ["127.0.0.1"])
        async with pinned_client(
            policy(dns, allowed="hooks.corp.example,other.corp.example"), timeout=5, verify=trust
        ) as client:
            with pytest.raises(httpx.ConnectError):
                await client.get(f"https://other.corp.example:{server.port}/notify")
        assert server.tls_names[0] == "hooks.corp.example" and server.hosts == [f"hooks.corp.example:{server.port}"]


async def test_a_redirect_inward_is_not_followed(dns):
    with echo_server() as server:
        async with pinned_client(policy(dns), timeout=5) as client:
            with pytest.raises(ValidationError):
                await client.get(f"http://127.0.0.1:{server.port}/")
        assert server.hosts == []
