"""The built-in authoring agent's understanding of common phrasings, and its conversation rules: a confirmation
before anything is created, at most three follow-ups in a row, a hand-off to the form with what it captured."""

from __future__ import annotations

import pytest

from kandev.domain.automations.author_draft import Conversation, Draft, understand


@pytest.mark.parametrize(
    ("text", "trigger", "prompt"),
    [
        (
            "every weekday at 9, summarise yesterday's merged PRs",
            {"type": "scheduled", "expression": "0 9 * * 1-5"},
            "summarise yesterday's merged PRs",
        ),
        (
            "Check the nightly build on weekdays at 9:30pm",
            {"type": "scheduled", "expression": "30 21 * * 1-5"},
            "Check the nightly build",
        ),
        (
            "every 15 minutes ping the status page",
            {"type": "scheduled", "expression": "@every 15m"},
            "ping the status page",
        ),
        (
            "every monday at 10 plan the week",
            {"type": "scheduled", "expression": "0 10 * * 1"},
            "plan the week",
        ),
        ("daily at 12am rotate logs", {"type": "scheduled", "expression": "0 0 * * *"}, "rotate logs"),
        ("hourly: tidy the inbox", {"type": "scheduled", "expression": "@hourly"}, "tidy the inbox"),
        (
            "on each push to main run the linters",
            {"type": "github_push", "filters": {"branches": ["main"], "all_repositories": True}},
            "run the linters",
        ),
        (
            "when a pull request is opened, review it",
            {"type": "github_pr", "filters": {"events": ["opened"], "all_repositories": True}},
            "review it",
        ),
        ("triage alerts from a webhook", {"type": "webhook"}, "triage alerts"),
    ],
)
def test_common_phrasings_become_a_trigger_and_a_prompt(text, trigger, prompt):
    draft = understand(text, Draft())
    assert (draft.trigger, draft.prompt) == (trigger, prompt)


def test_a_timezone_and_a_name_are_understood_and_kept_across_messages():
    draft = understand("every day at 8 in Europe/Berlin send the digest", Draft())
    draft = understand("call it Morning digest", draft)
    assert draft.definition() == {
        "name": "Morning digest",
        "prompt": "send the digest",
        "triggers": [{"type": "scheduled", "expression": "0 8 * * *", "timezone": "Europe/Berlin"}],
    }


def test_it_asks_for_what_is_missing_then_confirms_before_creating():
    chat = Conversation()
    asked = chat.hear("summarise the merged pull requests")
    assert asked.messages[0].startswith("When should it run?") and asked.create is None
    shown = chat.hear("every weekday at 9")
    assert shown.confirm is not None and "Fires: on the schedule 0 9 * * 1-5 (UTC)" in shown.messages
    assert chat.hear("yes").create == shown.confirm


def test_a_no_at_the_confirmation_asks_what_to_change_and_nothing_is_created():
    chat = Conversation()
    chat.hear("every 2 hours check the queue")
    answer = chat.hear("no")
    assert answer.messages == ["What should change?"] and answer.create is None
    assert chat.hear("every 3 hours").confirm is not None


def test_after_three_follow_ups_in_a_row_it_recaps_instead_of_asking_and_the_fifth_message_hands_over():
    chat = Conversation()
    replies = [chat.hear(text) for text in ("hmm", "not sure", "something useful", "whatever", "still thinking")]
    assert all(r.messages[0].startswith("When should it run?") for r in replies[:3])
    assert replies[3].messages[0] == "Here is what I have so far:" and "?" not in " ".join(replies[3].messages)
    assert [r.handoff is not None for r in replies] == [False, False, False, False, True]
    assert replies[-1].messages[0].startswith("I'm having trouble — let's switch to the form")
    assert replies[-1].handoff == Draft(prompt="still thinking")
    assert chat.hear("every day").messages[0].startswith("This chat is finished")


def test_a_viable_draft_is_never_created_without_a_yes_however_long_the_chat():
    chat = Conversation()
    replies = [chat.hear(text) for text in ("every day tidy up", "no", "no", "no", "no", "no", "no")]
    assert all(r.create is None and r.handoff is None for r in replies)
    assert [bool(r.confirm) for r in replies] == [True, False, True, False, True, False, True]
    assert chat.hear("yes").create == Draft(prompt="tidy up", trigger={"type": "scheduled", "expression": "@daily"})


def test_a_yes_held_for_a_missing_credential_creates_only_on_a_later_check_or_save_it_anyway():
    """Story 4, scenario 3: the program holds a yes whose pre-flight finds a credential missing; the next word
    checks again (a create the program may hold once more), "save it anyway" creates regardless, "no" edits."""
    chat = Conversation()
    shown = chat.hear("on each push to main run the linters")
    assert shown.confirm is not None
    first = chat.hear("yes")
    assert first.create == shown.confirm and not first.anyway
    chat.hold()  # the program's pre-flight found the GitHub connection missing: nothing was created
    again = chat.hear("done, I added it")
    assert again.create == shown.confirm and not again.anyway and chat.draft.prompt == "run the linters"
    chat.hold()
    forced = chat.hear("save it anyway")
    assert forced.create == shown.confirm and forced.anyway
    edited = Conversation()
    edited.hear("every day tidy up")
    edited.hear("yes")
    edited.hold()
    assert edited.hear("no").messages == ["What should change?"]
    assert edited.hear("every hour").confirm is not None
