"""The outbound rule: a URL whose host is, or resolves to, anything but a public address is refused, however the
address is written or wrapped; an admin's allowed host passes; refusals name the field and echo nothing."""

from __future__ import annotations

import json

import pytest

from kandev.domain.errors import ValidationError
from kandev.domain.outbound import OutboundPolicy, allowed_hosts, inward
from kandev.platform.settings import Settings
from tests.support.fake_dns import PUBLIC, PUBLIC_V6, FakeDns

INWARD_ADDRESSES = [
    "127.0.0.1",
    "127.255.255.254",
    "0.0.0.0",
    "10.0.0.1",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "169.254.169.254",  # cloud metadata
    "100.64.0.1",  # shared (carrier-grade NAT)
    "224.0.0.1",
    "239.255.255.250",
    "255.255.255.255",
    "::1",
    "::",
    "fe80::1",
    "fe80::1%eth0",
    "fc00::1",
    "fd12:3456::1",
    "fec0::1",  # site-local
    "ff02::1",
    "::ffff:127.0.0.1",  # IPv4-mapped
    "::ffff:169.254.169.254",
    "::ffff:10.1.2.3",
    "::127.0.0.1",  # IPv4-compatible
    "2002:7f00:1::",  # 6to4 of 127.0.0.1
    "2002:a9fe:a9fe::1",  # 6to4 of the metadata address
    "64:ff9b::a9fe:a9fe",  # NAT64 of the metadata address
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",  # Teredo
]
# Hosts written as numbers some clients read as an inward IPv4 address.
INWARD_LITERALS = ["127.1", "0x7f000001", "2130706433", "017700000001", "0177.0.0.1", "[::1]", "[::ffff:7f00:1]"]


def policy(dns: FakeDns, allowed: str = "") -> OutboundPolicy:
    return OutboundPolicy(allowed_hosts(Settings(mcp_allowed_hosts=allowed)), dns)


@pytest.mark.parametrize("address", INWARD_ADDRESSES)
def test_every_inward_address_form_is_inward(address):
    assert inward(address)


@pytest.mark.parametrize("address", [PUBLIC, PUBLIC_V6, "8.8.8.8", "2606:4700:4700::1111"])
def test_public_addresses_are_not(address):
    assert not inward(address)


@pytest.mark.parametrize("address", INWARD_ADDRESSES)
def test_a_name_resolving_to_an_inward_address_is_refused_naming_the_field_and_echoing_nothing(dns, address):
    dns.set("mcp.attacker.example", [address])
    url = "https://mcp.attacker.example/mcp?key=tok-51a9e7"
    with pytest.raises(ValidationError) as refused:
        policy(dns).check_url(url, "url")
    error = refused.value
    assert error.field == "url" and error.fields["reason"] == "inward_address"
    assert error.fields["setting"] == "KANDEV_MCP_ALLOWED_HOSTS"
    wire = json.dumps({"message": error.message, **error.wire_fields()})
    assert "tok-51a9e7" not in wire and "attacker" not in wire and address.split("%")[0] not in wire


@pytest.mark.parametrize("host", INWARD_LITERALS + ["localhost", "LOCALHOST.", "api.localhost", "169.254.169.254"])
def test_inward_hosts_written_as_numbers_or_localhost_are_refused_without_asking_dns(dns, host):
    with pytest.raises(ValidationError) as refused:
        policy(dns).check_url(f"http://{host}:8420/mcp", "headers.url")
    assert refused.value.field == "headers.url" and refused.value.message.startswith("url must not point")
    assert dns.asked == []


def test_one_inward_address_among_public_ones_refuses_the_name(dns):
    dns.set("mixed.example", [PUBLIC, "10.0.0.7", PUBLIC_V6])
    with pytest.raises(ValidationError):
        policy(dns).check_url("https://mixed.example/", "url")


def test_a_name_that_does_not_resolve_is_refused_as_such(dns):
    with pytest.raises(ValidationError) as refused:
        policy(dns).check_url("https://nothing.invalid/", "url")
    assert refused.value.fields["reason"] == "unresolvable"


def test_a_non_ascii_host_is_refused_since_the_connection_would_resolve_another_spelling(dns):
    with pytest.raises(ValidationError):
        policy(dns).check_url("https://bücher.example/", "url")


def test_a_public_name_passes_with_the_addresses_it_was_checked_with(dns):
    dns.set("mcp.example", [PUBLIC, PUBLIC_V6])
    target = policy(dns).check_url("https://MCP.example.:8443/mcp", "url")
    assert (target.host, target.port, target.addresses) == ("mcp.example", 8443, (PUBLIC, PUBLIC_V6))


def test_an_allowed_host_passes_wherever_it_resolves_and_only_that_host(dns):
    dns.set("mcp.corp.example", ["10.1.2.3"])
    dns.set("other.corp.example", ["10.1.2.4"])
    allowing = policy(dns, allowed=" MCP.corp.example , 127.0.0.1")
    assert allowing.check_url("https://mcp.corp.example/mcp", "url").addresses == ("10.1.2.3",)
    assert allowing.check_url("http://127.0.0.1:9000/", "url").addresses == ("127.0.0.1",)
    for url in ("https://other.corp.example/", "http://127.0.0.2/", "https://evil.mcp.corp.example/"):
        dns.set("evil.mcp.corp.example", ["10.1.2.5"])
        with pytest.raises(ValidationError):
            allowing.check_url(url, "url")


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1\\@mcp.example/",  # Python reads mcp.example; a WHATWG parser (Node) reads 127.0.0.1
        "http://%31%32%37.0.0.1/",  # a WHATWG parser decodes it to 127.0.0.1
        "http://0/",
        "http://[fe80::1%25eth0]/",
        "http://127.0.0.1#@mcp.example/",
        "http://mcp.example@127.0.0.1/",
    ],
)
def test_urls_that_parsers_read_differently_are_refused(dns, url):
    with pytest.raises(ValidationError):
        policy(dns).check_url(url, "url")


@pytest.mark.parametrize("url", ["ftp://mcp.example/", "file:///etc/passwd", "https:///path", "http://[::1/"])
def test_what_is_no_http_url_is_refused(dns, url):
    with pytest.raises(ValidationError) as refused:
        policy(dns).check_url(url, "url")
    assert refused.value.field == "url"
