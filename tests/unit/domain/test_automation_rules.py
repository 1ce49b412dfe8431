"""The rules an automation's fields and triggers obey, checked without a database."""

from __future__ import annotations

import pytest

from kandev.domain.automations import rules
from kandev.domain.automations.records import TriggerFields
from kandev.domain.errors import ValidationError
from kandev.models.enums import AutomationContext, TriggerType

SCHEDULE = TriggerFields(TriggerType.SCHEDULED, config={"expression": "0 * * * *"})
PR = TriggerFields(TriggerType.GITHUB_PR)
PUSH = TriggerFields(TriggerType.GITHUB_PUSH)
WEBHOOK = TriggerFields(TriggerType.WEBHOOK)


@pytest.mark.parametrize("triggers", [[], [SCHEDULE], [PR], [SCHEDULE, PR], [PUSH, SCHEDULE], [WEBHOOK]])
def test_a_schedule_with_at_most_one_github_condition_or_a_webhook_alone_is_a_layout(triggers):
    rules.check_layout(triggers)


@pytest.mark.parametrize(
    "triggers",
    [[WEBHOOK, WEBHOOK], [WEBHOOK, SCHEDULE], [PR, WEBHOOK], [SCHEDULE, SCHEDULE], [PR, PUSH], [SCHEDULE, PR, PUSH]],
)
def test_mixed_layouts_and_repeated_kinds_are_refused_on_triggers(triggers):
    with pytest.raises(ValidationError) as refused:
        rules.check_layout(triggers)
    assert refused.value.field == "triggers"


@pytest.mark.parametrize(
    ("context", "runs"),
    [
        (AutomationContext.NEW_TASK_PER_RUN, 0),
        (AutomationContext.NEW_TASK_PER_RUN, 101),
        (AutomationContext.CONTINUE_SESSION, 2),
    ],
)
def test_concurrency_is_at_least_one_and_exactly_one_when_continuing(context, runs):
    with pytest.raises(ValidationError) as refused:
        rules.check_concurrency(context, runs)
    assert refused.value.field == "maxConcurrentRuns"


def test_a_continuing_automation_with_one_run_and_a_new_task_one_with_many_are_fine():
    rules.check_concurrency(AutomationContext.CONTINUE_SESSION, 1)
    rules.check_concurrency(AutomationContext.NEW_TASK_PER_RUN, 5)


def test_a_schedule_is_stored_as_its_normalized_expression_and_zone():
    trigger = TriggerFields(TriggerType.SCHEDULED, config={"expression": "  */5   *  * * * ", "timezone": " UTC "})
    assert rules.check_trigger(trigger, 0) == {"expression": "*/5 * * * *", "timezone": "UTC"}


def test_the_schedule_module_decides_what_an_expression_is():
    rules._check_schedule("30 8 * * *", "America/New_York")
    with pytest.raises(ValidationError):
        rules._check_schedule("not cron", "")


def test_github_filters_are_trimmed_deduplicated_and_defaulted():
    trigger = TriggerFields(
        TriggerType.GITHUB_CI,
        config={"repositories": [" acme/api ", "acme/api", ""], "conclusions": [], "check_names": ["lint"]},
    )
    assert rules.check_trigger(trigger, 1) == {
        "repositories": ["acme/api"],
        "conclusions": ["failure"],
        "check_names": ["lint"],
    }
    pr = TriggerFields(TriggerType.GITHUB_PR, config={"events": ["Opened", "synchronize"], "exclude_drafts": True})
    assert rules.check_trigger(pr, 0) == {"events": ["opened", "synchronize"], "exclude_drafts": True}


def test_an_unknown_filter_is_named_only_when_it_looks_like_a_name():
    trigger = TriggerFields(TriggerType.GITHUB_PUSH, config={"ghp_0123 secret value": ["x"], "paths": []})
    with pytest.raises(ValidationError) as refused:
        rules.check_trigger(trigger, 2)
    assert refused.value.field == "triggers[2].config"
    assert "paths" in refused.value.message and "ghp_0123" not in refused.value.message


def test_a_branch_is_one_word_of_bounded_length():
    assert rules.check_branch("  release/1.2 ", "b") == "release/1.2" and rules.check_branch("", "b") is None
    for bad in ("two words", "-flag", "x" * 201):
        with pytest.raises(ValidationError):
            rules.check_branch(bad, "repositories[0].baseBranch")


@pytest.mark.parametrize("kind", [TriggerType.GITHUB_PR, TriggerType.GITHUB_PUSH, TriggerType.GITHUB_CI])
def test_all_repositories_is_stored_as_its_own_choice_and_never_beside_a_list(kind):
    every = rules.check_trigger(TriggerFields(type=kind, config={"all_repositories": True}), 0)
    assert every["all_repositories"] is True and not every.get("repositories")
    listed = rules.check_trigger(TriggerFields(type=kind, config={"repositories": ["acme/app"]}), 0)
    assert "all_repositories" not in listed
    with pytest.raises(ValidationError) as refused:
        rules.check_trigger(TriggerFields(type=kind, config={"all_repositories": True, "repositories": ["a/b"]}), 0)
    assert refused.value.field == "triggers[0].config.all_repositories"


def test_an_empty_repository_list_evaluates_nothing_and_all_repositories_every_connected_one():
    connected = {"r1": "acme/app", "r2": "acme/Web"}
    assert rules.evaluated_repositories({"repositories": []}, connected) == []
    assert rules.evaluated_repositories({}, connected) == []
    assert rules.evaluated_repositories({"all_repositories": True}, connected) == ["acme/app", "acme/Web"]
    assert rules.evaluated_repositories({"repositories": ["r2", "acme/WEB", "x/y"]}, connected) == ["acme/WEB", "x/y"]


def test_a_webhook_stores_only_whether_it_takes_signed_deliveries_only():
    assert rules.check_trigger(WEBHOOK, 0) == {}
    assert rules.check_trigger(TriggerFields(TriggerType.WEBHOOK, config={"require_signature": False}), 0) == {}
    signed = TriggerFields(TriggerType.WEBHOOK, config={"require_signature": True})
    assert rules.check_trigger(signed, 0) == {"require_signature": True}


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"require_signature": "yes"}, "triggers[0].requireSignature"),
        ({"require_signature": 1}, "triggers[0].requireSignature"),
        ({"secret": "mine"}, "triggers[0].config"),
    ],
)
def test_a_webhook_setting_other_than_a_true_or_false_requirement_is_refused(config, field):
    with pytest.raises(ValidationError) as refused:
        rules.check_trigger(TriggerFields(TriggerType.WEBHOOK, config=config), 0)
    assert refused.value.field == field
    assert "mine" not in refused.value.message
