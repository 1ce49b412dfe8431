"""A board card's preview line: plain text, one line, bounded."""

from __future__ import annotations

from kandev.domain.tasks.activity import PREVIEW_CHARS, preview_line


def test_the_preview_drops_markup_code_blocks_and_html_and_keeps_link_words():
    text = (
        "## Done\n\n**Fixed** the `parser`: see [the PR](https://x.test/1).\n"
        "```py\nsecret()\n```\n<img src=x onerror=alert(1)>"
    )
    assert preview_line(text) == "Done Fixed the parser: see the PR."


def test_a_long_message_is_cut_at_a_word_with_an_ellipsis():
    line = preview_line("word " * 100)
    assert line is not None and line.endswith("…") and len(line) <= PREVIEW_CHARS
    assert "wor…" not in line  # never in the middle of a word


def test_a_message_of_only_markup_has_no_preview():
    assert preview_line("```\ncode only\n```\n\n  ") is None
