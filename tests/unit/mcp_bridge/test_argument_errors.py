"""Tool-argument errors name what the schema declares and never echo the caller's own keys or values."""

from __future__ import annotations

from kandev.edge.arguments import argument_errors

SCHEMA = {
    "type": "object",
    "properties": {"title": {"type": "string"}, "env": {"type": "object"}},
    "additionalProperties": False,
}


def test_an_unknown_key_with_a_nul_value_is_reported_without_its_name():
    errors = argument_errors(SCHEMA, {"sk-live-SECRET-123": "a\x00b"})
    assert errors and not any("SECRET" in e for e in errors), errors
    assert any("an unknown field must not contain NUL" in e for e in errors), errors


def test_a_declared_field_with_a_nul_value_is_named():
    errors = argument_errors(SCHEMA, {"title": "a\x00b", "env": {"NAME": "x\x00"}})
    assert "field 'title' must not contain NUL characters" in errors, errors
    assert any(e.startswith("field 'env.NAME'") for e in errors), errors
