"""The streaming redactor: secrets split across pieces and messages never come out in clear."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable

from kandev.platform.redaction import Release, StreamRedactor
from kandev.runtime.base import REDACTED

SECRET = "sk-live-0123456789abcdef"


def apply(releases: list[Release], into: dict[Hashable, str]) -> None:
    for key, text in releases:
        into[key] += text


def test_a_secret_streamed_in_four_character_pieces_is_released_redacted() -> None:
    redactor = StreamRedactor([SECRET])
    text = f"the key is {SECRET}, keep it"
    stored: dict[Hashable, str] = defaultdict(str)
    for i in range(0, len(text), 4):
        apply(redactor.feed("m1", text[i : i + 4]), stored)
        assert "0123" not in stored["m1"] and "sk-live" not in stored["m1"]
    apply(redactor.flush(), stored)
    assert stored == {"m1": f"the key is {REDACTED}, keep it"}


def test_the_last_longest_secret_minus_one_characters_are_held_until_more_text_or_the_end() -> None:
    redactor = StreamRedactor(["abcdef", "xyz"])
    assert redactor.feed("m", "hello world") == [("m", "hello ")]
    assert redactor.holding
    assert redactor.flush() == [("m", "world")]
    assert not redactor.holding


def test_a_secret_straddling_two_messages_is_replaced_in_both() -> None:
    redactor = StreamRedactor([SECRET])
    stored: dict[Hashable, str] = defaultdict(str)
    apply(redactor.feed("first", f"begin {SECRET[:10]}"), stored)
    apply(redactor.feed("second", f"{SECRET[10:]} end"), stored)
    apply(redactor.flush(), stored)
    assert stored == {"first": f"begin {REDACTED}", "second": f"{REDACTED} end"}


def test_held_text_moves_to_the_key_a_new_message_gets() -> None:
    redactor = StreamRedactor(["abcdef"])
    placeholder = object()
    assert redactor.feed(placeholder, "abc") == []
    redactor.rekey(placeholder, "m2")
    assert redactor.feed("m2", "def!") == [("m2", REDACTED)]
    assert redactor.flush() == [("m2", "!")]


def test_the_longest_secret_wins_where_secrets_overlap() -> None:
    redactor = StreamRedactor(["abc", "abcdef"])
    assert redactor.feed("m", "x abcdef y abc z") + redactor.flush() == [
        ("m", f"x {REDACTED} y "),
        ("m", f"{REDACTED} z"),
    ]


def test_without_secrets_text_passes_at_once() -> None:
    redactor = StreamRedactor(["", ""])
    assert redactor.feed("m", "abc") == [("m", "abc")]
    assert redactor.flush() == []
