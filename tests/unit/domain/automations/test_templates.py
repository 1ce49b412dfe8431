"""Automation templates fill every placeholder form from the firing, remove what does not resolve, and never
expand a value a second time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from kandev.domain.automations.templates import PR_FIELDS, TemplateContext, render

WHEN = datetime(2026, 6, 1, 9, 0, 5, 123456, tzinfo=UTC)
PAYLOAD = {
    "action": "opened",
    "count": 3,
    "ratio": 0.5,
    "draft": False,
    "merged": True,
    "closed_at": None,
    "labels": ["bug", "p1"],
    "repository": {"full_name": "acme/api", "owner": {"login": "acme"}},
    "commits": [{"id": "abc", "message": "fix: it"}, {"id": "def", "message": "docs", "files": ["a.md"]}],
    "unicode": "héllo 👋",
    "with.dot": "dotted",
    "0": "zero key",
}
RAW = '{"action": "opened", "count": 3}'
PR = {
    "number": 42,
    "title": "Fix the flake",
    "url": "https://example.test/acme/api/pull/42",
    "author": "octocat",
    "repo": "acme/api",
    "branch": "fix/flake",
    "base_branch": "main",
    "body": "Closes #41",
    "secret_token": "never rendered",
}


def context(**changes: object) -> TemplateContext:
    fields: dict[str, object] = {
        "trigger_type": "webhook",
        "trigger_timestamp": WHEN,
        "data": PAYLOAD,
        "pr": PR,
        "webhook_body": RAW,
        "webhook": PAYLOAD,
    }
    fields.update(changes)
    return TemplateContext(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("template", "rendered"),
    [
        ("{{trigger.type}}", "webhook"),
        ("{{trigger.timestamp}}", "2026-06-01T09:00:05Z"),
        ("{{data.action}}", "opened"),
        ("{{data.repository.owner.login}}", "acme"),
        ("{{data.commits.1.message}}", "docs"),
        ("{{data.count}}", "3"),
        ("{{pr.number}}", "42"),
        ("{{pr.title}}", "Fix the flake"),
        ("{{pr.url}}", "https://example.test/acme/api/pull/42"),
        ("{{pr.author}}", "octocat"),
        ("{{pr.repo}}", "acme/api"),
        ("{{pr.branch}}", "fix/flake"),
        ("{{pr.base_branch}}", "main"),
        ("{{pr.body}}", "Closes #41"),
        ("{{webhook.body}}", RAW),
        ("{{webhook.action}}", "opened"),
        ("{{webhook.commits.0.message}}", "fix: it"),
        ("{{webhook.commits.1.files.0}}", "a.md"),
        ("{{webhook.0}}", "zero key"),
        ("{{webhook.unicode}}", "héllo 👋"),
    ],
)
def test_each_placeholder_form_renders_its_value(template, rendered):
    assert render(template, context()) == rendered


def test_every_documented_pr_field_is_rendered():
    assert {name for name in PR_FIELDS if render(f"{{{{pr.{name}}}}}", context())} == set(PR) - {"secret_token"}


@pytest.mark.parametrize(
    ("template", "rendered"),
    [
        ("{{webhook.draft}}", "false"),
        ("{{webhook.merged}}", "true"),
        ("{{webhook.closed_at}}", ""),
        ("{{webhook.ratio}}", "0.5"),
        ("{{webhook.labels}}", '["bug","p1"]'),
        ("{{webhook.repository}}", '{"full_name":"acme/api","owner":{"login":"acme"}}'),
        ("{{webhook.commits.1}}", '{"id":"def","message":"docs","files":["a.md"]}'),
        ("{{webhook.unicode}}", "héllo 👋"),
    ],
)
def test_scalars_render_as_text_and_objects_and_arrays_as_compact_json(template, rendered):
    assert render(template, context()) == rendered


def test_whole_data_and_webhook_render_as_json():
    small = {"a": [1, True, None]}
    assert (
        render("{{data}} {{ webhook }}", context(data=small, webhook=small))
        == '{"a":[1,true,null]} {"a":[1,true,null]}'
    )


def test_spaces_inside_the_braces_are_ignored():
    assert (
        render("{{ trigger.type }}/{{\tdata.action\n}}/{{  webhook.commits.0.id}}", context()) == "webhook/opened/abc"
    )


def test_the_timestamp_is_given_in_utc_whatever_zone_it_came_in():
    plus_two = WHEN.astimezone(timezone(timedelta(hours=2)))
    assert render("{{trigger.timestamp}}", context(trigger_timestamp=plus_two)) == "2026-06-01T09:00:05Z"


def test_a_naive_timestamp_is_a_programming_error():
    with pytest.raises(ValueError, match="timezone-aware"):
        context(trigger_timestamp=datetime(2026, 6, 1, 9))


@pytest.mark.parametrize(
    "template",
    [
        "{{data.missing}}",
        "{{data.repository.missing.deeper}}",
        "{{data.action.length}}",
        "{{data.commits.2.message}}",
        "{{data.commits.-1.message}}",
        "{{data.commits.first}}",
        "{{data.labels.0.name}}",
        "{{data..action}}",
        "{{data.action.}}",
        "{{data.with.dot}}",
        "{{trigger}}",
        "{{trigger.id}}",
        "{{trigger.type.x}}",
        "{{pr.secret_token}}",
        "{{pr.author.login}}",
        "{{pr}}",
        "{{webhook.missing}}",
        "{{webhook.body.x}}",
        "{{unknown}}",
        "{{unknown.path}}",
        "{{}}",
        "{{  }}",
        "{{__class__}}",
        "{{data.__class__}}",
        "{{ 1 + 1 }}",
        "{{data.action | upper}}",
    ],
)
def test_an_unresolved_placeholder_is_removed(template):
    assert render(f"<{template}>", context()) == "<>"


def test_pr_and_webhook_placeholders_are_removed_on_runs_without_them():
    bare = context(trigger_type="scheduled", data={}, pr=None, webhook_body=None, webhook=None)
    template = "{{pr.number}}|{{webhook.body}}|{{webhook.action}}|{{webhook}}|{{data.x}}|{{trigger.type}}"
    assert render(template, bare) == "|||||scheduled"


def test_webhook_body_falls_back_to_the_payload_as_json_when_the_raw_text_is_not_kept():
    assert render("{{webhook.body}}", context(webhook_body=None, webhook={"b": [1, 2]})) == '{"b":[1,2]}'


def test_webhook_body_means_the_raw_body_even_when_the_payload_has_a_body_key():
    wrapped = {"body": "not json at all"}
    assert render("{{webhook.body}}", context(webhook_body="not json at all", webhook=wrapped)) == "not json at all"
    assert render("{{webhook.body}}", context(webhook_body="{}", webhook={"body": "inner"})) == "{}"


def test_a_value_holding_placeholders_is_not_expanded_again():
    payload = {"title": "{{data.secret}} {{webhook.body}} {{ trigger.type }}", "secret": "s3cret"}
    rendered = render("Title: {{webhook.title}}", context(data=payload, webhook=payload))
    assert rendered == "Title: {{data.secret}} {{webhook.body}} {{ trigger.type }}"


def test_a_value_cannot_join_surrounding_braces_into_a_placeholder():
    payload = {"open": "{", "close": "}", "inner": "data.secret", "secret": "s3cret"}
    template = "{{{webhook.open}}{webhook.inner}{{webhook.close}}}"
    assert render(template, context(data=payload, webhook=payload)) == "{{{webhook.inner}}}"


def test_text_around_and_between_placeholders_is_kept_as_it_is():
    template = "Run {{trigger.type}} at {{trigger.timestamp}}: {{ data.action }} {not a placeholder} {{ unclosed"
    assert render(template, context()) == "Run webhook at 2026-06-01T09:00:05Z: opened {not a placeholder} {{ unclosed"


def test_a_template_without_placeholders_is_returned_unchanged():
    assert (
        render("Nightly dependency check, no placeholders.", context()) == "Nightly dependency check, no placeholders."
    )


def test_a_large_payload_is_bounded_in_the_output():
    huge = {"blob": "é" * 600_000}
    rendered = render("{{webhook.blob}}" * 1000, context(webhook=huge), limit=1_000_001)
    assert len(rendered.encode()) <= 1_000_001 and set(rendered) == {"é"}
    assert len(render("x{{webhook.blob}}", context(webhook=huge), limit=10)) == 5  # "x" and four whole characters


def test_the_default_bound_is_the_prompt_limit():
    rendered = render("{{webhook.blob}}{{webhook.blob}}", context(webhook={"blob": "a" * 700_000}))
    assert len(rendered) == 1024 * 1024


def test_payload_text_that_could_not_be_stored_is_made_storable():
    payload = {"nul": "a\x00b", "surrogate": "x\udfffy"}
    assert render("{{webhook.nul}}|{{webhook.surrogate}}", context(webhook=payload)) == "ab|x?y"


def test_non_json_values_in_trigger_data_render_as_text():
    data = {"when": datetime(2026, 1, 2, tzinfo=UTC), "nested": {"when": datetime(2026, 1, 2, tzinfo=UTC)}}
    assert render("{{data.when}}", context(data=data)) == "2026-01-02 00:00:00+00:00"
    assert render("{{data.nested}}", context(data=data)) == '{"when":"2026-01-02 00:00:00+00:00"}'


def test_a_top_level_array_payload_is_indexed():
    assert render("{{webhook.1.id}}", context(webhook=[{"id": "a"}, {"id": "b"}])) == "b"
