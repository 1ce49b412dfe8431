"""The guard's parsing of hosts and addresses: what counts as loopback, what is a plain Host."""

from __future__ import annotations

import pytest

from kandev.edge.http_guard import is_loopback, is_session_token, split_host


@pytest.mark.parametrize("host", ["localhost", "LOCALHOST.", "127.0.0.1", "127.8.9.10", "::1", "[::1]"])
def test_loopback_names_and_addresses_are_loopback(host: str):
    assert is_loopback(host)


@pytest.mark.parametrize(
    "host",
    ["0.0.0.0", "::", "[::]", "192.168.1.10", "localhost.attacker.example", "::ffff:127.0.0.1", "2130706433", ""],
)
def test_every_other_address_or_name_is_not_loopback(host: str):
    assert not is_loopback(host)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("127.0.0.1:8420", ("127.0.0.1", 8420)),
        ("[::1]:80", ("::1", 80)),
        ("Kandev.LAN", ("kandev.lan", None)),
        ("kandev.lan.:443", ("kandev.lan", 443)),
    ],
)
def test_a_plain_host_splits_into_a_lower_case_name_and_a_port(value: str, expected: tuple[str, int | None]):
    assert split_host(value) == expected


@pytest.mark.parametrize(
    "value", ["", "127.0.0.1@attacker.example", "attacker.example/127.0.0.1", "a b", "host:99999", "host:x", "[zz]"]
)
def test_anything_but_a_plain_host_is_refused(value: str):
    assert split_host(value) is None


@pytest.mark.parametrize("value", ["Bearer kst_abc.def", "bearer  kst_x", "kst_raw"])
def test_a_session_token_is_recognised_with_or_without_the_bearer_scheme(value: str):
    assert is_session_token(value)


@pytest.mark.parametrize("value", [None, "", "Bearer kdv_abc", "Basic a3N0Xw==", 42])
def test_personal_access_tokens_and_other_values_are_not_session_tokens(value: object):
    assert not is_session_token(value)
