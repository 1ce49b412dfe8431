"""The shared input rules: unstorable text is named by its path, prompts and env are bounded, JSON bytes decode
with a reason for each refusal."""

from __future__ import annotations

import pytest

from kandev.domain.errors import ValidationError
from kandev.domain.validation import (
    MAX_ENV_ENTRIES,
    MAX_ENV_VALUE_BYTES,
    MAX_JSON_DEPTH,
    MAX_PROMPT_BYTES,
    check_env,
    check_prompt,
    decode_json,
    text_problem,
    tree_problems,
)


def test_plain_text_including_emoji_and_escapes_has_no_problem():
    assert text_problem("héllo 👋\t\n\\u0000") is None


def test_nul_and_lone_surrogates_are_problems():
    assert text_problem("a\x00b") == "must not contain NUL characters"
    assert "surrogate" in (text_problem("a\udfffb") or "")


def test_tree_problems_name_the_path_of_each_bad_string_and_key():
    value = {"title": "ok", "sources": [{"path": "x\x00"}], "env": {"K\x00": "v"}, "n": 2**70}
    assert [field for field, _ in tree_problems(value, "")] == ["sources[0].path", "env"]


def test_a_prompt_is_measured_in_utf8_bytes():
    check_prompt("é" * (MAX_PROMPT_BYTES // 2))
    with pytest.raises(ValidationError) as refused:
        check_prompt("é" * (MAX_PROMPT_BYTES // 2) + "x")
    assert refused.value.field == "prompt"


@pytest.mark.parametrize(
    ("env", "field"),
    [
        ({f"K{i}": "" for i in range(MAX_ENV_ENTRIES + 1)}, "env"),
        ({"BIG": "v" * (MAX_ENV_VALUE_BYTES + 1)}, "env.BIG"),
        ({"NUL": "a\x00"}, "env.NUL"),
    ],
)
def test_env_beyond_its_bounds_is_refused_naming_the_field(env, field):
    with pytest.raises(ValidationError) as refused:
        check_env(env)
    assert refused.value.field == field


def test_env_at_its_bounds_is_accepted():
    check_env({f"K{i}": "v" * MAX_ENV_VALUE_BYTES for i in range(MAX_ENV_ENTRIES)})


def nested(depth: int) -> str:
    return '{"a":' * (depth - 1) + "[]" + "}" * (depth - 1)


def test_decode_json_takes_values_nested_up_to_the_limit_and_refuses_deeper_ones_by_reason():
    assert decode_json(nested(MAX_JSON_DEPTH).encode()) is not None
    with pytest.raises(ValidationError) as deeper:
        decode_json(nested(MAX_JSON_DEPTH + 1))
    with pytest.raises(ValidationError) as recursing:
        decode_json("[" * 100_000 + "]" * 100_000)
    for refused in (deeper.value, recursing.value):
        assert (refused.field, refused.fields["reason"], refused.fields["limit"]) == (
            "body",
            "too_deep",
            MAX_JSON_DEPTH,
        )


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b'{"a": "\xff"}', "invalid_utf8"),
        (b'{"a": ', "invalid_json"),
        (b'{"a": NaN}', "invalid_json"),
        (b"", "invalid_json"),
    ],
)
def test_decode_json_names_why_bytes_are_no_json_value(raw, reason):
    with pytest.raises(ValidationError) as refused:
        decode_json(raw, field="variables")
    assert (refused.value.field, refused.value.fields["reason"]) == ("variables", reason)
    assert "variables" in refused.value.message
