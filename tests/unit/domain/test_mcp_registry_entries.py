"""Reading MCP Registry metadata: publisher text stays bounded plain text, secrets are bound by reference, and
only active entries with an exact npm version or an http(s) remote are installable."""

from __future__ import annotations

import pytest

from kandev.domain.mcp.registry_entries import parse_entry, parse_page, plain


def test_publisher_text_loses_control_characters_and_is_cut_to_length() -> None:
    assert plain("a\x00b\u202ec <b>d</b>", 100) == "abc <b>d</b>"
    assert len(plain("x" * 5000, 1000)) == 1000
    assert plain({"not": "text"}, 10) == ""


def test_a_header_template_binds_each_placeholder_to_a_workspace_secret() -> None:
    remote = {"type": "streamable-http", "url": "https://a.test/mcp"}
    remote["headers"] = [{"name": "Authorization", "value": "Bearer {api_key}", "isSecret": True}]
    entry = parse_entry({"server": {"name": "io.a/x", "version": "1.0.0", "remotes": [remote]}})
    assert entry is not None
    option = entry.options[0]
    assert option.bindings == {"Authorization": "Bearer ${secret:API_KEY}"} and option.secrets == ["API_KEY"]


@pytest.mark.parametrize(
    ("server", "installable"),
    [
        ({"remotes": [{"type": "streamable-http", "url": "https://a.test/mcp"}]}, True),
        ({"remotes": [{"type": "streamable-http", "url": "https://u:p@a.test/mcp"}]}, False),
        ({"remotes": [{"type": "stdio", "url": "https://a.test/mcp"}]}, False),
        ({"packages": [{"registryType": "npm", "identifier": "a-mcp", "version": "1.0.0"}]}, True),
        ({"packages": [{"registryType": "npm", "identifier": "a-mcp", "version": "latest"}]}, False),
        ({"packages": [{"registryType": "oci", "identifier": "a/b", "version": "1.0.0"}]}, False),
        ({"status": "deprecated", "remotes": [{"type": "sse", "url": "https://a.test/s"}]}, False),
    ],
)
def test_only_active_exact_npm_versions_and_http_remotes_are_installable(server: dict, installable: bool) -> None:
    entry = parse_entry({"name": "io.a/x", "version": "1.0.0", **server})
    assert entry is not None and entry.installable is installable


def test_a_page_that_is_not_a_server_list_is_refused_and_a_cursor_is_bounded() -> None:
    with pytest.raises(ValueError):
        parse_page({"items": []})
    entries, cursor = parse_page({"servers": [{"name": "io.a/x"}, "junk", {}], "metadata": {"nextCursor": "c" * 501}})
    assert [e.name for e in entries] == ["io.a/x"] and cursor is None
