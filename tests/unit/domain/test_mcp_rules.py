"""The checks of a workspace MCP definition: exact npm versions, safe URLs, secret-bound headers."""

from __future__ import annotations

import pytest

from kandev.domain.errors import ValidationError
from kandev.domain.mcp.rules import check_headers, check_url, clean_server_name, split_package
from kandev.runtime.mcp_delivery import tarball_name


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("pkg@1.2.3", ("pkg", "1.2.3")),
        ("@scope/pkg@0.0.86", ("@scope/pkg", "0.0.86")),
        ("a@1.0.0-rc.1", ("a", "1.0.0-rc.1")),
    ],
)
def test_an_exact_package_version_splits_into_name_and_version(spec: str, expected: tuple[str, str]) -> None:
    assert split_package(spec) == expected


@pytest.mark.parametrize(
    "spec", ["pkg", "pkg@1", "pkg@1.x", "pkg@~1.2.3", "pkg@>=1.0.0", "pkg@next", "@scope/pkg", "Bad@1.0.0"]
)
def test_ranges_tags_and_bad_names_are_refused(spec: str) -> None:
    with pytest.raises(ValidationError) as refused:
        split_package(spec)
    assert refused.value.fields["field"] == "package"


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "https://u:p@h/", "https://h/${secret:X}", "https:///nohost", "http://h:99999/"]
)
def test_unsafe_urls_are_refused(url: str) -> None:
    with pytest.raises(ValidationError):
        check_url(url)


def test_headers_must_bind_a_secret_and_names_must_be_tokens() -> None:
    assert check_headers({"Authorization": "Bearer ${secret:T}"}) == {"Authorization": "Bearer ${secret:T}"}
    for headers in (
        {"Authorization": "Bearer literal"},
        {"X": "${secret:T}\r\nInjected: 1"},
        {"Bad Name": "${secret:T}"},
    ):
        with pytest.raises(ValidationError):
            check_headers(headers)


def test_kandev_is_a_reserved_server_name() -> None:
    with pytest.raises(ValidationError):
        clean_server_name("Kandev")
    assert clean_server_name(" docs-2 ") == "docs-2"


def test_the_tarball_name_is_what_npm_pack_writes() -> None:
    assert tarball_name("@kandev-test/fixture-mcp", "1.2.3") == "kandev-test-fixture-mcp-1.2.3.tgz"
